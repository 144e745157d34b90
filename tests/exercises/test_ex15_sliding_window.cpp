// Exercise 15 · sliding-window attention (§6.1, §6.2): the mask against
// its rule, the sliding chunks against the naive masked attention and the
// engine for T = 1 … 50 and windows from 1 to wider than the sequence,
// large scores, q, k, v given as views, their gradients, the O(T·W)
// memory of their graph (counted in numbers kept, views included) and of
// the whole forward and backward (the peak of tensor storage), the work of
// its products (no more than W × 2W scores a chunk), chunks of queries and
// not one query at a time (the products and ops counted), and ag::attention
// never run. A wrong output is diagnosed against the usual
// wrong turns (off-by-one windows, the slides' two-sided w, a window
// without t itself, a forgotten previous chunk, query and key swapped, a
// wrong scale, hidden scores set to 0 or their weights zeroed after the
// softmax, no window at all), each named only when it explains the output
// at every size probed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "exercises/ex15_sliding_window.h"
#include "tensor_checks.h"
using ag::Tensor;

namespace {

using Rule = bool (*)(int64_t t, int64_t j, int64_t window);

// §6.1 query t sees key j iff t - W < j <= t: W tokens, t itself included.
bool in_window(int64_t t, int64_t j, int64_t w) { return t - w < j && j <= t; }

// The usual wrong turns, as rules of who sees whom.
bool one_more(int64_t t, int64_t j, int64_t w) { return in_window(t, j, w + 1); }
bool one_less(int64_t t, int64_t j, int64_t w) { return in_window(t, j, w - 1); }
// The slides' w is Longformer's two-sided width: w/2 + 1 tokens.
bool slides_w(int64_t t, int64_t j, int64_t w) { return in_window(t, j, w / 2 + 1); }
// "The W tokens before t": t - W <= j < t, t itself left out.
bool before_t(int64_t t, int64_t j, int64_t w) { return t - w <= j && j < t; }
bool transposed(int64_t t, int64_t j, int64_t w) { return in_window(j, t, w); }
bool two_sided(int64_t t, int64_t j, int64_t w) { return in_window(t, j, w) || in_window(j, t, w); }
bool no_window(int64_t t, int64_t j, int64_t) { return j <= t; }
// §6.2 chunks of W that forget the previous chunk: only keys of the query's own chunk.
bool own_chunk_only(int64_t t, int64_t j, int64_t w) { return in_window(t, j, w) && t / w == j / w; }
// The keys of chunks b-1 and b that the window hides (the rest of the
// chunk's score block).
bool block_outside_window(int64_t t, int64_t j, int64_t w) {
    return j / w <= t / w && j / w + 1 >= t / w && !in_window(t, j, w);
}
bool outside_window(int64_t t, int64_t j, int64_t w) { return !in_window(t, j, w); }
// The chunk's mask with query and key swapped: of the keys of chunks b-1
// and b, those at or after t.
bool chunk_swapped(int64_t t, int64_t j, int64_t w) { return in_window(j, t, w) && j / w <= t / w; }

// The [T, T] 0/1 tensor of a rule.
Tensor mask_of(Rule rule, int64_t T, int64_t w) {
    std::vector<double> m;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j) m.push_back(rule(t, j, w) ? 1.0 : 0.0);
    return Tensor::from({T, T}, m);
}

std::string first_difference(const Tensor& got, const Tensor& want) {
    const int64_t T = want.size(0);
    const std::vector<double> g = got.to_vector(), e = want.to_vector();
    for (size_t i = 0; i < e.size(); ++i)
        if (g[i] != e[i]) {
            std::ostringstream s;
            s << "entry (t, j) = (" << static_cast<int64_t>(i) / T << ", " << static_cast<int64_t>(i) % T
              << "): expected " << e[i] << ", got " << g[i];
            return s.str();
        }
    return "no entry differs";
}

