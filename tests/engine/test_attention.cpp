// §5 GQA and §6 sliding windows: the fused attention op against the same
// computation written with engine ops (matmul, masked_fill, softmax), its
// gradients against central differences, the KV-cache (explicit positions)
// form, the probabilities it reports, and bitwise thread independence.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/ranges.h>

#include "autograd/kernels/head_row.h"
#include "engine/helpers.h"

using ag::Shape;
using ag::Tensor;
using Catch::Contains;
using In = std::vector<Tensor>;
using Positions = std::vector<int64_t>;

namespace {

Positions iota(int64_t n, int64_t start = 0) {
    Positions p(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) p[static_cast<size_t>(i)] = start + i;
    return p;
}

// The visibility rule of ops.h, written out again: query at qp sees the key
// at kp iff 0 <= kp <= qp and (W == 0 or qp - kp < W).
bool sees(int64_t qp, int64_t kp, int64_t window) { return kp >= 0 && kp <= qp && (window == 0 || qp - kp < window); }

// Index list [n] with entry h = h / g: KV head of each query head.
Tensor head_map(int64_t Hq, int64_t g) {
    std::vector<double> idx(static_cast<size_t>(Hq));
    for (int64_t h = 0; h < Hq; ++h) idx[static_cast<size_t>(h)] = static_cast<double>(h / g);
    return Tensor::from({Hq}, idx);
}

struct Reference {
    Tensor out;    // [B, T, Hq, dh]
    Tensor probs;  // [B, Hq, T, S]
};

// Attention from small engine ops: K and V heads repeated to Hq heads by
// index_select, scores by matmul, invisible keys set to -inf, softmax,
// matmul with V. Differentiable, so its gradients are a reference too.
// (A query that sees no key would give 0/0 here: callers avoid it.)
Reference reference(const Tensor& q, const Tensor& k, const Tensor& v, const Positions& q_pos, const Positions& k_pos,
                    int64_t window) {
    const int64_t T = q.size(1), S = k.size(1), Hq = q.size(2), Hkv = k.size(2), dh = q.size(3);
    const Tensor heads = head_map(Hq, Hq / Hkv);
    const Tensor qh = ag::permute(q, {0, 2, 1, 3});                              // [B,Hq,T,dh]
    const Tensor kh = ag::index_select(ag::permute(k, {0, 2, 1, 3}), 1, heads);  // [B,Hq,S,dh]
    const Tensor vh = ag::index_select(ag::permute(v, {0, 2, 1, 3}), 1, heads);  // [B,Hq,S,dh]
    std::vector<double> hidden(static_cast<size_t>(T * S));
    for (int64_t t = 0; t < T; ++t)
        for (int64_t s = 0; s < S; ++s)
            hidden[static_cast<size_t>(t * S + s)] =
                sees(q_pos[static_cast<size_t>(t)], k_pos[static_cast<size_t>(s)], window) ? 0.0 : 1.0;
    const Tensor scores = ag::matmul(qh, ag::transpose(kh, 2, 3)) / std::sqrt(static_cast<double>(dh));
    const Tensor p =
        ag::softmax(ag::masked_fill(scores, Tensor::from({T, S}, hidden), -std::numeric_limits<double>::infinity()));
    return {ag::permute(ag::matmul(p, vh), {0, 2, 1, 3}), p.detach()};
}

void check_grad(const std::string& what, const ag::TensorFunction& f, const In& inputs) {
    const ag::GradcheckResult r = ag::gradcheck(f, inputs);
    INFO(what << ": ok=" << r.ok << ", max_abs_error=" << r.max_abs_error << ", max_rel_error=" << r.max_rel_error
              << ", message: " << r.message);
    CHECK(r.ok);
    CHECK(r.max_abs_error < 1e-6);
}

struct Heads {
    const char* name;
    int64_t Hq, Hkv;
};
const Heads kHeads[] = {{"MHA", 4, 4}, {"GQA", 4, 2}, {"MQA", 4, 1}};

// The elements of t that are not exactly 0, as " [index]=value" (the
// first 8 of them; empty if none).
std::string nonzeros(const Tensor& t) {
    std::string s;
    const auto v = t.to_vector();
    size_t count = 0;
    for (size_t i = 0; i < v.size(); ++i)
        if (v[i] != 0.0 && count++ < 8) s += fmt::format(" [{}]={:.17g}", i, v[i]);
    if (count > 8) s += fmt::format(" ... ({} nonzero values)", count);
    return s;
}

// Row t of a [B, T, H, dh] tensor, all b and h.
Tensor time_row(const Tensor& x, int64_t t) { return ag::narrow(x, 1, t, 1).detach(); }

}  // namespace

