// Exercise 14 · causal grouped-query attention from engine ops (§5.2):
// kv_head(), the output against the reference and ag::causal_attention, GQA
// as MHA on copied K/V heads, MHA and MQA against attention written out
// head by head, the edges (T = 1, one head, one KV head, dh = 1, Hkv ≠ g),
// inputs that are views, causality, large scores (a softmax that does not
// subtract the max overflows), ag::attention and ag::causal_attention never
// run, and gradients. Diagnoses heads grouped the wrong way (h % Hkv, h /
// Hkv), a missing or shifted causal mask, one hiding the query's own key or
// the wrong triangle, future scores set to 0 instead of -infinity, a scale
// other than 1/sqrt(dh), weights that do not sum to 1 (v = 1 gives 1), and
// heads and tokens mixed up by reshaping instead of permuting back.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "exercises/ex14_gqa_attention.h"
#include "reference/ex14_gqa_attention.h"
#include "tensor_checks.h"

namespace ref = ex14_reference;
using ag::Tensor;
using Indices = std::vector<int64_t>;  // heads or positions

namespace {

struct Case {
    Tensor q, k, v;
    int64_t T, Hq, Hkv, dh;
};

// q [T, Hq, dh], k, v [T, Hkv, dh] with Hq = Hkv · g; entries spread enough
// that the softmax is far from uniform.
Case make_case(grading::Random& rng, int64_t T, int64_t Hkv, int64_t g, int64_t dh) {
    const int64_t Hq = Hkv * g;
    return {grading::random_tensor(rng, {T, Hq, dh}, 1.5),
            grading::random_tensor(rng, {T, Hkv, dh}, 1.5),
            grading::random_tensor(rng, {T, Hkv, dh}),
            T,
            Hq,
            Hkv,
            dh};
}
Case random_case(grading::Random& rng, int64_t Hkv, int64_t g, int64_t T_max = 10, int64_t T_min = 1) {
    const int64_t T = rng.integer(T_min, T_max), dh = rng.integer(1, 8);
    return make_case(rng, T, Hkv, g, dh);
}

std::string describe(const Case& c) {
    return "T = " + std::to_string(c.T) + ", Hq = " + std::to_string(c.Hq) + ", Hkv = " + std::to_string(c.Hkv) +
           ", dh = " + std::to_string(c.dh);
}

// x [T, Hkv, dh] -> [T, Hq, dh] whose head h is x's head heads[h].
Tensor pick_heads(const Tensor& x, const Indices& heads) {
    std::vector<double> index(heads.begin(), heads.end());
    return ag::index_select(x, 1, Tensor::from({static_cast<int64_t>(heads.size())}, index));
}
Indices grouped(int64_t Hq, int64_t Hkv) {  // h -> floor(h / g): consecutive groups
    Indices heads;
    for (int64_t h = 0; h < Hq; ++h) heads.push_back(h / (Hq / Hkv));
    return heads;
}
Indices round_robin(int64_t Hq, int64_t Hkv) {  // h -> h mod Hkv: the usual slip
    Indices heads;
    for (int64_t h = 0; h < Hq; ++h) heads.push_back(h % Hkv);
    return heads;
}
Indices by_kv_count(int64_t Hq, int64_t Hkv) {  // h -> floor(h / Hkv): dividing by Hkv where g belongs
    Indices heads;
    for (int64_t h = 0; h < Hq; ++h) heads.push_back(h / Hkv);
    return heads;
}
// Only heads 0 … Hkv-1 exist: h / Hkv names one for every h iff Hq ≤ Hkv², and
// it differs from h / g iff Hkv ≠ g.
bool by_kv_count_differs(int64_t Hq, int64_t Hkv) { return Hq <= Hkv * Hkv && Hkv != Hq / Hkv; }

// [T, H, dh] as a batch of one, [1, T, H, dh], for the engine's attention.
Tensor batch_of_one(const Tensor& x) { return x.reshape({1, x.size(0), x.size(1), x.size(2)}); }

// ag::attention with query t at position q_pos[t] and key j at position j:
// it sees j iff j <= q_pos[t].
Tensor engine(const Tensor& q, const Tensor& k, const Tensor& v, const Indices& q_pos) {
    Indices k_pos;
    for (int64_t j = 0; j < k.size(0); ++j) k_pos.push_back(j);
    return ag::attention(batch_of_one(q), batch_of_one(k), batch_of_one(v), q_pos, k_pos).reshape(q.shape());
}
Indices shifted_positions(int64_t T, int64_t by) {
    Indices p;
    for (int64_t t = 0; t < T; ++t) p.push_back(t + by);
    return p;
}
Tensor causal(const Tensor& q, const Tensor& k, const Tensor& v) {
    return engine(q, k, v, shifted_positions(q.size(0), 0));
}

// Attention written out for every query head h reading K/V head heads[h]:
//   out[t, h] = Σ_{j ≤ t} softmax_j(q[t,h]·k[j,heads[h]] / √dh) v[j,heads[h]],
// or over the keys j with sees(t, j) for a usual slip of the mask (a query
// that sees no key gets NaN, as a softmax over nothing does).
bool causal_mask(int64_t t, int64_t j) { return j <= t; }
Tensor by_hand(const Case& c, const Indices& heads, bool (*sees)(int64_t, int64_t) = causal_mask) {
    std::vector<double> out;
    const auto at = [](const Tensor& x, int64_t t, int64_t h, int64_t i) { return x.at({t, h, i}); };
    for (int64_t t = 0; t < c.T; ++t)
        for (int64_t h = 0; h < c.Hq; ++h) {
            const int64_t kv = heads[static_cast<size_t>(h)];
            std::vector<double> score(static_cast<size_t>(c.T), -INFINITY);
            double top = -INFINITY, total = 0.0;
            for (int64_t j = 0; j < c.T; ++j) {
                if (!sees(t, j)) continue;
                double s = 0.0;
                for (int64_t i = 0; i < c.dh; ++i) s += at(c.q, t, h, i) * at(c.k, j, kv, i);
                score[static_cast<size_t>(j)] = s / std::sqrt(static_cast<double>(c.dh));
                top = std::max(top, score[static_cast<size_t>(j)]);
            }
            for (double& s : score) total += (s = std::isinf(s) ? 0.0 : std::exp(s - top));
            for (int64_t i = 0; i < c.dh; ++i) {
                double o = 0.0;
                for (int64_t j = 0; j < c.T; ++j) o += score[static_cast<size_t>(j)] / total * at(c.v, j, kv, i);
                out.push_back(o);
            }
        }
    return Tensor::from({c.T, c.Hq, c.dh}, out);
}

// Attention with the future's scores set to 0 (not -infinity): every key
// keeps a weight. From engine ops, q [T, H, dh], k, v [T, H, dh].
Tensor future_scores_zero(const Tensor& q, const Tensor& k, const Tensor& v) {
    const int64_t T = q.size(0);
    std::vector<double> future;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j) future.push_back(j > t ? 1.0 : 0.0);
    const Tensor scores = ag::matmul(q.permute({1, 0, 2}), k.permute({1, 2, 0})) /
                          std::sqrt(static_cast<double>(q.size(2)));  // [H, T, T]
    const Tensor weights = ag::softmax(ag::masked_fill(scores, Tensor::from({T, T}, future), 0.0));
    return ag::matmul(weights, v.permute({1, 0, 2})).permute({1, 0, 2});
}