// A diagnosis: a wrong rule, or the right one with a wrong scale.
struct WrongTurn {
    Rule rule;
    double scale_power;  // scores · d^(-scale_power); 0.5 is right
    const char* message;
    Rule zeroed = nullptr;   // keys whose score is set to 0 instead of hidden (-inf)
    Rule dropped = nullptr;  // keys in the softmax whose probability is then set to 0
};

const WrongTurn kMaskTurns[] = {
    {one_more, 0.5, "your window shows W+1 tokens: query t sees j with t - W < j (strictly), W tokens with t itself"},
    {one_less, 0.5, "your window shows W-1 tokens: t itself is one of the W, so j runs from t - W + 1 to t"},
    {slides_w, 0.5,
     "your window shows W/2 + 1 tokens, the slides' Longformer width w: here W already is the number of tokens a "
     "query sees (Mistral's W), t itself included"},
    {before_t, 0.5,
     "your window holds the W tokens before t and leaves t out: the diagonal is in the window (t - W < j <= t)"},
    {transposed, 0.5, "your mask is transposed: row t is the query, column j the key (lower triangular)"},
    {two_sided, 0.5, "your mask is two-sided: a causal window never shows a key j > t"},
    {no_window, 0.5, "your mask is plain causal (j <= t): the window also hides the keys j <= t - W"},
};

const WrongTurn kAttentionTurns[] = {
    {own_chunk_only, 0.5,
     "you forgot the previous chunk: a query of chunk b also sees keys of chunk b-1 (position t sees back to "
     "t - W + 1)"},
    {one_more, 0.5, "your queries see W+1 tokens: t - W < j <= t is W tokens, t itself included"},
    {one_less, 0.5, "your queries see W-1 tokens: t - W < j <= t is W tokens, t itself included"},
    {slides_w, 0.5,
     "your queries see W/2 + 1 tokens, the slides' Longformer width w: here W already is the number of tokens a "
     "query sees, t itself included"},
    {before_t, 0.5,
     "your queries see the W tokens before t but not t itself: t - W < j <= t includes j = t (and gives query 0 a "
     "key to see)"},
    {chunk_swapped, 0.5,
     "your chunk mask has query and key swapped: query t sees the keys after it; it must see j with "
     "t - W < j <= t (row = query, column = key)"},
    {in_window, 0.0, "you forgot to scale the scores: q·k / √d"},
    {in_window, 1.0, "you divided the scores by d: the scale is 1/√d"},
    {no_window, 0.5, "your attention ignores the window: it is plain causal attention"},
    {in_window, 0.5,
     "you set the hidden scores of the chunk's block to 0: exp(0) = 1 still gives those keys weight; fill them "
     "with -inf, which the softmax turns into weight 0",
     block_outside_window},
    {in_window, 0.5,
     "you set the hidden scores to 0: exp(0) = 1 still gives those keys weight; fill them with -inf, which the "
     "softmax turns into weight 0",
     outside_window},
    {in_window, 0.5,
     "you set the hidden keys' weights to 0 after the softmax: the softmax over the whole block gave them part "
     "of each row's weight, so the visible weights no longer sum to 1; fill the hidden scores with -inf before "
     "the softmax",
     nullptr, block_outside_window},
};

// §6.2 (1) the naive way, in full: every T² score, -inf where `rule` hides
// the key, softmax over the row, times v. A row that sees nothing (some
// wrong rules) is given every key; `empty` marks it, for the caller to skip.
Tensor naive(const Tensor& q, const Tensor& k, const Tensor& v, Rule rule, int64_t w, double scale_power = 0.5,
             Rule zeroed = nullptr, std::vector<bool>* empty = nullptr, Rule dropped = nullptr) {
    const int64_t T = q.size(0);
    const Tensor zero = zeroed ? mask_of(zeroed, T, w) : Tensor::zeros({T, T});
    const Tensor drop = dropped ? mask_of(dropped, T, w) : Tensor::zeros({T, T});
    Tensor hidden = 1.0 - mask_of(rule, T, w) - zero - drop;
    double* h = hidden.data();
    for (int64_t t = 0; t < T; ++t) {
        const bool none = std::all_of(h + t * T, h + t * T + T, [](double x) { return x == 1.0; });
        if (none) std::fill(h + t * T, h + t * T + T, 0.0);
        if (empty) empty->push_back(none);
    }
    const double scale = std::pow(static_cast<double>(q.size(1)), -scale_power);
    const Tensor scores = ag::matmul(q, k.t()) * scale;
    const Tensor filled =
        ag::masked_fill(ag::masked_fill(scores, zero, 0.0), hidden, -std::numeric_limits<double>::infinity());
    return ag::matmul(ag::masked_fill(ag::softmax(filled), drop, 0.0), v);
}