namespace {

// Causal attention on random q, k, v [B, T, H, dh] against the reference's
// chain of engine ops: output, weights, the same through positions 0..T-1
// and packed as B sequences of T (bitwise equal to causal), and gradients.
void check_causal(const std::string& name, int64_t B, int64_t T, int64_t dh, const Heads& hd, int64_t W,
                  ag::Generator& gen) {
    const Tensor q = test::rand_t({B, T, hd.Hq, dh}, gen, -2, 2);
    const Tensor k = test::rand_t({B, T, hd.Hkv, dh}, gen, -2, 2);
    const Tensor v = test::rand_t({B, T, hd.Hkv, dh}, gen, -2, 2);
    const Tensor upstream = test::rand_t({B, T, hd.Hq, dh}, gen, -1, 1, false);

    Tensor weights;
    const Tensor out = ag::causal_attention(q, k, v, W, &weights);
    const Reference ref = reference(q, k, v, iota(T), iota(T), W);
    test::check_close(name + ": causal_attention output", out, ref.out, 1e-14);
    test::check_close(name + ": weights", weights, ref.probs, 1e-14);
    test::check_close(name + ": attention with positions 0..T-1", ag::attention(q, k, v, iota(T), iota(T), W), ref.out,
                      1e-14);
    std::vector<int64_t> starts;
    for (int64_t b = 0; b <= B; ++b) starts.push_back(b * T);
    const Tensor packed = ag::attention_packed(q.reshape({B * T, hd.Hq, dh}), k.reshape({B * T, hd.Hkv, dh}),
                                               v.reshape({B * T, hd.Hkv, dh}), starts, W);
    INFO(name << ": max |packed - causal| = " << ag::max_abs_diff(packed.reshape(out.shape()), out));
    CHECK(ag::max_abs_diff(packed.reshape(out.shape()), out) == 0.0);

    // gradients against the reference's chain of ops
    ag::sum(out * upstream).backward();
    const Tensor dq = q.grad(), dk = k.grad(), dv = v.grad();
    for (Tensor x : {q, k, v}) x.zero_grad();
    ag::sum(ref.out * upstream).backward();
    test::check_close(name + ": dq", dq, q.grad(), 1e-13);
    test::check_close(name + ": dk", dk, k.grad(), 1e-13);
    test::check_close(name + ": dv", dv, v.grad(), 1e-13);
}

}  // namespace

TEST_CASE("attention equals matmul + mask + softmax + matmul: MHA, GQA, MQA, windows", "[attention]") {
    ag::Generator gen(11);
    for (const Heads& hd : kHeads)
        for (const int64_t W : {0, 1, 2, 3})
            check_causal(fmt::format("{} Hq={} Hkv={} window={}", hd.name, hd.Hq, hd.Hkv, W), 2, 7, 8, hd, W, gen);
}

TEST_CASE("attention equals the reference at every head size its kernels are compiled for, and others", "[attention]") {
    // dh = 8, 16, …, 64 run kernels compiled for that size (rows in registers), any other dh the
    // generic ones; both against the chain of engine ops, output and gradients, causal and packed
    ag::Generator gen(18);
    for (const int64_t dh : {8, 16, 24, 32, 40, 48, 56, 64, 12, 5})
        for (const Heads& hd : kHeads)
            for (const int64_t W : {0, 3})
                check_causal(fmt::format("dh={} {} window={}", dh, hd.name, W), 2, 6, dh, hd, W, gen);
}

namespace {

// HeadRow<DH>::dots for 0 … 9 rows picked from a matrix of 12 rows (several
// groups of four and every remainder) against dot and kernels::dot, bit for bit.
template <int64_t DH>
void check_dots(int64_t dh, ag::Generator& gen) {
    const int64_t stride = dh + 3, rows = 12;  // rows of a wider matrix, as a key's head in k [S, Hkv, dh]
    const std::vector<double> row = test::rand_t({dh}, gen, -2, 2, false).to_vector();
    const std::vector<double> matrix = test::rand_t({rows * stride}, gen, -2, 2, false).to_vector();
    ag::kernels::HeadRow<DH> head(dh);
    head.load(row.data());
    for (int64_t n = 0; n <= 9; ++n) {
        std::vector<int64_t> picked;
        for (int64_t u = 0; u < n; ++u) picked.push_back((5 * u + 3) % rows);
        std::vector<double> out(static_cast<size_t>(n));
        head.dots(matrix.data(), picked.data(), stride, n, out.data());
        for (int64_t u = 0; u < n; ++u) {
            const double* y = matrix.data() + picked[u] * stride;
            const double one = head.dot(y), reference = ag::kernels::dot(row.data(), y, dh);
            INFO(fmt::format("dh {} (DH {}), {} rows, row {}: dots {:a}, dot {:a}, kernels::dot {:a}", dh, DH, n, u,
                             out[u], one, reference));
            CHECK(std::memcmp(&out[u], &one, sizeof one) == 0);
            CHECK(std::memcmp(&out[u], &reference, sizeof reference) == 0);
        }
    }
}

}  // namespace

TEST_CASE("a head row's dots with several keys give each the bits of its own dot", "[attention]") {
    // the scores of a query: dots takes its keys four at a time, adding their lanes together
    ag::Generator gen(19);
    check_dots<8>(8, gen);
    check_dots<16>(16, gen);
    check_dots<64>(64, gen);
    check_dots<0>(12, gen);
    check_dots<0>(16, gen);
}

TEST_CASE("attention with explicit positions equals the reference: a later block of queries", "[attention]") {
    // 3 queries at positions 4, 5, 6 over 7 keys at 0..6 (a prefill after a prompt of 4)
    ag::Generator gen(12);
    const Positions q_pos{4, 5, 6}, k_pos = iota(7);
    for (const Heads& hd : kHeads) {
        for (const int64_t W : {0, 2, 3}) {
            const std::string name = fmt::format("{} window={} q_pos={}", hd.name, W, test::positions_str(q_pos));
            const Tensor q = test::rand_t({2, 3, hd.Hq, 6}, gen, -2, 2);
            const Tensor k = test::rand_t({2, 7, hd.Hkv, 6}, gen, -2, 2);
            const Tensor v = test::rand_t({2, 7, hd.Hkv, 6}, gen, -2, 2);
            Tensor weights;
            const Tensor out = ag::attention(q, k, v, q_pos, k_pos, W, &weights);
            const Reference ref = reference(q, k, v, q_pos, k_pos, W);
            test::check_close(name + ": output", out, ref.out, 1e-14);
            test::check_close(name + ": weights", weights, ref.probs, 1e-14);
        }
    }
}