// When the output is wrong: which usual slip? FAIL naming it.
void diagnose_slip(const Tensor& got, const Case& c) {
    const auto is = [&](const Tensor& wrong) { return grading::same_tensor(got, wrong, 1e-9); };
    const Indices heads = grouped(c.Hq, c.Hkv);
    const Tensor k = pick_heads(c.k, heads), v = pick_heads(c.v, heads);
    if (c.Hkv > 1 && c.Hq > c.Hkv &&
        is(causal(c.q, pick_heads(c.k, round_robin(c.Hq, c.Hkv)), pick_heads(c.v, round_robin(c.Hq, c.Hkv)))))
        FAIL(
            "you grouped the query heads round-robin (h % Hkv); query head h reads K/V head floor(h / g), "
            "g = Hq / Hkv: heads 0 … g-1 share K/V head 0");
    if (by_kv_count_differs(c.Hq, c.Hkv) &&
        is(causal(c.q, pick_heads(c.k, by_kv_count(c.Hq, c.Hkv)), pick_heads(c.v, by_kv_count(c.Hq, c.Hkv)))))
        FAIL("query head h read K/V head floor(h / Hkv); the group size is g = Hq / Hkv, so h reads floor(h / g)");
    // (With T = 2 no mask and a mask off by one give the same output.)
    if (c.T == 2 && is(engine(c.q, k, v, shifted_positions(c.T, 1))))
        FAIL("query 0 saw key 1: your causal mask is missing or off by one; query t sees keys j ≤ t only");
    if (c.T > 2 && is(engine(c.q, k, v, Indices(static_cast<size_t>(c.T), c.T - 1))))
        FAIL("you left out the causal mask: query t may only see keys j ≤ t");
    if (c.T > 2 && is(engine(c.q, k, v, shifted_positions(c.T, 1))))
        FAIL("your mask is off by one: query t sees keys j ≤ t, itself included, and no later one");
    if (c.T > 1) {
        const auto rows_after_first = [&](const Tensor& wrong) {
            return grading::same_tensor(got.narrow(0, 1, c.T - 1), wrong.narrow(0, 1, c.T - 1), 1e-9);
        };
        if (rows_after_first(by_hand(c, heads, [](int64_t t, int64_t j) { return j < t; })))
            FAIL(
                "query t did not see its own key: your mask hid keys j ≥ t. Query t sees keys j ≤ t, itself "
                "included (query 0 sees key 0 and nothing else)");
        if (is(by_hand(c, heads, [](int64_t t, int64_t j) { return j >= t; })))
            FAIL(
                "query t saw keys j ≥ t and not the earlier ones: your mask hid the wrong triangle. Row t of the "
                "scores [T, T] belongs to query t; hide its entries j > t");
    }
    if (c.T > 1 && c.Hq > 1 &&
        is(ref::gqa_attention(c.q, c.k, c.v).permute({1, 0, 2}).contiguous().reshape({c.T, c.Hq, c.dh})))
        FAIL(
            "your output is [Hq, T, dh] reshaped to [T, Hq, dh]; reshape keeps the order of the numbers, so heads "
            "and tokens are mixed up: permute the heads back");
    if (c.dh > 1 && is(causal(c.q * std::sqrt(static_cast<double>(c.dh)), k, v)))
        FAIL("you left out the scale: scores are q·k / sqrt(dh)");
    if (c.dh > 1 && is(causal(c.q / std::sqrt(static_cast<double>(c.dh)), k, v)))
        FAIL("you divided the scores by dh; the scale is 1 / sqrt(dh)");
    if (c.Hq > 1 && is(causal(c.q / std::sqrt(static_cast<double>(c.Hq)), k, v)))
        FAIL(
            "you scaled the scores by 1 / sqrt(Hq · dh), the model width; the scale is 1 / sqrt(dh), dh = the "
            "size of one head");
    if (c.T > 1 && is(future_scores_zero(c.q, k, v)))
        FAIL(
            "the future's scores were set to 0, and exp(0) = 1 still gives those keys weight: fill them with "
            "-infinity before the softmax, so that their weight is exactly 0");
    // With v = 1 everywhere the output is Σ_j weight_j = 1: each query's
    // weights over the keys it sees sum to 1.
    const Tensor sums = ex14::gqa_attention(c.q, c.k, Tensor::ones(c.v.shape()));
    if (!grading::same_tensor(sums, Tensor::ones(c.q.shape()), 1e-9))
        FAIL(
            "with v = 1 everywhere your output should be 1 everywhere (each query's weights over the keys it sees "
            "sum to 1), but "
            << grading::tensor_diff(sums, Tensor::ones(c.q.shape()))
            << ": is the softmax taken over the keys (the last dim of the [Hq, T, T] scores), and is the scale "
               "applied to the scores before it, not to the weights?");
}