// The engine's fused op on one head: [T, d] as [1, T, 1, d].
Tensor engine(const Tensor& q, const Tensor& k, const Tensor& v, int64_t w) {
    const int64_t T = q.size(0), d = q.size(1);
    const auto head = [&](const Tensor& x) { return x.reshape({1, T, 1, d}); };
    return ag::causal_attention(head(q), head(k), head(v), w).reshape({T, d});
}

struct Qkv {
    Tensor q, k, v;
};
Qkv random_qkv(grading::Random& rng, int64_t T, int64_t d, double scale = 1.0) {
    return {grading::random_tensor(rng, {T, d}, scale), grading::random_tensor(rng, {T, d}, scale),
            grading::random_tensor(rng, {T, d})};
}

// The student's chunked attention, refusing the engine's fused op: it must
// not run, not even under NoGradGuard or inside a backward.
Tensor chunked(const Tensor& q, const Tensor& k, const Tensor& v, int64_t W, bool backward_too = false) {
    Tensor out;
    const std::vector<double> q0 = q.to_vector(), k0 = k.to_vector(), v0 = v.to_vector();
    const std::vector<std::string> ops =
        grading::ops_run([&] { return out = ex15::chunked_attention(q, k, v, W); }, backward_too);
    for (const auto& [name, x, before] : {std::tuple{"q", q, q0}, std::tuple{"k", k, k0}, std::tuple{"v", v, v0}})
        if (!std::equal(before.begin(), before.end(), x.to_vector().begin(),
                        [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }))
            FAIL("your chunked_attention changed the numbers of its input "
                 << name << " (W = " << W << ", T = " << q.size(0)
                 << "): leave q, k and v as they were; compute scaled scores and masks as new tensors");
    for (const std::string& op : ops)
        if (op.find("attention") != std::string::npos)
            FAIL("your chunked_attention ran the engine's fused ag::"
                 << op << " (W = " << W << ", T = " << q.size(0)
                 << "): build the chunks from narrow, matmul, masked_fill, softmax and cat");
    return out;
}

// Sizes where the wrong turns differ from each other and from the right
// rule; a turn is named only if it explains the output on all of them.
const int64_t kProbeT[] = {5, 9, 13};
const int64_t kProbeW[] = {1, 2, 3, 4, 6, 7};

// The wrong turn window_mask follows everywhere, or nullptr.
const char* diagnose_mask() {
    for (const WrongTurn& turn : kMaskTurns) {
        bool explains = true;
        for (const int64_t T : kProbeT)
            for (const int64_t W : kProbeW)
                explains = explains && grading::same_tensor(ex15::window_mask(T, W), mask_of(turn.rule, T, W), 0.0);
        if (explains) return turn.message;
    }
    return nullptr;
}

// The rows of got that the wrong turn explains are all those it defines.
bool explains(const WrongTurn& turn, const Tensor& got, const Qkv& x, int64_t W) {
    std::vector<bool> empty;
    const Tensor want = naive(x.q, x.k, x.v, turn.rule, W, turn.scale_power, turn.zeroed, &empty, turn.dropped);
    if (got.shape() != want.shape()) return false;
    for (int64_t t = 0; t < want.size(0); ++t)
        if (!empty[static_cast<size_t>(t)] && !grading::same_tensor(got.narrow(0, t, 1), want.narrow(0, t, 1), 1e-10))
            return false;
    return true;
}