TEST_CASE("GQA equals MHA with each KV head copied to its query heads", "[attention][gqa]") {
    ag::Generator gen(13);
    const int64_t B = 2, T = 6, Hq = 4, dh = 8;
    for (const int64_t Hkv : {2, 1}) {
        for (const int64_t W : {0, 3}) {
            const int64_t g = Hq / Hkv;
            const std::string name = fmt::format("Hkv={} (g={}) window={}", Hkv, g, W);
            Tensor q = test::rand_t({B, T, Hq, dh}, gen), k = test::rand_t({B, T, Hkv, dh}, gen),
                   v = test::rand_t({B, T, Hkv, dh}, gen);
            const Tensor upstream = test::rand_t({B, T, Hq, dh}, gen, -1, 1, false);

            const Tensor gqa = ag::causal_attention(q, k, v, W);
            ag::sum(gqa * upstream).backward();
            const Tensor dq = q.grad(), dk = k.grad(), dv = v.grad();
            for (Tensor x : {q, k, v}) x.zero_grad();

            // query head h reads copy h of KV head h / g
            const Tensor heads = head_map(Hq, g);
            const Tensor mha = ag::causal_attention(q, ag::index_select(k, 2, heads), ag::index_select(v, 2, heads), W);
            ag::sum(mha * upstream).backward();

            // the same per-head arithmetic: bitwise equal outputs and dq
            INFO(name << ": max |GQA - MHA| = " << ag::max_abs_diff(gqa, mha));
            CHECK(ag::max_abs_diff(gqa, mha) == 0.0);
            INFO(name << ": max |dq GQA - dq MHA| = " << ag::max_abs_diff(dq, q.grad()));
            CHECK(ag::max_abs_diff(dq, q.grad()) == 0.0);
            // dk, dv: the group's heads summed in another order
            test::check_close(name + ": dk", dk, k.grad(), 1e-15);
            test::check_close(name + ": dv", dv, v.grad(), 1e-15);
        }
    }
}

TEST_CASE("decoding one query against a rotated cache with empty slots equals the full causal pass",
          "[attention][cache]") {
    ag::Generator gen(14);
    const int64_t T = 9, Hq = 4, Hkv = 2, dh = 8;
    const Tensor q = test::rand_t({2, T, Hq, dh}, gen, -2, 2, false);
    const Tensor k = test::rand_t({2, T, Hkv, dh}, gen, -2, 2, false);
    const Tensor v = test::rand_t({2, T, Hkv, dh}, gen, -2, 2, false);
    // row T of these holds garbage for the empty and the not-yet-seen slots
    const Tensor k_store = ag::cat({k, test::rand_t({2, 1, Hkv, dh}, gen, -50, 50, false)}, 1);
    const Tensor v_store = ag::cat({v, test::rand_t({2, 1, Hkv, dh}, gen, -50, 50, false)}, 1);

    struct Case {
        int64_t window, t;
        Positions slots;  // the position held by each cache slot (-1: empty; T: a future position)
    };
    const std::vector<Case> cases = {
        // full attention: every past position somewhere in the cache, rotated, plus empty slots
        {0, 8, {5, 6, 7, 8, -1, 0, 1, 2, 3, 4, -1}},
        // a rolling cache of W = 4 slots (position p in slot p mod 4), then a stale position 4,
        // an empty slot and a position from the future that must stay unseen
        {4, 8, {8, 5, 6, 7, 4, -1, 9}},
        {4, 6, {4, 5, 6, 3, 2, -1}},
        {1, 5, {5, -1, 4, 3}},
        {3, 2, {-1, 2, 1, 0, -1}},
    };
    for (const Case& c : cases) {
        const std::string name =
            fmt::format("query at {}, window {}, slots {}", c.t, c.window, test::positions_str(c.slots));
        std::vector<double> rows;
        for (int64_t p : c.slots) rows.push_back(static_cast<double>(p >= 0 && p < T ? p : T));
        const Tensor idx = Tensor::from({static_cast<int64_t>(rows.size())}, rows);
        const Tensor k_cache = ag::index_select(k_store, 1, idx), v_cache = ag::index_select(v_store, 1, idx);

        Tensor weights;
        const Tensor decoded = ag::attention(time_row(q, c.t), k_cache, v_cache, {c.t}, c.slots, c.window, &weights);
        const Tensor full = time_row(ag::causal_attention(q, k, v, c.window), c.t);
        test::check_close(name + ": decode vs full", decoded, full, 1e-15);
        // the slots the query may not see get probability exactly 0
        for (size_t s = 0; s < c.slots.size(); ++s) {
            if (sees(c.t, c.slots[s], c.window)) continue;
            const Tensor col = ag::narrow(weights, 3, static_cast<int64_t>(s), 1);
            INFO(name << ": weights of unseen slot " << s << " (position " << c.slots[s] << "):" << nonzeros(col));
            CHECK(ag::max_abs(col) == 0.0);
        }
    }
}