// check(c, got, rng) for `count` random cases with Hkv in 1 … max_kv and g
// in min_g … max_g, got = the student's gqa_attention(c.q, c.k, c.v).
template <class Check>
void on_random_cases(uint64_t seed, int count, int64_t max_kv, int64_t min_g, int64_t max_g, Check check) {
    grading::Random rng(seed);
    for (int n = 0; n < count; ++n) {
        const Case c = random_case(rng, rng.integer(1, max_kv), rng.integer(min_g, max_g));
        INFO(describe(c));
        check(c, ex14::gqa_attention(c.q, c.k, c.v), rng);
    }
}

// The same, looking first at a longer sequence when c is too short to tell
// the mask's slips apart.
void diagnose(const Tensor& got, const Case& c) {
    if (c.T < 3) {
        grading::Random rng(static_cast<uint64_t>(c.Hq * 100 + c.Hkv));
        const Case longer = random_case(rng, c.Hkv, c.Hq / c.Hkv, 6, 6);
        const Tensor out = ex14::gqa_attention(longer.q, longer.k, longer.v);
        INFO("and on a longer sequence, " << describe(longer));
        if (!grading::same_tensor(out, ref::gqa_attention(longer.q, longer.k, longer.v), 1e-9))
            diagnose_slip(out, longer);
    }
    diagnose_slip(got, c);
}

}  // namespace