// The wrong turn chunked_attention follows everywhere, or nullptr.
const char* diagnose_attention() {
    grading::Random rng(1515);
    std::vector<Qkv> inputs;
    for (const int64_t T : kProbeT) inputs.push_back(random_qkv(rng, T, 4));
    for (const WrongTurn& turn : kAttentionTurns) {
        bool all = true;
        for (const Qkv& x : inputs)
            for (const int64_t W : kProbeW)
                all = all && explains(turn, ex15::chunked_attention(x.q, x.k, x.v, W), x, W);
        if (all) return turn.message;
    }
    return nullptr;
}

// Which op's inputs hold most of what y's graph keeps: "<op> (<n> numbers,
// the largest read as <shape>)", each storage counted once.
std::string largest_kept(const Tensor& y) {
    std::vector<const ag::Storage*> seen;
    std::vector<std::string> ops;
    std::vector<size_t> total, largest;
    std::vector<ag::Shape> largest_shape;
    for (const auto& node : ag::topological_order(y))
        for (const Tensor& x : node->inputs) {
            const ag::Storage* s = x.impl()->storage.get();
            if (std::find(seen.begin(), seen.end(), s) != seen.end()) continue;
            seen.push_back(s);
            const size_t i = static_cast<size_t>(std::find(ops.begin(), ops.end(), node->op) - ops.begin());
            if (i == ops.size()) {
                ops.push_back(node->op);
                total.push_back(0);
                largest.push_back(0);
                largest_shape.emplace_back();
            }
            total[i] += s->size();
            if (s->size() > largest[i]) largest[i] = s->size(), largest_shape[i] = x.shape();
        }
    if (ops.empty()) return "nothing";
    const size_t i = static_cast<size_t>(std::max_element(total.begin(), total.end()) - total.begin());
    return "the inputs of " + ops[i] + " (" + std::to_string(total[i]) + " numbers; the largest, " +
           std::to_string(largest[i]) + " numbers, read as " + ag::shape_str(largest_shape[i]) + ")";
}

const char* kNoGraph =
    "your output carries no gradient: build it from engine ops (narrow, matmul, masked_fill, softmax, cat) "
    "instead of writing numbers into a tensor";

}  // namespace

TEST_CASE("ex15 window_mask is 1 exactly where t - W < j <= t") {
    for (int64_t T = 1; T <= 24; ++T)
        for (int64_t W : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 23, 24, 25, 26, 100}) {
            INFO("T = " << T << ", W = " << W
                        << (W >= T ? " (a window as wide as the sequence or wider: every "
                                     "query sees all of 0 … t)"
                                   : ""));
            const Tensor got = ex15::window_mask(T, W), want = mask_of(in_window, T, W);
            {
                INFO("expected shape [T, T], got " << ag::shape_str(got.shape()));
                REQUIRE(got.shape() == want.shape());
            }
            if (grading::same_tensor(got, want, 0.0)) continue;
            if (const char* turn = diagnose_mask()) FAIL(turn);
            FAIL("the mask differs from the rule t - W < j <= t at " << first_difference(got, want));
        }
}

TEST_CASE("ex15 chunked_attention equals the naive masked attention and the engine") {
    grading::Random rng(15);
    for (int64_t T : {1, 2, 3, 5, 7, 8, 9, 12, 16, 17, 23, 31, 32, 33, 50})
        for (int64_t W : {1, 2, 3, 4, 5, 8, 13, 40, 64}) {
            const int64_t d = 1 + T % 5;  // d = 1 … 5, odd or even
            const Qkv x = random_qkv(rng, T, d);
            INFO("T = " << T << ", W = " << W << ", d = " << d
                        << (W >= T  ? " (W >= T: one chunk, every query sees 0 … t)"
                            : T % W ? " (T not a multiple of W: the last chunk is shorter)"
                                    : ""));
            const Tensor got = chunked(x.q, x.k, x.v, W), want = naive(x.q, x.k, x.v, in_window, W);
            {
                INFO("expected shape [T, d], got " << ag::shape_str(got.shape()));
                REQUIRE(got.shape() == want.shape());
            }
            if (!grading::same_tensor(got, want, 1e-12)) {
                if (const char* turn = diagnose_attention()) FAIL(turn);
                if (!grading::all_finite(got))
                    FAIL(
                        "your output has NaN or inf: a row whose scores are all -inf (a query that sees no key) "
                        "has no softmax; every query sees at least itself");
            }
            CHECK_TENSOR(got, want, 1e-12);
            INFO("against ag::causal_attention with the window");
            CHECK_TENSOR(got, engine(x.q, x.k, x.v, W), 1e-12);
        }
}