TEST_CASE("a query that sees no key outputs 0 and gets no gradient", "[attention]") {
    ag::Generator gen(15);
    // query 0 at position 0 sees nothing (keys at 1, 2, 3 are later, slot 2 is empty);
    // query 1 at 2 sees keys 1, 2; query 2 at 3 sees keys 1, 2, 3 (window 0) or 3 (window 1)
    const Positions q_pos{0, 2, 3}, k_pos{1, 2, -1, 3};
    for (const int64_t W : {0, 1}) {
        Tensor q = test::rand_t({2, 3, 2, 4}, gen), k = test::rand_t({2, 4, 1, 4}, gen),
               v = test::rand_t({2, 4, 1, 4}, gen);
        Tensor weights;
        const Tensor out = ag::attention(q, k, v, q_pos, k_pos, W, &weights);
        ag::sum(out * test::rand_t(out.shape(), gen, -1, 1, false)).backward();
        INFO("window " << W << ", q_pos " << test::positions_str(q_pos) << ", k_pos " << test::positions_str(k_pos));
        INFO("output of query 0:" << nonzeros(time_row(out, 0)));
        CHECK(ag::max_abs(time_row(out, 0)) == 0.0);
        INFO("dq of query 0:" << nonzeros(time_row(q.grad(), 0)));
        CHECK(ag::max_abs(time_row(q.grad(), 0)) == 0.0);
        INFO("weights of query 0:" << nonzeros(ag::narrow(weights, 2, 0, 1)));
        CHECK(ag::max_abs(ag::narrow(weights, 2, 0, 1)) == 0.0);
        // the empty slot gets no gradient either; the keys that are seen do
        INFO("dk, dv of the empty slot:" << nonzeros(time_row(k.grad(), 2)) << nonzeros(time_row(v.grad(), 2)));
        CHECK(ag::max_abs(time_row(k.grad(), 2)) == 0.0);
        CHECK(ag::max_abs(time_row(v.grad(), 2)) == 0.0);
        CHECK(ag::max_abs(time_row(out, 1)) > 0.0);
        CHECK(ag::max_abs(time_row(v.grad(), 3)) > 0.0);
        // (with window 1 each query sees one key: p = 1 whatever q is, so dq = 0 everywhere)
        if (W == 0) CHECK(ag::max_abs(time_row(q.grad(), 2)) > 0.0);
    }
    // a cache with nothing in it: everything is 0
    Tensor q = test::rand_t({1, 2, 2, 4}, gen), k = test::rand_t({1, 3, 2, 4}, gen),
           v = test::rand_t({1, 3, 2, 4}, gen);
    const Tensor out = ag::attention(q, k, v, {5, 6}, {-1, -1, -1});
    ag::sum(out * 3.0).backward();
    INFO("empty cache: output" << nonzeros(out) << "; dq" << nonzeros(q.grad()) << "; dk" << nonzeros(k.grad())
                               << "; dv" << nonzeros(v.grad()));
    CHECK(ag::max_abs(out) == 0.0);
    CHECK(ag::max_abs(q.grad()) + ag::max_abs(k.grad()) + ag::max_abs(v.grad()) == 0.0);
}

// No query (T = 0) leaves nothing to compute, however many heads there are:
// the (batch row, head) pairs are not walked one by one (2^40 of them took
// hours), and the keys' gradients are 0.
TEST_CASE("attention over no query: empty output, zero key gradients, whatever the head count", "[attention]") {
    const int64_t heads = int64_t{1} << 40;
    ag::Generator gen(16);
    Tensor q = Tensor::zeros({1, 0, heads, 1}, true), k = test::rand_t({1, 3, 1, 1}, gen),
           v = test::rand_t({1, 3, 1, 1}, gen);
    Tensor weights;
    const Tensor out = ag::attention(q, k, v, {}, {0, 1, 2}, 0, &weights);
    CHECK(out.shape() == Shape{1, 0, heads, 1});
    CHECK(weights.shape() == Shape{1, heads, 0, 3});
    ag::sum(out).backward();
    CHECK(q.grad().numel() == 0);
    INFO("dk" << nonzeros(k.grad()) << "; dv" << nonzeros(v.grad()));
    CHECK(ag::max_abs(k.grad()) + ag::max_abs(v.grad()) == 0.0);

    Tensor pq = Tensor::zeros({0, heads, 1}, true), pk = Tensor::zeros({0, 1, 1}, true),
           pv = Tensor::zeros({0, 1, 1}, true);
    const Tensor packed = ag::attention_packed(pq, pk, pv, {0}, 0, &weights);
    CHECK(packed.shape() == Shape{0, heads, 1});
    CHECK(weights.numel() == 0);
    ag::sum(packed).backward();
    CHECK(pq.grad().numel() + pk.grad().numel() + pv.grad().numel() == 0);
}