TEST_CASE("ex14 kv_head groups consecutive query heads: h reads floor(h / g)") {
    for (int64_t Hkv = 1; Hkv <= 8; ++Hkv)
        for (int64_t g = 1; g <= 8; ++g) {
            const int64_t Hq = Hkv * g;
            Indices got;
            for (int64_t h = 0; h < Hq; ++h) got.push_back(ex14::kv_head(h, Hq, Hkv));
            INFO("Hq = " << Hq << ", Hkv = " << Hkv << " (g = " << g << "): expected " << grading::str(grouped(Hq, Hkv))
                         << ", got " << grading::str(got));
            if (g > 1 && Hkv > 1 && got == round_robin(Hq, Hkv))
                FAIL("you grouped the query heads round-robin (h % Hkv); query head h reads K/V head floor(h / g)");
            if (Hkv != g && got == by_kv_count(Hq, Hkv))
                FAIL(
                    "you divided by Hkv; the group size is g = Hq / Hkv, and query head h reads K/V head "
                    "floor(h / g)");
            CHECK(got == grouped(Hq, Hkv));
        }
    INFO("Llama-3 8B (§5.3): 32 query heads, 8 KV heads, g = 4: query head 5 reads KV head 1, head 31 reads 7");
    CHECK(ex14::kv_head(5, 32, 8) == 1);
    CHECK(ex14::kv_head(31, 32, 8) == 7);
}

TEST_CASE("ex14 gqa_attention equals the reference and ag::causal_attention") {
    on_random_cases(1401, 150, 4, 1, 4, [](const Case& c, const Tensor& got, grading::Random&) {
        const Tensor want = ref::gqa_attention(c.q, c.k, c.v);
        if (!grading::same_tensor(got, want, 1e-9)) diagnose(got, c);
        CHECK_TENSOR(got, want, 1e-9);
        const Tensor engine_gqa = ag::causal_attention(batch_of_one(c.q), batch_of_one(c.k), batch_of_one(c.v));
        CHECK_TENSOR(got, engine_gqa.reshape(c.q.shape()), 1e-9);
    });
}