TEST_CASE("ex15 chunked_attention with large scores (softmax must not overflow)") {
    // §6.2 with |q·k|/√d in the thousands: exp(score) overflows a double
    // past 709, so the softmax must shift each row by its max first
    // (softmax(x) = softmax(x - max x)); -inf must still hide the masked keys.
    grading::Random rng(151);
    for (int64_t T : {6, 11, 20})
        for (int64_t W : {1, 2, 3, 5, 30}) {
            const Qkv x = random_qkv(rng, T, 4, 40.0);
            INFO("T = " << T << ", W = " << W << ", d = 4, q and k ~ N(0, 40²): scores of order 1000");
            const Tensor got = chunked(x.q, x.k, x.v, W), want = engine(x.q, x.k, x.v, W);
            if (!grading::all_finite(got) &&
                grading::all_finite(ex15::chunked_attention(x.q / 40.0, x.k / 40.0, x.v, W)))
                FAIL(
                    "your output has NaN or inf for large scores (fine for small ones): an exp overflowed, or a "
                    "row's visible weights underflowed to 0 and were divided by their sum 0; hide the keys with "
                    "-inf before one softmax per row that subtracts the row's max (ag::softmax does)");
            CHECK_TENSOR(got, want, 1e-9);
        }
}

TEST_CASE("ex15 chunked_attention of q, k, v given as views that are not contiguous") {
    // Inside a model q, k, v are narrows of one projection, split into
    // heads: views whose rows are not back to back. Engine ops read them
    // through their strides; numbers read from data() pick up the gaps.
    grading::Random rng(152);
    for (int64_t T : {1, 7, 12})
        for (int64_t W : {1, 3, 20}) {
            const Qkv x = random_qkv(rng, T, 3);
            INFO("T = " << T << ", W = " << W << ", d = 3, q, k, v as strided views (every number followed by a "
                        << "NaN gap)");
            const Tensor got =
                chunked(grading::strided_copy(x.q), grading::strided_copy(x.k), grading::strided_copy(x.v), W);
            CHECK_TENSOR(got, engine(x.q, x.k, x.v, W), 1e-12);
        }
}

TEST_CASE("ex15 chunked_attention's gradients: a gradient check and the engine's") {
    grading::Random rng(16);
    // {T, W, d}: W = 1 (each query sees itself only), W = 2, T = 1, W = T,
    // W > T, T a multiple of W or not.
    const int64_t cases[][3] = {{7, 3, 4}, {8, 4, 2}, {5, 1, 2},  {9, 2, 2}, {1, 3, 2},
                                {6, 6, 2}, {6, 8, 4}, {10, 3, 2}, {11, 2, 6}};
    for (const auto& c : cases) {
        const int64_t T = c[0], W = c[1], d = c[2];
        INFO("T = " << T << ", W = " << W << ", d = " << d);
        const Qkv x = random_qkv(rng, T, d);
        const std::vector<Tensor> qkv{x.q, x.k, x.v};
        const auto student = [W](const std::vector<Tensor>& in) { return chunked(in[0], in[1], in[2], W); };
        {
            std::vector<Tensor> leaves;  // no fused op inside the backward either
            for (const Tensor& t : qkv) leaves.push_back(grading::leaf(t));
            chunked(leaves[0], leaves[1], leaves[2], W, true);
        }
        const grading::ForwardBackward got = grading::forward_backward(student, qkv, 160);
        if (!got.out.requires_grad()) FAIL(kNoGraph);
        const grading::ForwardBackward want = grading::forward_backward(
            [W](const std::vector<Tensor>& in) { return engine(in[0], in[1], in[2], W); }, qkv, 160);
        grading::check_same_gradients(got, want, {"q", "k", "v"}, 1e-10);

        std::vector<Tensor> leaves;
        for (const Tensor& t : qkv) leaves.push_back(grading::leaf(t));
        grading::check_gradients("dL/dq, dL/dk, dL/dv", student, leaves);
    }
}