TEST_CASE("gradcheck: attention w.r.t. q, k, v", "[attention][gradcheck]") {
    ag::Generator gen(16);
    const int64_t B = 2, T = 5, dh = 3;
    for (const Heads& hd : kHeads) {
        for (const int64_t W : {0, 2}) {
            const std::string name = fmt::format("{} window {}", hd.name, W);
            // separate contiguous leaves
            check_grad(name + ", contiguous q, k, v",
                       [W](const In& x) { return ag::causal_attention(x[0], x[1], x[2], W); },
                       {test::rand_t({B, T, hd.Hq, dh}, gen), test::rand_t({B, T, hd.Hkv, dh}, gen),
                        test::rand_t({B, T, hd.Hkv, dh}, gen)});
            // q, k, v cut out of one [B, T, Hq + 2 Hkv, dh] tensor, like the heads of a fused qkv Linear
            const int64_t Hq = hd.Hq, Hkv = hd.Hkv;
            const auto split = [Hq, Hkv, W](const In& x) {
                const Tensor q = ag::narrow(x[0], 2, 0, Hq), k = ag::narrow(x[0], 2, Hq, Hkv),
                             v = ag::narrow(x[0], 2, Hq + Hkv, Hkv);
                if (q.is_contiguous() || k.is_contiguous() || v.is_contiguous())
                    throw std::logic_error("the narrowed q, k, v were meant to be non-contiguous");
                return ag::causal_attention(q, k, v, W);
            };
            check_grad(name + ", q, k, v narrowed from one tensor", split,
                       {test::rand_t({B, T, Hq + 2 * Hkv, dh}, gen)});
            // transposed views [B, H, T, dh] -> [B, T, H, dh]
            check_grad(name + ", transposed q, k, v",
                       [W](const In& x) {
                           return ag::causal_attention(ag::transpose(x[0], 1, 2), ag::transpose(x[1], 1, 2),
                                                       ag::transpose(x[2], 1, 2), W);
                       },
                       {test::rand_t({B, hd.Hq, T, dh}, gen), test::rand_t({B, hd.Hkv, T, dh}, gen),
                        test::rand_t({B, hd.Hkv, T, dh}, gen)});
        }
    }
    // explicit positions: a rotated cache with an empty slot, a query that sees nothing
    const Positions q_pos{0, 3, 4}, k_pos{3, 4, -1, 1, 2};
    for (const int64_t W : {0, 2}) {
        check_grad(fmt::format("GQA, q_pos {}, k_pos {}, window {}", test::positions_str(q_pos),
                               test::positions_str(k_pos), W),
                   [&, W](const In& x) { return ag::attention(x[0], x[1], x[2], q_pos, k_pos, W); },
                   {test::rand_t({2, 3, 4, 3}, gen), test::rand_t({2, 5, 2, 3}, gen), test::rand_t({2, 5, 2, 3}, gen)});
    }
}

TEST_CASE("attention weights: a distribution over the visible keys, without gradient", "[attention]") {
    ag::Generator gen(17);
    struct Case {
        Positions q_pos, k_pos;
        int64_t window;
    };
    const std::vector<Case> cases = {
        {iota(6), iota(6), 0}, {iota(6), iota(6), 3}, {{7, 8}, {8, 5, -1, 6, 7, 4}, 4}, {{2, 3}, {0, 1, 2, 3}, 1}};
    for (const Case& c : cases) {
        const std::string name = fmt::format("q_pos {}, k_pos {}, window {}", test::positions_str(c.q_pos),
                                             test::positions_str(c.k_pos), c.window);
        const int64_t B = 2, T = static_cast<int64_t>(c.q_pos.size()), S = static_cast<int64_t>(c.k_pos.size());
        Tensor q = test::rand_t({B, T, 4, 5}, gen, -3, 3), k = test::rand_t({B, S, 2, 5}, gen, -3, 3),
               v = test::rand_t({B, S, 2, 5}, gen);
        Tensor w;
        const Tensor out = ag::attention(q, k, v, c.q_pos, c.k_pos, c.window, &w);
        INFO(name);
        REQUIRE(w.shape() == Shape{B, 4, T, S});
        CHECK_FALSE(w.requires_grad());
        CHECK(w.grad_fn() == nullptr);
        CHECK(out.requires_grad());
        for (int64_t b = 0; b < B; ++b)
            for (int64_t h = 0; h < 4; ++h)
                for (int64_t t = 0; t < T; ++t) {
                    double sum = 0.0, hidden = 0.0;
                    for (int64_t s = 0; s < S; ++s) {
                        const double p = w.at({b, h, t, s});
                        if (sees(c.q_pos[static_cast<size_t>(t)], c.k_pos[static_cast<size_t>(s)], c.window)) {
                            sum += p;
                        } else {
                            hidden = std::max(hidden, std::fabs(p));
                        }
                    }
                    INFO("b " << b << ", head " << h << ", query " << t << ": Σ visible p = "
                              << fmt::format("{:.17g}", sum) << ", max |p| on invisible keys = " << hidden);
                    CHECK(std::fabs(sum - 1.0) < 1e-15);
                    CHECK(hidden == 0.0);
                }
        // the weights are a copy: overwriting them changes nothing in the backward
        const Tensor upstream = test::rand_t(out.shape(), gen, -1, 1, false);
        std::fill_n(w.data(), w.numel(), 0.0);
        ag::sum(out * upstream).backward();
        const Tensor dq = q.grad();
        q.zero_grad();
        ag::sum(ag::attention(q, k, v, c.q_pos, c.k_pos, c.window) * upstream).backward();
        INFO("dq with the weights overwritten vs without weights: max |diff| " << ag::max_abs_diff(dq, q.grad()));
        CHECK(ag::max_abs_diff(dq, q.grad()) == 0.0);
    }
}