TEST_CASE("ex14 GQA equals MHA with each K/V head copied g times") {
    on_random_cases(1402, 60, 4, 2, 4, [](const Case& c, const Tensor& got, grading::Random&) {
        INFO("MHA on K/V heads 0,…,0 (g times), 1,…,1, …");
        const Tensor k = pick_heads(c.k, grouped(c.Hq, c.Hkv)), v = pick_heads(c.v, grouped(c.Hq, c.Hkv));
        if (!grading::same_tensor(got, causal(c.q, k, v), 1e-9)) diagnose(got, c);
        CHECK_TENSOR(got, ex14::gqa_attention(c.q, k, v), 1e-12);
        CHECK_TENSOR(got, causal(c.q, k, v), 1e-9);
    });
}

TEST_CASE("ex14 MHA (g = 1) and MQA (Hkv = 1) are the special cases") {
    grading::Random rng(1403);
    for (int n = 0; n < 80; ++n) {
        const bool mqa = n % 2 == 1;
        const int64_t heads = rng.integer(1, 5);
        const Case c = mqa ? random_case(rng, 1, heads) : random_case(rng, heads, 1);
        INFO((mqa ? "MQA: every query head reads the one K/V head; " : "MHA: query head h reads K/V head h; ")
             << describe(c));
        const Tensor got = ex14::gqa_attention(c.q, c.k, c.v);
        const Tensor want = by_hand(c, mqa ? Indices(static_cast<size_t>(c.Hq), 0) : grouped(c.Hq, c.Hq));
        if (!grading::same_tensor(got, want, 1e-9)) diagnose(got, c);
        CHECK_TENSOR(got, want, 1e-9);
    }
}

TEST_CASE("ex14 query t sees only tokens 0 … t") {
    on_random_cases(1404, 40, 3, 1, 3, [](const Case& c, const Tensor& got, grading::Random& rng) {
        // The first query sees only key 0: softmax over one score is 1, so
        // out[0, h] = v[0, kv_head(h)].
        const Tensor first = pick_heads(c.v, grouped(c.Hq, c.Hkv)).narrow(0, 0, 1);
        if (!grading::same_tensor(got.narrow(0, 0, 1), first, 1e-12)) diagnose(got, c);
        INFO("row 0 must be v[0, floor(h / g)] for every head h");
        CHECK_TENSOR(got.narrow(0, 0, 1), first, 1e-12);
        // Changing the last token's k and v must leave every earlier row alone.
        if (c.T < 2) return;
        const Tensor last = grading::random_tensor(rng, {1, c.Hkv, c.dh});
        const Tensor k2 = ag::cat({c.k.narrow(0, 0, c.T - 1), last}, 0),
                     v2 = ag::cat({c.v.narrow(0, 0, c.T - 1), last}, 0);
        const Tensor moved = ex14::gqa_attention(c.q, k2, v2);
        if (!grading::same_tensor(moved.narrow(0, 0, c.T - 1), got.narrow(0, 0, c.T - 1), 1e-12))
            FAIL(
                "rows 0 … T-2 changed when only the last token's k and v changed: the causal mask is missing "
                "(query t may only see keys j ≤ t)");
    });
}

TEST_CASE("ex14 the edges: T = 1, one head, one KV head, dh = 1, Hkv ≠ g") {
    grading::Random rng(1406);
    // (Hkv, g): one head; MQA with 4 query heads; Hkv = 2, 3 with g = 3, 2
    // (h / Hkv is a valid head there, and wrong); Hkv = 2 with g = 4.
    for (const auto& [Hkv, g] : {std::pair<int64_t, int64_t>{1, 1}, {1, 4}, {2, 3}, {3, 2}, {2, 4}})
        for (const int64_t T : {1, 2, 5})
            for (const int64_t dh : {1, 3}) {
                const Case c = make_case(rng, T, Hkv, g, dh);
                INFO(describe(c) << (T == 1 ? ": the one query sees the one key, so out[0, h] = v[0, floor(h / g)]"
                                            : ""));
                const Tensor got = ex14::gqa_attention(c.q, c.k, c.v);
                const Tensor want = by_hand(c, grouped(c.Hq, c.Hkv));
                if (!grading::same_tensor(got, want, 1e-9)) diagnose(got, c);
                CHECK_TENSOR(got, want, 1e-9);
            }
}