// §6.2 chunk b (W queries) scores only the keys of chunks b-1 and b: one
// (≤ W) × (≤ 2W) block, whose scores q·kᵀ and weights·v cost 2·n·m·d FLOPs
// each for an n × m block. Counted from the products the forward ran, so
// every chunk may be a full W × 2W block (batched and padded, as lesson 04
// does), but no more: a chunk that also scores chunk b+1 (every key there
// is in its future), or chunks of 2W queries, do 1.3-1.5 times the work
// here while their outputs are right.
TEST_CASE("ex15 chunked_attention scores chunk b against chunks b-1 and b only: (≤ W) × (≤ 2W)") {
    grading::Random rng(1515);
    for (const auto& sizes : std::vector<std::pair<int64_t, int64_t>>{{64, 8}, {60, 8}, {45, 5}}) {
        const int64_t T = sizes.first, W = sizes.second;  // (a lambda may not capture a structured binding in C++17)
        const int64_t d = 3, chunks = (T + W - 1) / W, allowed = chunks * W * 2 * W;
        const Qkv x = random_qkv(rng, T, d);
        Tensor out;
        const double flops = grading::gemm_flops_of([&] { out = chunked(x.q, x.k, x.v, W); });
        {
            INFO("T = " << T << ", W = " << W << ", d = " << d << ": against ag::causal_attention with the window");
            CHECK_TENSOR(out, engine(x.q, x.k, x.v, W), 1e-12);
        }
        const double scores = flops / (4.0 * static_cast<double>(d));
        INFO("T = " << T << ", W = " << W << ", d = " << d << ": your matrix products did " << flops
                    << " FLOPs, the work of " << scores << " scores (q·kᵀ and weights·v, 4·d FLOPs a score); " << chunks
                    << " chunks of W queries, each scored against at most 2W keys, need at most " << allowed);
        if (scores > static_cast<double>(allowed))
            FAIL(
                "more scores than the chunks need: cut the queries into chunks of W positions and score chunk b "
                "only against the keys of chunks b-1 and b (a key of chunk b+1 is in every query's future)");
    }
}

// §6.2 the for-loop version scores each query against its own W keys: the
// same O(T·W) scores, but as T small products, one op after another (the
// lecture: asymptotically fine, too slow in practice). The sliding chunks
// do the same work in ⌈T/W⌉ blocks of W queries: a couple of regular
// matrix products a chunk (exercise 5(c)), or one batched product for all.
// Counted from the products and the ops the forward ran: at T = 128, W = 32
// (4 chunks), at most 4 products a chunk and fewer ops than queries; a loop
// over the queries runs 2 products and several ops for each of the 128.
TEST_CASE("ex15 chunked_attention works a chunk of W queries at a time, not one query at a time") {
    grading::Random rng(1516);
    const int64_t T = 128, W = 32, d = 4, chunks = (T + W - 1) / W;
    const Qkv x = random_qkv(rng, T, d);
    Tensor out;
    std::vector<std::string> ops;
    const grading::Products products = grading::products_of(
        [&] { ops = grading::ops_run([&] { return out = ex15::chunked_attention(x.q, x.k, x.v, W); }); });
    {
        INFO("T = " << T << ", W = " << W << ", d = " << d << ": against ag::causal_attention with the window");
        CHECK_TENSOR(out, engine(x.q, x.k, x.v, W), 1e-12);
    }
    const auto op_count = static_cast<int64_t>(ops.size());
    INFO("T = " << T << ", W = " << W << ", d = " << d << ": your forward ran " << products.calls
                << " matrix products and " << op_count << " ops; " << chunks << " chunks of W queries need about 2 "
                << "products and a dozen ops each");
    if (products.calls > 4 * chunks || op_count > T)
        FAIL(
            "you worked one query at a time: that is §6.2's for-loop version, which computes only the visible scores "
            "but as T small products, each with its own ops (too slow in practice, the lecture says). The exercise "
            "asks for the sliding chunks: cut the queries into chunks of W and score each chunk against the keys "
            "of chunks b-1 and b in one W × 2W product, 2TW scores in regular matrix products (exercise 5(c))");
}