namespace {

using Results = std::vector<std::pair<std::string, std::vector<double>>>;

// A training-sized attention layer (RoPE on q and k, then attention), forward and backward.
Results run_layer(int threads, int64_t Hkv, int64_t window) {
    const ag::ThreadCountGuard use(threads);
    REQUIRE(ag::num_threads() == threads);
    ag::Generator gen(31);
    const int64_t B = 8, T = 40, Hq = 4, dh = 16;
    Tensor q = Tensor::randn({B, T, Hq, dh}, gen, 0, 1, true);
    Tensor k = Tensor::randn({B, T, Hkv, dh}, gen, 0, 1, true);
    Tensor v = Tensor::randn({B, T, Hkv, dh}, gen, 0, 1, true);
    const Tensor upstream = Tensor::randn({B, T, Hq, dh}, gen);
    Tensor weights;
    const Positions pos = iota(T);
    const Tensor out = ag::causal_attention(ag::rope(q, pos), ag::rope(k, pos), v, window, &weights);
    out.backward(upstream);
    return {{"output", out.to_vector()},
            {"weights", weights.to_vector()},
            {"dq", q.grad().to_vector()},
            {"dk", k.grad().to_vector()},
            {"dv", v.grad().to_vector()}};
}

void check_bitwise_equal(const std::string& what, const Results& one, const Results& two) {
    REQUIRE(one.size() == two.size());
    for (size_t i = 0; i < one.size(); ++i) {
        const auto& [name, a] = one[i];
        const auto& b = two[i].second;
        REQUIRE(a.size() == b.size());
        size_t differing = 0, first = a.size();
        for (size_t j = 0; j < a.size(); ++j)
            if (std::memcmp(&a[j], &b[j], sizeof(double)) != 0 && differing++ == 0) first = j;
        INFO(what << ", " << name << ": " << differing << " of " << a.size() << " values differ"
                  << (differing ? fmt::format("; first at {}: {:.17g} vs {:.17g}", first, a[first], b[first]) : ""));
        CHECK(differing == 0);
    }
}

}  // namespace

TEST_CASE("attention forward and backward are bitwise equal for 1 and 2 threads", "[attention][threads]") {
    // B=8, T=40, Hq=4, dh=16: GQA (Hkv=2) as trained, and MQA (all query heads add into one KV head)
    for (const int64_t Hkv : {2, 1}) {
        for (const int64_t W : {0, 8}) {
            const std::string name = fmt::format("Hkv {}, window {}", Hkv, W);
            const Results one = run_layer(1, Hkv, W);
            const Results two = run_layer(2, Hkv, W);
            check_bitwise_equal(name + ": 1 vs 2 threads", one, two);
            check_bitwise_equal(name + ": 2 threads twice", two, run_layer(2, Hkv, W));
        }
    }
}

TEST_CASE("errors: attention shapes, positions and window", "[attention][errors]") {
    const auto Z = [](const Shape& s) { return Tensor::zeros(s); };
    const Tensor q = Z({2, 3, 4, 8}), k = Z({2, 3, 2, 8});
    const Positions p3 = iota(3);
    CHECK_INVALID(ag::attention(Z({2, 3, 32}), k, k, p3, p3),
                  Contains("attention") && Contains("[2,3,32]") && Contains("4-D"));
    CHECK_INVALID(ag::attention(q, Z({2, 3, 16}), Z({2, 3, 16}), p3, p3), Contains("attention") && Contains("4-D"));
    CHECK_INVALID(ag::attention(q, Z({1, 3, 2, 8}), Z({1, 3, 2, 8}), p3, p3),
                  Contains("attention") && Contains("[2,3,4,8]") && Contains("[1,3,2,8]") && Contains("batch"));
    CHECK_INVALID(ag::attention(q, Z({2, 3, 2, 6}), Z({2, 3, 2, 6}), p3, p3),
                  Contains("attention") && Contains("[2,3,2,6]") && Contains("head size"));
    CHECK_INVALID(ag::attention(q, k, Z({2, 4, 2, 8}), p3, p3),
                  Contains("attention") && Contains("[2,3,2,8]") && Contains("[2,4,2,8]") && Contains("same shape"));
    CHECK_INVALID(ag::attention(q, Z({2, 3, 3, 8}), Z({2, 3, 3, 8}), p3, p3),
                  Contains("attention") && Contains("4 query heads") && Contains("3 KV heads"));
    CHECK_INVALID(ag::attention(q, k, k, {0, 1}, p3), Contains("attention") && Contains("2 query positions for T = 3"));
    CHECK_INVALID(ag::attention(q, k, k, p3, {0, 1, 2, 3}),
                  Contains("attention") && Contains("4 key positions for S = 3"));
    CHECK_INVALID(ag::attention(q, k, k, p3, p3, -1), Contains("attention") && Contains("window -1"));
    CHECK_INVALID(ag::causal_attention(q, Z({2, 5, 2, 8}), Z({2, 5, 2, 8})),
                  Contains("causal_attention") && Contains("[2,5,2,8]") && Contains("T = 3 and S = 5"));
    CHECK_INVALID(ag::causal_attention(Z({3, 4, 8}), k, k), Contains("causal_attention") && Contains("[3,4,8]"));
    CHECK_INVALID(ag::causal_attention(q, k, k, -2), Contains("causal_attention") && Contains("window -2"));
}