// q, k and v are usually views: the heads of one fused QKV projection,
// narrowed and reshaped. Engine ops read any layout.
TEST_CASE("ex14 gqa_attention reads q, k and v that are not contiguous") {
    on_random_cases(1407, 30, 3, 1, 3, [](const Case& c, const Tensor&, grading::Random&) {
        INFO("q, k, v given as non-contiguous views (every stride doubled)");
        const Tensor got =
            ex14::gqa_attention(grading::strided_copy(c.q), grading::strided_copy(c.k), grading::strided_copy(c.v));
        CHECK_TENSOR(got, ref::gqa_attention(c.q, c.k, c.v), 1e-9);
    });
}

namespace {

// One head, dh = 1: q [T, 1, 1], k [T, 1, 1] from numbers, v = 1, 2, ….
Case one_head(const std::vector<double>& q, const std::vector<double>& k) {
    const int64_t T = static_cast<int64_t>(q.size());
    std::vector<double> v;
    for (int64_t t = 0; t < T; ++t) v.push_back(static_cast<double>(t + 1));
    return {Tensor::from({T, 1, 1}, q), Tensor::from({T, 1, 1}, k), Tensor::from({T, 1, 1}, v), T, 1, 1, 1};
}

}  // namespace

// Scores in the hundreds: exp(s) overflows past s ≈ 709 and underflows to 0
// below s ≈ -745. A softmax must subtract the largest VISIBLE score of its
// row first (ag::softmax does); the future must be -infinity by then, or
// its scores drag the maximum up and every visible weight underflows to 0.
TEST_CASE("ex14 gqa_attention is numerically robust: large scores") {
    {
        // One token, score q·k = 900: softmax over one score is 1, out = v.
        const Case c = one_head({30.0}, {30.0});
        const Tensor got = ex14::gqa_attention(c.q, c.k, c.v);
        INFO("T = 1, one head, dh = 1, q = k = 30: the one score is 900, so out[0] = v[0] = 1");
        if (!grading::all_finite(got))
            FAIL(
                "NaN or infinity: exp(900) overflowed. softmax(s) = softmax(s - max s): subtract each row's largest "
                "score before exp (ag::softmax does)");
        CHECK_TENSOR(got, c.v, 1e-12);
    }
    {
        // Query 0 sees key 0 (score 0) only; key 1, its future, scores 1000.
        const Case c = one_head({1.0, 1.0}, {0.0, 1000.0});
        const Tensor got = ex14::gqa_attention(c.q, c.k, c.v);
        INFO(
            "T = 2, one head, dh = 1, q = [1, 1], k = [0, 1000]: query 0 sees key 0 (score 0) only, so out[0] = "
            "v[0] = 1; query 1 puts all its weight on key 1 (1000 against 0), out[1] = v[1] = 2");
        if (!grading::all_finite(got.narrow(0, 0, 1)))
            FAIL(
                "NaN or infinity in out[0]: query 0 sees key 0 only (score 0), yet a score of 1000 (key 1's, in "
                "query 0's future) entered the max subtracted in its row, and exp(0 - 1000) underflowed to 0. "
                "Mask the future with -infinity BEFORE the softmax and subtract each row's own largest visible "
                "score (not one max over the whole tensor)");
        if (!grading::all_finite(got))
            FAIL(
                "NaN or infinity in out[1]: exp(1000) overflowed. Subtract each row's largest visible score before "
                "exp (ag::softmax does)");
        CHECK_TENSOR(got, by_hand(c, {0}), 1e-12);
    }
    grading::Random rng(1408);
    for (int n = 0; n < 40; ++n) {
        Case c = random_case(rng, rng.integer(1, 3), rng.integer(1, 3), 8, 2);
        const double scale = rng.uniform(200.0, 600.0);  // q·k / √dh ~ N(0, (2.25 · scale)²)
        c.q = c.q * scale;
        INFO(describe(c) << ", q scaled by " << scale << ": scores of the order of ±" << 2.25 * scale);
        const Tensor got = ex14::gqa_attention(c.q, c.k, c.v);
        if (!grading::all_finite(got))
            FAIL(
                "NaN or infinity in the output: exp overflowed (no max subtracted) or every visible weight "
                "underflowed (the max taken over the future too); mask the future with -infinity, then take the "
                "softmax of each row after subtracting its largest visible score");
        INFO(
            "large scores change nothing: softmax(s) = softmax(s - max_j s_j) exactly, so subtracting each row's "
            "max is the only change a softmax may make to the scores (clipping or rescaling them changes the "
            "weights)");
        CHECK_TENSOR(got, by_hand(c, grouped(c.Hq, c.Hkv)), 1e-9);
    }
}