TEST_CASE("ex15 chunked_attention keeps O(T·W) numbers, never a T x T tensor") {
    // §6.2 the chunks need (≤ W) × (≤ 2W) score blocks: O(T·W) numbers for
    // a fixed W, so 4 times the sequence keeps about 4 times the numbers.
    // All T² scores (or a [T, T] mask, or each chunk scored against every
    // earlier key) keep O(T²): 16 times. graph_storage_elements counts the
    // whole storage behind a view (a narrow of a T×T tensor keeps T²).
    grading::Random rng(17);
    const int64_t W = 4, d = 4, T_small = 256, T_large = 1024;
    int64_t kept[2] = {0, 0}, peak[2] = {0, 0};
    std::string largest;
    for (int i = 0; i < 2; ++i) {
        const int64_t T = i ? T_large : T_small;
        Qkv x = random_qkv(rng, T, d);
        for (Tensor* t : {&x.q, &x.k, &x.v}) t->requires_grad_(true);
        const Tensor want = engine(x.q, x.k, x.v, W);
        Tensor out;
        peak[i] = grading::peak_bytes_of([&] {  // the forward and its backward, temporaries included
            out = chunked(x.q, x.k, x.v, W);
            if (out.requires_grad()) ag::sum(out).backward();
        });
        if (!out.requires_grad()) FAIL(kNoGraph);
        INFO("T = " << T << ", W = " << W << ": against ag::causal_attention with the window");
        CHECK_TENSOR(out, want, 1e-12);
        for (Tensor* t : {&x.q, &x.k, &x.v}) t->zero_grad();
        out = chunked(x.q, x.k, x.v, W);
        kept[i] = grading::graph_storage_elements(out);
        largest = largest_kept(out);
    }
    {
        // Even a [T, T] tensor that no graph keeps (a mask built whole and
        // sliced, all scores computed then narrowed) needs T² numbers at once.
        const double growth = static_cast<double>(peak[1]) / static_cast<double>(std::max<int64_t>(peak[0], 1));
        INFO("W = " << W << ", d = " << d << ": the forward and backward needed at most " << peak[0]
                    << " bytes of tensors at once at T = " << T_small << " and " << peak[1] << " at T = " << T_large
                    << " (×" << growth << "; O(T·W) grows ×4, O(T²) ×16): a temporary tensor of T × T (or T × "
                    << "chunk-of-T) numbers, even one the graph does not keep");
        CHECK(growth < 8.0);
    }
    const double growth = static_cast<double>(kept[1]) / static_cast<double>(kept[0]);
    INFO("W = " << W << ", d = " << d << ": the graph keeps " << kept[0] << " numbers at T = " << T_small << " and "
                << kept[1] << " at T = " << T_large << " (×" << growth << "; O(T·W) grows ×4, O(T²) ×16); T² = "
                << T_large * T_large << "; most of it at T = " << T_large << " in " << largest
                << ". Score only the keys of chunks b-1 and b for chunk b, and build only (W × 2W) masks");
    CHECK(growth < 8.0);
    CHECK(kept[1] < T_large * T_large / 4);
}
