// Exercise 15 · sliding-window attention (§6.1, §6.2): the mask against
// its rule, the sliding chunks against the naive masked attention and the
// engine (diagnosing off-by-one windows, a forgotten previous chunk, a
// missing 1/√d), their gradients, and no T×T tensor in their graph.
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "exercises/ex15_sliding_window.h"
#include "grading_checks.h"
#include "reference/ex15_sliding_window.h"

namespace ref = ex15_reference;

namespace {

using Rule = bool (*)(int64_t t, int64_t j, int64_t window);

bool in_window(int64_t t, int64_t j, int64_t w) { return t - w < j && j <= t; }
// The usual wrong turns, as masks.
bool transposed(int64_t t, int64_t j, int64_t w) { return in_window(j, t, w); }
bool two_sided(int64_t t, int64_t j, int64_t w) { return in_window(t, j, w) || in_window(j, t, w); }
// Chunks of W that forget the previous chunk: only keys of the query's own chunk.
bool own_chunk_only(int64_t t, int64_t j, int64_t w) { return in_window(t, j, w) && t / w == j / w; }

// The [T, T] 0/1 tensor of a rule.
ag::Tensor mask_of(Rule rule, int64_t T, int64_t w) {
    std::vector<double> m;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j) m.push_back(rule(t, j, w) ? 1.0 : 0.0);
    return ag::Tensor::from({T, T}, m);
}

bool same(const ag::Tensor& a, const ag::Tensor& b, double tol = 1e-12) {
    return a.shape() == b.shape() && ag::max_abs_diff(a, b) <= tol;
}

// §6.2 (1) the naive way, in full: every T² score, -inf where the 0/1
// `visible` is 0, softmax over the row, times v.
ag::Tensor masked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, const ag::Tensor& visible,
                            double scale) {
    const ag::Tensor scores = ag::matmul(q, k.t()) * scale;
    const ag::Tensor hidden = 1.0 - visible;
    return ag::matmul(ag::softmax(ag::masked_fill(scores, hidden, -std::numeric_limits<double>::infinity())), v);
}

ag::Tensor naive(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, Rule rule, int64_t w) {
    return masked_attention(q, k, v, mask_of(rule, q.size(0), w), 1.0 / std::sqrt(static_cast<double>(q.size(1))));
}

// The engine's fused op on one head: [T, d] as [1, T, 1, d].
ag::Tensor engine(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t w) {
    const int64_t T = q.size(0), d = q.size(1);
    const auto head = [&](const ag::Tensor& x) { return x.reshape({1, T, 1, d}); };
    return ag::causal_attention(head(q), head(k), head(v), w).reshape({T, d});
}

std::string first_difference(const ag::Tensor& got, const ag::Tensor& want) {
    const int64_t T = want.size(0);
    const std::vector<double> g = got.to_vector(), e = want.to_vector();
    for (int64_t i = 0; i < T * T; ++i)
        if (g[static_cast<size_t>(i)] != e[static_cast<size_t>(i)]) {
            std::ostringstream s;
            s << "entry (t, j) = (" << i / T << ", " << i % T << "): expected " << e[static_cast<size_t>(i)] << ", got "
              << g[static_cast<size_t>(i)];
            return s.str();
        }
    return "no entry differs";
}

const char* kNoGraph =
    "your output carries no gradient: build it from engine ops (narrow, matmul, masked_fill, softmax, cat) "
    "instead of writing numbers into a tensor";

}  // namespace

TEST_CASE("ex15 window_mask is 1 exactly where t - W < j <= t") {
    for (int64_t T = 1; T <= 24; ++T)
        for (int64_t W = 1; W <= T + 2; ++W) {
            INFO("T = " << T << ", W = " << W);
            const ag::Tensor got = ex15::window_mask(T, W), want = mask_of(in_window, T, W);
            {
                INFO("expected shape [T, T], got " << ag::shape_str(got.shape()));
                REQUIRE(got.shape() == want.shape());
            }
            if (same(got, want, 0.0)) continue;
            if (same(got, mask_of(in_window, T, W + 1), 0.0))
                FAIL("your window shows W+1 tokens: query t sees j with t - W < j (strictly), W tokens with t itself");
            if (same(got, mask_of(in_window, T, W - 1), 0.0))
                FAIL("your window shows W-1 tokens: t itself is one of the W, so j runs from t - W + 1 to t");
            if (same(got, mask_of(transposed, T, W), 0.0))
                FAIL("your mask is transposed: row t is the query, column j the key (lower triangular)");
            if (same(got, mask_of(two_sided, T, W), 0.0))
                FAIL("your mask is two-sided: a causal window never shows a key j > t");
            FAIL("the mask differs from the rule t - W < j <= t at " << first_difference(got, want));
        }
}

