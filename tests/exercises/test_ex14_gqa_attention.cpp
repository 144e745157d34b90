// Exercise 14 · causal grouped-query attention from engine ops (§5.2):
// kv_head(), the output against the reference and ag::causal_attention, GQA
// as MHA on copied K/V heads, MHA and MQA against attention written out
// head by head, causality, and gradients. Diagnoses heads grouped the
// wrong way (h % Hkv), a missing or shifted causal mask, and a missing
// 1/sqrt(dh).
#include <cmath>
#include <string>

#include "tensor_checks.h"
#include "exercises/ex14_gqa_attention.h"
#include "reference/ex14_gqa_attention.h"

namespace ref = ex14_reference;
using ag::Tensor;
using Indices = std::vector<int64_t>;  // heads or positions

namespace {

struct Case {
    Tensor q, k, v;
    int64_t T, Hq, Hkv, dh;
};

// q [T, Hq, dh], k, v [T, Hkv, dh]; entries spread enough that the softmax
// is far from uniform.
Case random_case(grading::Random& rng, int64_t Hkv, int64_t g, int64_t T_max = 10, int64_t T_min = 1) {
    const int64_t T = rng.integer(T_min, T_max), dh = rng.integer(1, 8), Hq = Hkv * g;
    return {grading::random_tensor(rng, {T, Hq, dh}, 1.5),
            grading::random_tensor(rng, {T, Hkv, dh}, 1.5),
            grading::random_tensor(rng, {T, Hkv, dh}),
            T,
            Hq,
            Hkv,
            dh};
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
//   out[t, h] = Σ_{j ≤ t} softmax_j(q[t,h]·k[j,heads[h]] / √dh) v[j,heads[h]].
Tensor by_hand(const Case& c, const Indices& heads) {
    std::vector<double> out;
    const auto at = [](const Tensor& x, int64_t t, int64_t h, int64_t i) { return x.at({t, h, i}); };
    for (int64_t t = 0; t < c.T; ++t)
        for (int64_t h = 0; h < c.Hq; ++h) {
            const int64_t kv = heads[static_cast<size_t>(h)];
            std::vector<double> score;
            double top = -INFINITY, total = 0.0;
            for (int64_t j = 0; j <= t; ++j) {
                double s = 0.0;
                for (int64_t i = 0; i < c.dh; ++i) s += at(c.q, t, h, i) * at(c.k, j, kv, i);
                score.push_back(s / std::sqrt(static_cast<double>(c.dh)));
                top = std::max(top, score.back());
            }
            for (double& s : score) total += (s = std::exp(s - top));
            for (int64_t i = 0; i < c.dh; ++i) {
                double o = 0.0;
                for (int64_t j = 0; j <= t; ++j) o += score[static_cast<size_t>(j)] / total * at(c.v, j, kv, i);
                out.push_back(o);
            }
        }
    return Tensor::from({c.T, c.Hq, c.dh}, out);
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
    // (With T = 2 no mask and a mask off by one give the same output.)
    if (c.T == 2 && is(engine(c.q, k, v, shifted_positions(c.T, 1))))
        FAIL("query 0 saw key 1: your causal mask is missing or off by one; query t sees keys j ≤ t only");
    if (c.T > 2 && is(engine(c.q, k, v, Indices(static_cast<size_t>(c.T), c.T - 1))))
        FAIL("you left out the causal mask: query t may only see keys j ≤ t");
    if (c.T > 2 && is(engine(c.q, k, v, shifted_positions(c.T, 1))))
        FAIL("your mask is off by one: query t sees keys j ≤ t, itself included, and no later one");
    if (c.dh > 1 && is(causal(c.q * std::sqrt(static_cast<double>(c.dh)), k, v)))
        FAIL("you left out the scale: scores are q·k / sqrt(dh)");
    if (c.dh > 1 && is(causal(c.q / std::sqrt(static_cast<double>(c.dh)), k, v)))
        FAIL("you divided the scores by dh; the scale is 1 / sqrt(dh)");
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

TEST_CASE("ex14 gradients reach q, k and v and pass the gradient check") {
    grading::Random rng(1405);
    for (int n = 0; n < 30; ++n) {
        const Case c = random_case(rng, rng.integer(1, 3), rng.integer(1, 3), 6);
        INFO(describe(c) << "; L = Σ out ⊙ w for a random w");
        for (const auto& node : ag::topological_order(ex14::gqa_attention(grading::leaf(c.q), c.k, c.v)))
            if (node->op.find("attention") != std::string::npos)
                FAIL("you called ag::" << node->op << "; build the attention from engine ops (matmul, masked_fill, "
                                       << "softmax, …): ag::causal_attention is what it is graded against");
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