// The exercise is to build attention from engine ops; the fused ones are
// what it is graded against. Checked on the ops RUN, so a call under
// NoGradGuard or inside a backward shows too.
TEST_CASE("ex14 gqa_attention is built from engine ops: ag::attention and ag::causal_attention never run") {
    grading::Random rng(1409);
    for (int n = 0; n < 6; ++n) {
        const Case c = random_case(rng, rng.integer(1, 3), rng.integer(1, 3), 6);
        INFO(describe(c));
        const std::vector<std::string> ops = grading::ops_run(
            [&] { return ex14::gqa_attention(grading::leaf(c.q), grading::leaf(c.k), grading::leaf(c.v)); }, true);
        for (const char* fused : {"attention", "causal_attention", "attention_packed", "attention_packed_qkv"})
            if (std::find(ops.begin(), ops.end(), fused) != ops.end())
                FAIL("you ran the engine's fused attention (op \""
                     << fused << "\": ag::attention, ag::causal_attention, ag::attention_packed or "
                     << "ag::attention_packed_qkv); build the attention from engine ops (matmul, "
                     << "masked_fill, softmax, …): the fused op is what it is graded against");
    }
}

TEST_CASE("ex14 gradients reach q, k and v and pass the gradient check") {
    grading::Random rng(1405);
    for (int n = 0; n < 30; ++n) {
        const Case c = random_case(rng, rng.integer(1, 3), rng.integer(1, 3), 6);
        INFO(describe(c) << "; L = Σ out ⊙ w for a random w");
        const auto got = grading::forward_backward(
            [](const std::vector<Tensor>& in) { return ex14::gqa_attention(in[0], in[1], in[2]); }, {c.q, c.k, c.v},
            1400 + static_cast<uint64_t>(n));
        const auto want = grading::forward_backward(
            [](const std::vector<Tensor>& in) {
                return causal(in[0], pick_heads(in[1], grouped(in[0].size(1), in[1].size(1))),
                              pick_heads(in[2], grouped(in[0].size(1), in[1].size(1))));
            },
            {c.q, c.k, c.v}, 1400 + static_cast<uint64_t>(n));
        grading::check_same_gradients(got, want, {"q", "k", "v"}, 1e-8);
    }
    for (const auto& [Hkv, g] : {std::pair<int64_t, int64_t>{2, 2}, {1, 3}, {3, 1}}) {
        const int64_t T = 4, dh = 3;
        INFO("gradient check at T = 4, Hkv = " << Hkv << ", g = " << g << ", dh = 3");
        grading::check_gradients("gqa_attention, gradients of q, k, v",
                                 [](const std::vector<Tensor>& in) { return ex14::gqa_attention(in[0], in[1], in[2]); },
                                 {grading::leaf(grading::random_tensor(rng, {T, Hkv * g, dh})),
                                  grading::leaf(grading::random_tensor(rng, {T, Hkv, dh})),
                                  grading::leaf(grading::random_tensor(rng, {T, Hkv, dh}))});
    }
}