TEST_CASE("ex15 chunked_attention equals the naive masked attention and the engine") {
    ag::Generator gen(15);
    for (int64_t T : {1, 2, 3, 5, 7, 8, 9, 12, 16, 17, 23, 31, 32, 33, 50})
        for (int64_t W : {1, 2, 3, 4, 5, 8, 13, 40}) {
            const int64_t d = 2 + 2 * (T % 3);
            const ag::Tensor q = ag::Tensor::randn({T, d}, gen), k = ag::Tensor::randn({T, d}, gen),
                             v = ag::Tensor::randn({T, d}, gen);
            INFO("T = " << T << ", W = " << W << ", d = " << d);
            const ag::Tensor got = ex15::chunked_attention(q, k, v, W), want = naive(q, k, v, in_window, W);
            {
                INFO("expected shape [T, d], got " << ag::shape_str(got.shape()));
                REQUIRE(got.shape() == want.shape());
            }
            if (!same(got, want)) {
                if (same(got, naive(q, k, v, own_chunk_only, W)))
                    FAIL("you forgot the previous chunk: a query of chunk b also sees keys of chunk b-1 "
                         "(position t sees back to t - W + 1)");
                if (same(got, naive(q, k, v, in_window, W + 1)))
                    FAIL("your queries see W+1 tokens: t - W < j <= t is W tokens, t itself included");
                if (W > 1 && same(got, naive(q, k, v, in_window, W - 1)))
                    FAIL("your queries see W-1 tokens: t - W < j <= t is W tokens, t itself included");
                if (same(got, masked_attention(q, k, v, mask_of(in_window, T, W), 1.0)))
                    FAIL("you forgot to scale the scores: q·k / √d");
                if (same(got, naive(q, k, v, in_window, T + 1)))
                    FAIL("your attention ignores the window: it is plain causal attention");
            }
            {
                INFO("max |chunked - naive masked attention| = " << ag::max_abs_diff(got, want));
                CHECK(ag::max_abs_diff(got, want) < 1e-12);
            }
            INFO("max |chunked - ag::causal_attention with the window| = " << ag::max_abs_diff(got, engine(q, k, v, W)));
            CHECK(ag::max_abs_diff(got, engine(q, k, v, W)) < 1e-12);
        }
}

TEST_CASE("ex15 chunked_attention's gradients: a gradient check and the engine's") {
    ag::Generator gen(16);
    const int64_t cases[][3] = {{7, 3, 4}, {8, 4, 2}, {5, 1, 2}, {6, 8, 4}, {10, 3, 2}, {11, 2, 6}};
    for (const auto& c : cases) {
        const int64_t T = c[0], W = c[1], d = c[2];
        INFO("T = " << T << ", W = " << W << ", d = " << d);
        std::vector<ag::Tensor> qkv;
        for (int i = 0; i < 3; ++i) qkv.push_back(ag::Tensor::randn({T, d}, gen, 0.0, 1.0, true));
        const ag::Tensor out = ex15::chunked_attention(qkv[0], qkv[1], qkv[2], W);
        if (!out.requires_grad()) FAIL(kNoGraph);
        const ag::GradcheckResult check = ag::gradcheck(
            [W](const std::vector<ag::Tensor>& x) { return ex15::chunked_attention(x[0], x[1], x[2], W); }, qkv);
        {
            INFO("gradient check: " << check.message << " (max error " << check.max_abs_error << ")");
            CHECK(check.ok);
        }

        // dL/dq, dL/dk, dL/dv of L = Σ out ⊙ w against the engine's.
        const ag::Tensor w = ag::Tensor::randn({T, d}, gen);
        ag::sum(out * w).backward();
        std::vector<ag::Tensor> leaves;
        for (const ag::Tensor& x : qkv) leaves.push_back(x.detach().clone().requires_grad_());
        ag::sum(engine(leaves[0], leaves[1], leaves[2], W) * w).backward();
        for (size_t i = 0; i < 3; ++i) {
            INFO("the gradient of " << "qkv"[i] << " (the engine's is the expected one)");
            REQUIRE(qkv[i].grad().defined());
            CHECK(ag::max_abs_diff(qkv[i].grad(), leaves[i].grad()) < 1e-10);
        }
    }
}

TEST_CASE("ex15 chunked_attention never builds a T x T tensor") {
    ag::Generator gen(17);
    const int64_t T = 240, W = 4, d = 4;
    std::vector<ag::Tensor> qkv;
    for (int i = 0; i < 3; ++i) qkv.push_back(ag::Tensor::randn({T, d}, gen, 0.0, 1.0, true));
    const ag::Tensor out = ex15::chunked_attention(qkv[0], qkv[1], qkv[2], W);
    if (!out.requires_grad()) FAIL(kNoGraph);
    for (const auto& node : ag::topological_order(out)) {
        if (node->op.find("attention") != std::string::npos)
            FAIL("you called the engine's fused " << node->op << ": build the chunks from matmul, masked_fill and softmax");
        for (const ag::Tensor& x : node->inputs)
            if (x.numel() >= T * T / 4)
                FAIL("your graph holds a tensor of shape " << ag::shape_str(x.shape()) << " (read by " << node->op
                     << ") for T = " << T << ", W = " << W << ": the chunks need (W × 2W) score blocks, O(T·W) "
                     << "numbers, never O(T²)");
    }
    INFO("T = 240, W = 4: max |chunked - engine| = " << ag::max_abs_diff(out, engine(qkv[0], qkv[1], qkv[2], W))
         << ", max |chunked - reference| = " << ag::max_abs_diff(out, ref::chunked_attention(qkv[0], qkv[1], qkv[2], W)));
    CHECK(ag::max_abs_diff(out, engine(qkv[0], qkv[1], qkv[2], W)) < 1e-12);
    CHECK(ag::max_abs_diff(out, ref::chunked_attention(qkv[0], qkv[1], qkv[2], W)) < 1e-12);
}