// Packed sequences: each sequence alone through causal_attention must give
// exactly its rows of the packed op, and the gradients must match too.
TEST_CASE("packed sequences equal each sequence attended alone", "[attention][packed]") {
    ag::Generator gen(77);
    const Positions starts = {0, 5, 6, 13, 13, 21};  // lengths 5, 1, 7, 0, 8
    const int64_t N = starts.back(), Hq = 4, dh = 8;
    for (int64_t Hkv : {4, 2, 1})
        for (int64_t window : {0, 1, 3}) {
            INFO("Hkv " << Hkv << ", window " << window);
            const Tensor q = Tensor::randn({N, Hq, dh}, gen, 0, 1, true);
            const Tensor k = Tensor::randn({N, Hkv, dh}, gen, 0, 1, true);
            const Tensor v = Tensor::randn({N, Hkv, dh}, gen, 0, 1, true);
            const Tensor packed = ag::attention_packed(q, k, v, starts, window);
            ag::sum(packed * packed).backward();
            for (size_t b = 0; b + 1 < starts.size(); ++b) {
                const int64_t s0 = starts[b], len = starts[b + 1] - starts[b];
                if (len == 0) continue;
                const auto one = [&](const Tensor& x) {
                    Tensor leaf = x.detach().narrow(0, s0, len).contiguous().reshape({1, len, x.size(1), dh});
                    leaf.requires_grad_(true);
                    return leaf;
                };
                Tensor qb = one(q), kb = one(k), vb = one(v);
                const Tensor alone = ag::causal_attention(qb, kb, vb, window);
                ag::sum(alone * alone).backward();
                CHECK(ag::max_abs_diff(alone.reshape({len, Hq, dh}), packed.detach().narrow(0, s0, len)) == 0.0);
                CHECK(ag::max_abs_diff(qb.grad().reshape({len, Hq, dh}), q.grad().narrow(0, s0, len)) < 1e-14);
                CHECK(ag::max_abs_diff(kb.grad().reshape({len, Hkv, dh}), k.grad().narrow(0, s0, len)) < 1e-14);
                CHECK(ag::max_abs_diff(vb.grad().reshape({len, Hkv, dh}), v.grad().narrow(0, s0, len)) < 1e-14);
            }
        }
}

TEST_CASE("packed attention weights: each sequence's block, as when attended alone", "[attention][packed]") {
    ag::Generator gen(78);
    const int64_t B = 3, T = 6, N = B * T, Hq = 4, dh = 8;
    const Positions starts = {0, 6, 12, 18};
    for (int64_t Hkv : {4, 1})
        for (int64_t window : {0, 2}) {
            INFO("Hkv " << Hkv << ", window " << window);
            const Tensor q = Tensor::randn({N, Hq, dh}, gen), k = Tensor::randn({N, Hkv, dh}, gen),
                         v = Tensor::randn({N, Hkv, dh}, gen);
            Tensor packed, alone;
            ag::attention_packed(q, k, v, starts, window, &packed);
            ag::causal_attention(q.reshape({B, T, Hq, dh}), k.reshape({B, T, Hkv, dh}), v.reshape({B, T, Hkv, dh}),
                                 window, &alone);
            REQUIRE(packed.shape() == ag::Shape{B, Hq, T, T});
            CHECK(ag::max_abs_diff(packed, alone) == 0.0);
        }
}

TEST_CASE("gradcheck: packed attention", "[attention][packed][gradcheck]") {
    ag::Generator gen(78);
    const Positions starts = {0, 3, 7};
    const auto f = [&](const In& x) { return ag::attention_packed(x[0], x[1], x[2], starts, 2); };
    const auto r =
        ag::gradcheck(f, {Tensor::randn({7, 2, 4}, gen, 0, 1, true), Tensor::randn({7, 1, 4}, gen, 0, 1, true),
                          Tensor::randn({7, 1, 4}, gen, 0, 1, true)});
    INFO(r.message);
    CHECK(r.ok);
    CHECK_THROWS_WITH(
        ag::attention_packed(Tensor::zeros({7, 2, 4}), Tensor::zeros({7, 1, 4}), Tensor::zeros({7, 1, 4}), {0, 3, 6}),
        Contains("attention_packed") && Contains("N = 7"));
    // the shapes as given, not the [1, N, H, dh] the op reads them as
    CHECK_THROWS_WITH(
        ag::attention_packed(Tensor::zeros({4, 2, 4}), Tensor::zeros({4, 1, 4}), Tensor::zeros({3, 1, 4}), {0, 4}),
        Contains("attention_packed: q [4,2,4], k [4,1,4], v [3,1,4]: k and v must have the same shape"));
}

// GPT's fused projection: q, k and v side by side in each row of one
// [N, (Hq + 2·Hkv)·dh] tensor. The op must read the three blocks where they
// are and give exactly attention_packed's numbers on them, forward and
// backward, with the gradient's blocks in the same columns: a kernel that
// took the rows as contiguous [N, Hq, dh] (row stride Hq·dh, not the fused
// width), or put dk where dq belongs, fails here.
TEST_CASE("fused qkv attention equals attention_packed on the three column blocks", "[attention][packed]") {
    ag::Generator gen(79);
    const Positions starts = {0, 5, 6, 13, 13, 21};  // lengths 5, 1, 7, 0, 8
    const int64_t N = starts.back(), Hq = 4;
    for (int64_t dh : {8, 16, 6})  // registers (8, 16) and any other head size (6)
        for (int64_t Hkv : {4, 2, 1})
            for (int64_t window : {0, 1, 3}) {
                INFO("dh " << dh << ", Hkv " << Hkv << ", window " << window);
                const int64_t width = (Hq + 2 * Hkv) * dh;
                const Tensor qkv = Tensor::randn({N, width}, gen, 0, 1, true);
                const Tensor fused = ag::attention_packed_qkv(qkv, Hq, Hkv, starts, window);
                REQUIRE(fused.shape() == Shape{N, Hq, dh});
                ag::sum(fused * fused).backward();
                const auto block = [&](int64_t col, int64_t heads) {
                    Tensor leaf = qkv.detach().narrow(1, col, heads * dh).contiguous().reshape({N, heads, dh});
                    leaf.requires_grad_(true);
                    return leaf;
                };
                Tensor q = block(0, Hq), k = block(Hq * dh, Hkv), v = block((Hq + Hkv) * dh, Hkv);
                const Tensor apart = ag::attention_packed(q, k, v, starts, window);
                ag::sum(apart * apart).backward();
                CHECK(ag::max_abs_diff(fused.detach(), apart.detach()) == 0.0);
                const Tensor g = qkv.grad();
                CHECK(ag::max_abs_diff(g.narrow(1, 0, Hq * dh), q.grad().reshape({N, Hq * dh})) == 0.0);
                CHECK(ag::max_abs_diff(g.narrow(1, Hq * dh, Hkv * dh), k.grad().reshape({N, Hkv * dh})) == 0.0);
                CHECK(ag::max_abs_diff(g.narrow(1, (Hq + Hkv) * dh, Hkv * dh), v.grad().reshape({N, Hkv * dh})) == 0.0);
            }
}

TEST_CASE("fused qkv attention: weights, gradcheck, 1 and 2 threads, errors", "[attention][packed][gradcheck]") {
    ag::Generator gen(80);
    const int64_t B = 3, T = 6, N = B * T, Hq = 4, Hkv = 2, dh = 8, width = (Hq + 2 * Hkv) * dh;
    const Positions starts = {0, 6, 12, 18};
    const Tensor qkv = Tensor::randn({N, width}, gen);
    SECTION("the weights are attention_packed's") {
        Tensor fused, apart;
        ag::attention_packed_qkv(qkv, Hq, Hkv, starts, 2, &fused);
        ag::attention_packed(qkv.narrow(1, 0, Hq * dh).reshape({N, Hq, dh}),
                             qkv.narrow(1, Hq * dh, Hkv * dh).reshape({N, Hkv, dh}),
                             qkv.narrow(1, (Hq + Hkv) * dh, Hkv * dh).reshape({N, Hkv, dh}), starts, 2, &apart);
        REQUIRE(fused.shape() == Shape{B, Hq, T, T});
        CHECK(ag::max_abs_diff(fused, apart) == 0.0);
    }
    SECTION("gradcheck") {
        const Positions few = {0, 3, 7};
        const auto f = [&](const In& x) { return ag::attention_packed_qkv(x[0], 2, 1, few, 2); };
        const auto r = ag::gradcheck(f, {Tensor::randn({7, 16}, gen, 0, 1, true)});
        INFO(r.message);
        CHECK(r.ok);
    }
    SECTION("the same bits for 1 and 2 threads") {
        // 64 packed rows: enough work per head that the forward and both
        // backward loops split between the threads (18 rows ran inline).
        const Positions long_starts = {0, 16, 32, 48, 64};
        const Tensor long_qkv = Tensor::randn({64, width}, gen);
        const auto run = [&](int threads) {
            const ag::ThreadCountGuard use(threads);
            Tensor x = long_qkv.detach();
            x.requires_grad_(true);
            const Tensor out = ag::attention_packed_qkv(x, Hq, Hkv, long_starts);
            ag::sum(out * out).backward();
            return std::make_pair(out.detach(), x.grad());
        };
        const auto [out1, grad1] = run(1);
        const auto [out2, grad2] = run(2);
        CHECK(std::memcmp(out1.data(), out2.data(), static_cast<size_t>(out1.numel()) * sizeof(double)) == 0);
        CHECK(std::memcmp(grad1.data(), grad2.data(), static_cast<size_t>(grad1.numel()) * sizeof(double)) == 0);
    }
    SECTION("errors name the op and what is wrong") {
        const auto Z = [](const Shape& s) { return Tensor::zeros(s); };
        CHECK_INVALID(ag::attention_packed_qkv(Z({N, Hq + 2 * Hkv, dh}), Hq, Hkv, starts),
                      Contains("attention_packed_qkv") && Contains("2-D"));
        CHECK_INVALID(ag::attention_packed_qkv(qkv, 0, Hkv, starts), Contains("positive multiple"));
        CHECK_INVALID(ag::attention_packed_qkv(qkv, Hq, 0, starts), Contains("positive multiple"));
        CHECK_INVALID(ag::attention_packed_qkv(qkv, Hq, 3, starts), Contains("positive multiple"));
        CHECK_INVALID(ag::attention_packed_qkv(Z({N, width + 1}), Hq, Hkv, starts),
                      Contains("65 columns") && Contains("(Hq + 2·Hkv)·dh"));
        CHECK_INVALID(ag::attention_packed_qkv(Z({N, 0}), Hq, Hkv, starts), Contains("0 columns"));
        CHECK_INVALID(ag::attention_packed_qkv(Z({N, 2}), Hq, Hkv, starts), Contains("2 columns"));
        CHECK_INVALID(ag::attention_packed_qkv(qkv, Hq, Hkv, {0, 6, 12}), Contains("N = 18"));
        CHECK_INVALID(ag::attention_packed_qkv(qkv, Hq, Hkv, {0, 12, 6, 18}), Contains("decrease at 1"));
        CHECK_INVALID(ag::attention_packed_qkv(qkv, Hq, Hkv, starts, -1), Contains("window -1"));
        Tensor w;
        CHECK_INVALID(ag::attention_packed_qkv(qkv, Hq, Hkv, {0, 5, 18}, 0, &w), Contains("one length"));
    }
}
