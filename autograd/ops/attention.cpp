// §5 grouped-query attention and §6 sliding windows: scaled dot-product
// attention as one fused op. The forward keeps the probabilities P; the
// backward is the closed form below, so no T×S chain of small ops (matmul,
// mask, softmax, matmul and their backwards) is recorded per layer.
//
// Layout: q [B, T, Hq, dh], k and v [B, S, Hkv, dh] (the rows of a Linear
// output cut into heads), or all three side by side in the rows of one
// [N, (Hq + 2·Hkv)·dh] product (attention_packed_qkv: GPT's fused
// projection, as in llm.c). Query head h reads KV head h / g, g = Hq / Hkv.
// Every inner loop runs over dh, contiguous. The probabilities are kept
// only where a query sees a key (P [B, Hq, nnz], see Visible): with
// windows or packed sequences most of the T×S matrix is never seen.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/kernels/head_row.h"
#include "autograd/kernels/vmath.h"
#include "autograd/ops/common.h"

namespace ag {

using detail::fail;
using detail::Grads;

namespace {

struct Dims {
    int64_t B, T, S, Hq, Hkv, g, dh;
    // Row strides: of q and dq (Hq·dh, or the fused row's width), and of
    // k, v, dk and dv (Hkv·dh, or the fused width). out and dO are always
    // [B, T, Hq, dh], contiguous.
    int64_t q_row, kv_row;
    // Element offsets: q, dq at (b, t, h); out, dO at (b, t, h); k, v at (b, s, kvh).
    int64_t at_q(int64_t b, int64_t t, int64_t h) const { return (b * T + t) * q_row + h * dh; }
    int64_t at_o(int64_t b, int64_t t, int64_t h) const { return ((b * T + t) * Hq + h) * dh; }
    int64_t at_k(int64_t b, int64_t s, int64_t kvh) const { return (b * S + s) * kv_row + kvh * dh; }
};

std::string shapes_str(const Tensor& q, const Tensor& k, const Tensor& v) {
    return fmt::format("q {}, k {}, v {}", shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape()));
}

// `given`: the shapes as the caller passed them, when q, k and v here are
// reshaped from them (attention_packed's [N, H, dh] as one batch row).
Dims check_shapes(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const std::string& given = "") {
    const std::string shapes = given.empty() ? shapes_str(q, k, v) : given;
    if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
        fail(op, "{}: needs 4-D q [B, T, Hq, dh] and k, v [B, S, Hkv, dh]", shapes);
    if (k.shape() != v.shape()) fail(op, "{}: k and v must have the same shape", shapes);
    if (q.size(0) != k.size(0)) fail(op, "{}: batch sizes {} and {} differ", shapes, q.size(0), k.size(0));
    if (q.size(3) != k.size(3)) fail(op, "{}: head sizes (dh) {} and {} differ", shapes, q.size(3), k.size(3));
    if (q.size(3) == 0) fail(op, "{}: head size dh is 0", shapes);
    if (q.size(2) == 0 || k.size(2) == 0 || q.size(2) % k.size(2) != 0)
        fail(op, "{}: {} query heads are not a positive multiple of {} KV heads", shapes, q.size(2), k.size(2));
    const int64_t B = q.size(0), T = q.size(1), S = k.size(1), Hq = q.size(2), Hkv = k.size(2), dh = q.size(3);
    return {B, T, S, Hq, Hkv, Hq / Hkv, dh, Hq * dh, Hkv * dh};  // contiguous rows
}

// The keys each query sees, as compressed rows: query t sees keys
// keys[first[t]] … keys[first[t+1]-1], in increasing s. The pattern is the
// same for every batch row and head, so it is worked out once per call.
// Entry j of the pattern is also where p_{t,s} is stored: P[b, h, j].
struct Visible {
    std::vector<int64_t> first, keys;
    int64_t nnz() const { return static_cast<int64_t>(keys.size()); }
};

// Packed sequences: row i of sequence [s0, s1) sees rows max(s0, i-W+1) … i.
Visible visible_in_sequences(const std::vector<int64_t>& starts, int64_t window) {
    Visible vis;
    vis.first.push_back(0);
    for (size_t b = 0; b + 1 < starts.size(); ++b)
        for (int64_t i = starts[b]; i < starts[b + 1]; ++i) {
            for (int64_t s = window > 0 ? std::max(starts[b], i - window + 1) : starts[b]; s <= i; ++s)
                vis.keys.push_back(s);
            vis.first.push_back(vis.nnz());
        }
    return vis;
}

Visible visible_keys(const std::vector<int64_t>& q_pos, const std::vector<int64_t>& k_pos, int64_t window) {
    Visible vis;
    vis.first.reserve(q_pos.size() + 1);
    vis.first.push_back(0);
    for (const int64_t qp : q_pos) {
        for (size_t s = 0; s < k_pos.size(); ++s) {
            const int64_t kp = k_pos[s];
            // 0 <= k_pos <= q_pos (a negative key position is an empty
            // cache slot), and within the window: q_pos - k_pos < W
            if (kp >= 0 && kp <= qp && (window == 0 || qp - kp < window)) vis.keys.push_back(static_cast<int64_t>(s));
        }
        vis.first.push_back(static_cast<int64_t>(vis.keys.size()));
    }
    return vis;
}

// Each parallel task is one (b, head) pair doing about T·S·dh multiply-adds;
// give a thread at least this much work.
constexpr int64_t kAttentionGrain = 1 << 15;

int64_t tasks_per_thread(const Dims& d) {
    int64_t work;  // T·S·dh may pass int64 when B is 0: a task that large needs a thread to itself
    if (!checked_mul(d.T, d.S, work) || !checked_mul(work, d.dh, work)) return 1;
    return std::max<int64_t>(1, kAttentionGrain / std::max<int64_t>(1, work));
}

// What the backward needs: the inputs, P, the pattern, the scale.
struct Saved {
    Tensor q, k, v;              // contiguous; for the fused op all three are the qkv product
    const double *pq, *pk, *pv;  // head 0 of row 0 of q, k and v (rows d.q_row and d.kv_row apart)
    Tensor P;                    // [B, Hq, nnz]: p for each visible (query, key) pair
    Visible vis;
    Dims d;
    double scale;
    // P's row of query t of (b, h): entries first[t] … first[t+1]-1.
    int64_t at_p(int64_t b, int64_t h) const { return (b * d.Hq + h) * vis.nnz(); }
};

using kernels::HeadRow;  // the rows a kernel keeps, in registers for the compiled head sizes
using kernels::HeadSum;

// The kernels are compiled for each head size that is a multiple of 8 up to
// kMaxCompiledDH, and once more (DH = 0) for any other. Calls
// f(std::integral_constant<int64_t, DH>{}) with dh's DH. The scalar build
// (SIMD=OFF, CMakeLists.txt) runs every head size through DH = 0.
#if defined(AG_NO_SIMD)
constexpr int64_t kMaxCompiledDH = 0;
#else
constexpr int64_t kMaxCompiledDH = 64;
#endif

template <int64_t DH = kernels::kLanes, typename F>
void with_head_size(int64_t dh, F&& f) {
    if constexpr (DH > kMaxCompiledDH) {
        f(std::integral_constant<int64_t, 0>{});
    } else if (dh == DH) {
        f(std::integral_constant<int64_t, DH>{});
    } else {
        with_head_size<DH + kernels::kLanes>(dh, std::forward<F>(f));
    }
}

// Forward, for each (b, h, t) over the visible keys s:
//   z_s = q_t·k_s / sqrt(dh),  p_s = exp(z_s - max z) / Σ_s' exp(z_s' - max z),
//   out_t = Σ_s p_s v_s.
// Invisible keys keep p = 0; a query that sees no key gets out = 0.
// Threads split the (b, h) pairs: each output row has one writer.
//
// Per (b, h), three sweeps over its P row: per query the scores minus their
// max (q_t kept in a HeadRow, its dots with the keys taken four at a time);
// then exp of the whole P row at once, one vectorised loop rather than ~6
// calls a query (vmath::exp gives the same bits at any vector width); then
// per query the sum, p and out_t, gathered in a HeadSum from 0 and stored
// once.
template <int64_t DH>
void forward_heads(Saved& sv, double* po, int64_t i0, int64_t i1) {
    const Dims& d = sv.d;
    const Visible& vis = sv.vis;
    const int64_t dh = DH > 0 ? DH : d.dh, q_step = d.q_row, o_step = d.Hq * dh, kv_step = d.kv_row, nnz = vis.nnz();
    const double scale = sv.scale;
    HeadRow<DH> qt(dh);
    HeadSum<DH> ot(dh);
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / d.Hq, h = i % d.Hq, kvh = h / d.g;
        // row t of q at t·q_step, of out at t·o_step, key s of k and v at s·kv_step
        const double *qh = sv.pq + d.at_q(b, 0, h), *kh = sv.pk + d.at_k(b, 0, kvh), *vh = sv.pv + d.at_k(b, 0, kvh);
        double* oh = po + d.at_o(b, 0, h);
        double* pt = sv.P.data() + sv.at_p(b, h);  // P is filled here, read-only afterwards
        for (int64_t t = 0; t < d.T; ++t) {
            const int64_t j0 = vis.first[t], j1 = vis.first[t + 1];
            qt.load(qh + t * q_step);
            qt.dots(kh, vis.keys.data() + j0, kv_step, j1 - j0, pt + j0);  // q_t · k_s
            double m = -std::numeric_limits<double>::infinity();
            for (int64_t j = j0; j < j1; ++j) {
                pt[j] *= scale;
                m = std::max(m, pt[j]);
            }
            for (int64_t j = j0; j < j1; ++j) pt[j] -= m;
        }
#pragma omp simd
        for (int64_t j = 0; j < nnz; ++j) pt[j] = vmath::exp(pt[j]);
        for (int64_t t = 0; t < d.T; ++t) {
            const int64_t j0 = vis.first[t], j1 = vis.first[t + 1];
            double sum = 0.0;
            for (int64_t j = j0; j < j1; ++j) sum += pt[j];
            ot.start(oh + t * o_step);
            for (int64_t j = j0; j < j1; ++j) {
                pt[j] /= sum;
                ot.add(pt[j], vh + vis.keys[j] * kv_step);
            }
            ot.finish();
        }
    }
}

Tensor forward(Saved& sv) {
    const Dims& d = sv.d;
    Tensor out = empty({d.B, d.T, d.Hq, d.dh});  // every row written, 0 where a query sees no key
    if (d.T == 0) return out;  // no query: not a loop over (b, head) pairs that have no rows (2^40 heads)
    double* po = out.data();
    with_head_size(d.dh, [&](auto DH) {
        constexpr int64_t kDH = decltype(DH)::value;
        detail::parallel_for(d.B * d.Hq, tasks_per_thread(d),
                             [&](int64_t i0, int64_t i1) { forward_heads<kDH>(sv, po, i0, i1); });
    });
    return out;
}

// The pattern by key (compressed columns): key s is seen by the queries
// query[e], e = first[s] … first[s+1]-1, in increasing t; entry[e] is
// where that pair's p is in P's row.
struct SeenBy {
    std::vector<int64_t> first, query, entry;
};

SeenBy seen_by(const Visible& vis, int64_t S) {
    SeenBy by;
    by.first.assign(static_cast<size_t>(S) + 1, 0);
    for (const int64_t s : vis.keys) ++by.first[static_cast<size_t>(s) + 1];
    for (size_t s = 0; s < static_cast<size_t>(S); ++s) by.first[s + 1] += by.first[s];
    std::vector<int64_t> next(by.first.begin(), by.first.end() - 1);
    by.query.resize(vis.keys.size());
    by.entry.resize(vis.keys.size());
    for (size_t t = 0; t + 1 < vis.first.size(); ++t)
        for (int64_t j = vis.first[t]; j < vis.first[t + 1]; ++j) {
            const auto e = static_cast<size_t>(next[static_cast<size_t>(vis.keys[j])]++);
            by.query[e] = static_cast<int64_t>(t);
            by.entry[e] = j;
        }
    return by;
}

// Backward, given dO = dL/dout, for each (b, h, t) over the visible s
// (an invisible key has p = 0 and contributes nothing):
//   dP_s = dO_t · v_s
//   dZ_s = P_s (dP_s - Σ_s' P_s' dP_s') / sqrt(dh)   (softmax backward, with the scale)
//   dq_t = Σ_s dZ_s k_s
//   dk_s = Σ_{h in group} Σ_t dZ[h, t, s] q[t, h]
//   dv_s = Σ_{h in group} Σ_t P[h, t, s] dO[t, h]
// Pass 1 (backward_queries, threads over (b, h)) computes dZ and dq. Pass 2
// (backward_keys, threads over (b, kv head)) gathers dk and dv: the g query
// heads of a group add into the same rows, so one thread owns the whole
// group and adds its heads, then its queries, in a fixed order. Same bits
// for any thread count.

// Pass 1 for the (b, h) pairs i0 … i1-1, query by query: dO_t is kept in a
// HeadRow while dP is read off the keys' v rows, then dq_t is gathered in a
// HeadSum from 0 and stored once.
template <int64_t DH>
void backward_queries(const Saved& sv, const double* pg, double* pdq, double* pdz, int64_t i0, int64_t i1) {
    const Dims& d = sv.d;
    const Visible& vis = sv.vis;
    const int64_t dh = DH > 0 ? DH : d.dh, q_step = d.q_row, o_step = d.Hq * dh, kv_step = d.kv_row;
    const double scale = sv.scale;
    HeadRow<DH> gt(dh);
    HeadSum<DH> dqt(dh);
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / d.Hq, h = i % d.Hq, kvh = h / d.g;
        // row t of dO at t·o_step, of dq at t·q_step, key s of k and v at s·kv_step
        const double *gh = pg + d.at_o(b, 0, h), *kh = sv.pk + d.at_k(b, 0, kvh), *vh = sv.pv + d.at_k(b, 0, kvh);
        double* dqh = pdq + d.at_q(b, 0, h);
        const double* pt = sv.P.data() + sv.at_p(b, h);
        double* zt = pdz + sv.at_p(b, h);
        for (int64_t t = 0; t < d.T; ++t) {
            const int64_t j0 = vis.first[t], j1 = vis.first[t + 1];
            gt.load(gh + t * o_step);
            double pdp = 0.0;  // Σ_s P_s dP_s
            for (int64_t j = j0; j < j1; ++j) {
                zt[j] = gt.dot(vh + vis.keys[j] * kv_step);
                pdp += pt[j] * zt[j];
            }
            dqt.start(dqh + t * q_step);
            for (int64_t j = j0; j < j1; ++j) {
                zt[j] = pt[j] * (zt[j] - pdp) * scale;
                dqt.add(zt[j], kh + vis.keys[j] * kv_step);
            }
            dqt.finish();
        }
    }
}

// Pass 2 for the (b, kv head) pairs i0 … i1-1, key by key: dk_s and dv_s
// are gathered in HeadSums over the group's heads and, for each head, the
// queries that see s in increasing t (the pattern by key), then stored
// once, rather than read and written again for every (t, s) pair. For each
// element that is still the order of the sums above, head, then query,
// from 0: the same bits as adding the pairs into dk and dv query by query.
template <int64_t DH>
void backward_keys(const Saved& sv, const SeenBy& by, const double* pg, const double* pdz, double* pdk, double* pdv,
                   int64_t i0, int64_t i1) {
    const Dims& d = sv.d;
    const int64_t dh = DH > 0 ? DH : d.dh, q_step = d.q_row, o_step = d.Hq * dh;
    HeadSum<DH> dks(dh), dvs(dh);
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / d.Hkv, kvh = i % d.Hkv;
        for (int64_t s = 0; s < d.S; ++s) {
            const int64_t e0 = by.first[s], e1 = by.first[s + 1];
            dks.start(pdk + d.at_k(b, s, kvh));
            dvs.start(pdv + d.at_k(b, s, kvh));
            // a key no query sees stays 0 (and its group's heads, 2^40 of them
            // over T = 0 queries, are not walked)
            for (int64_t h = kvh * d.g; e0 < e1 && h < (kvh + 1) * d.g; ++h) {
                // row t of q at t·q_step, of dO at t·o_step
                const double *qh = sv.pq + d.at_q(b, 0, h), *gh = pg + d.at_o(b, 0, h);
                const double *pt = sv.P.data() + sv.at_p(b, h), *zt = pdz + sv.at_p(b, h);
                for (int64_t e = e0; e < e1; ++e) {
                    const int64_t j = by.entry[e], t = by.query[e];
                    dks.add(zt[j], qh + t * q_step);
                    dvs.add(pt[j], gh + t * o_step);
                }
            }
            dks.finish();
            dvs.finish();
        }
    }
}

// dq, dk and dv into pdq, pdk and pdv (rows d.q_row and d.kv_row apart, like
// q, k and v), given dO = grad.
void backward_into(const Saved& sv, const Tensor& grad, double* pdq, double* pdk, double* pdv) {
    const Dims& d = sv.d;
    const Tensor gc = grad.contiguous();
    Tensor dZ = empty(sv.P.shape());  // only read where written
    const SeenBy by = seen_by(sv.vis, d.S);
    const double* pg = gc.data();
    double* pdz = dZ.data();
    with_head_size(d.dh, [&](auto DH) {
        constexpr int64_t kDH = decltype(DH)::value;
        // Each pass runs only when its pairs have rows to write: no query
        // (T = 0) leaves no dq, no key (S = 0) no dk and dv, however many
        // heads there are.
        if (d.T > 0)
            detail::parallel_for(d.B * d.Hq, tasks_per_thread(d),
                                 [&](int64_t i0, int64_t i1) { backward_queries<kDH>(sv, pg, pdq, pdz, i0, i1); });
        if (d.S > 0)
            detail::parallel_for(
                d.B * d.Hkv, std::max<int64_t>(1, tasks_per_thread(d) / d.g),
                [&](int64_t i0, int64_t i1) { backward_keys<kDH>(sv, by, pg, pdz, pdk, pdv, i0, i1); });
    });
}

// q, k and v given apart: a gradient for each. Every row of dq, dk and dv is
// written (0 where nothing is seen).
Grads backward(const Saved& sv, const Tensor& grad) {
    Tensor dq = empty(sv.q.shape()), dk = empty(sv.k.shape()), dv = empty(sv.v.shape());
    backward_into(sv, grad, dq.data(), dk.data(), dv.data());
    return Grads{dq, dk, dv};
}

// The weights as a dense [B, Hq, T, S] tensor (0 where a key is not seen).
Tensor dense_weights(const Saved& sv) {
    const Dims& d = sv.d;
    Tensor w = Tensor::zeros({d.B, d.Hq, d.T, d.S});
    if (w.numel() == 0) return w;
    for (int64_t b = 0; b < d.B; ++b)
        for (int64_t h = 0; h < d.Hq; ++h)
            for (int64_t t = 0; t < d.T; ++t)
                for (int64_t j = sv.vis.first[t]; j < sv.vis.first[t + 1]; ++j)
                    w.data()[((b * d.Hq + h) * d.T + t) * d.S + sv.vis.keys[j]] = sv.P.data()[sv.at_p(b, h) + j];
    return w;
}

// Runs the op on q, k and v (contiguous, untracked), whose head 0 of row 0
// is at element q_at, k_at and v_at: 0 for three tensors, the column of the
// block for the fused product (then q, k and v are the same tensor).
std::shared_ptr<Saved> run(const Tensor& q, const Tensor& k, const Tensor& v, int64_t q_at, int64_t k_at, int64_t v_at,
                           const Dims& d, Visible vis, Tensor& out) {
    auto sv = std::make_shared<Saved>(Saved{q, k, v, q.data() + q_at, k.data() + k_at, v.data() + v_at,
                                            empty({d.B, d.Hq, vis.nnz()}), std::move(vis), d,
                                            1.0 / std::sqrt(static_cast<double>(d.dh))});
    out = forward(*sv);
    return sv;
}

// Three inputs: the views that narrow and reshape make of a Linear output
// are copied here, untracked (the gradients are returned for q, k, v
// themselves).
std::shared_ptr<Saved> run(const Tensor& q, const Tensor& k, const Tensor& v, const Dims& d, Visible vis, Tensor& out) {
    return run(q.detach().contiguous(), k.detach().contiguous(), v.detach().contiguous(), 0, 0, 0, d, std::move(vis),
               out);
}

// Packed sequences: starts run from 0 to N, never decreasing; the window is
// not negative.
void check_packing(const char* op, const std::string& shapes, int64_t N, const std::vector<int64_t>& starts,
                   int64_t window) {
    if (starts.empty() || starts.front() != 0 || starts.back() != N)
        fail(op, "{}: sequence starts must run from 0 to N = {}", shapes, N);
    for (size_t b = 0; b + 1 < starts.size(); ++b)
        if (starts[b + 1] < starts[b]) fail(op, "sequence starts decrease at {}: {} > {}", b, starts[b], starts[b + 1]);
    if (window < 0) fail(op, "{}: window {} is negative (0 = no window)", shapes, window);
}

// The weights of packed sequences as [B, Hq, T, T], when every sequence
// has length T. Row n = b·T + t of the packed pattern sees keys of its own
// sequence only: they land at column s - b·T of sequence b's block.
Tensor packed_weights(const char* op, const Saved& sv, const std::vector<int64_t>& starts) {
    const Dims& d = sv.d;
    const int64_t B = static_cast<int64_t>(starts.size()) - 1, T = B > 0 ? starts[1] : 0, N = starts.back();
    for (int64_t b = 0; b < B; ++b)
        if (starts[static_cast<size_t>(b) + 1] - starts[static_cast<size_t>(b)] != T)
            fail(op, "attention weights need sequences of one length; sequence {} has {}, not {}", b,
                 starts[static_cast<size_t>(b) + 1] - starts[static_cast<size_t>(b)], T);
    Tensor w = Tensor::zeros({B, d.Hq, T, T});
    if (w.numel() == 0) return w;
    double* pw = w.data();
    const double* pp = sv.P.data();
    for (int64_t h = 0; h < d.Hq; ++h)
        for (int64_t n = 0; n < N; ++n) {
            const int64_t b = n / T, t = n % T;
            for (int64_t j = sv.vis.first[n]; j < sv.vis.first[n + 1]; ++j)
                pw[((b * d.Hq + h) * T + t) * T + sv.vis.keys[j] - b * T] = pp[sv.at_p(0, h) + j];
        }
    return w;
}

}  // namespace

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const std::vector<int64_t>& q_pos,
                 const std::vector<int64_t>& k_pos, int64_t window, Tensor* weights) {
    const char* op = "attention";
    const Dims d = check_shapes(op, q, k, v);
    if (static_cast<int64_t>(q_pos.size()) != d.T)
        fail(op, "{}: {} query positions for T = {}", shapes_str(q, k, v), q_pos.size(), d.T);
    if (static_cast<int64_t>(k_pos.size()) != d.S)
        fail(op, "{}: {} key positions for S = {}", shapes_str(q, k, v), k_pos.size(), d.S);
    if (window < 0) fail(op, "{}: window {} is negative (0 = no window)", shapes_str(q, k, v), window);
    Tensor out;
    const auto sv = run(q, k, v, d, visible_keys(q_pos, k_pos, window), out);
    if (weights) *weights = dense_weights(*sv);
    return record(op, out, {q, k, v}, [sv](const Tensor& grad) { return backward(*sv, grad); });
}

// Training: queries and keys are the same T positions 0 … T-1, so query t
// sees keys max(0, t-W+1) … t (all of 0 … t without a window).
Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v, int64_t window, Tensor* weights) {
    const char* op = "causal_attention";
    check_shapes(op, q, k, v);
    if (q.size(1) != k.size(1))
        fail(op, "{}: needs as many keys as queries, got T = {} and S = {}", shapes_str(q, k, v), q.size(1), k.size(1));
    if (window < 0) fail(op, "{}: window {} is negative (0 = no window)", shapes_str(q, k, v), window);
    std::vector<int64_t> pos(static_cast<size_t>(q.size(1)));
    for (size_t t = 0; t < pos.size(); ++t) pos[t] = static_cast<int64_t>(t);
    return attention(q, k, v, pos, pos, window, weights);
}

// Packed sequences: one batch row of N tokens whose pattern keeps the
// sequences apart.
Tensor attention_packed(const Tensor& q, const Tensor& k, const Tensor& v, const std::vector<int64_t>& starts,
                        int64_t window, Tensor* weights) {
    const char* op = "attention_packed";
    if (q.dim() != 3 || k.dim() != 3 || v.dim() != 3)
        fail(op, "{}: needs 3-D q [N, Hq, dh] and k, v [N, Hkv, dh]", shapes_str(q, k, v));
    const int64_t N = q.size(0);
    if (k.size(0) != N) fail(op, "{}: q and k have {} and {} rows", shapes_str(q, k, v), N, k.size(0));
    check_packing(op, shapes_str(q, k, v), N, starts, window);
    const auto batch_row = [](const Tensor& x) { return x.reshape({1, x.size(0), x.size(1), x.size(2)}); };
    const Dims d = check_shapes(op, batch_row(q), batch_row(k), batch_row(v), shapes_str(q, k, v));
    Tensor out;
    const auto sv = run(batch_row(q), batch_row(k), batch_row(v), d, visible_in_sequences(starts, window), out);
    if (weights) *weights = packed_weights(op, *sv, starts);
    return record(op, out.reshape({N, d.Hq, d.dh}), {q, k, v}, [sv, N](const Tensor& grad) {
        Grads g = backward(*sv, grad.reshape({1, N, grad.size(1), grad.size(2)}));
        for (Tensor& t : g) t = t.reshape({N, t.size(2), t.size(3)});
        return g;
    });
}

// The same with q, k and v side by side in each row of one product: the
// kernels read them where they are, and the backward writes dq, dk and dv
// into one gradient of the same shape, so the projection is one product
// forward and backward, with no narrow on either side.
Tensor attention_packed_qkv(const Tensor& qkv, int64_t q_heads, int64_t kv_heads, const std::vector<int64_t>& starts,
                            int64_t window, Tensor* weights) {
    const char* op = "attention_packed_qkv";
    const std::string shape =
        fmt::format("qkv {} with {} query and {} KV heads", shape_str(qkv.shape()), q_heads, kv_heads);
    if (qkv.dim() != 2) fail(op, "{}: needs 2-D qkv [N, (Hq + 2·Hkv)·dh]", shape);
    if (q_heads <= 0 || kv_heads <= 0 || q_heads % kv_heads != 0)
        fail(op, "{}: the query heads are not a positive multiple of the KV heads", shape);
    const int64_t N = qkv.size(0), width = qkv.size(1);
    // q_heads + 2·kv_heads, which cannot overflow once both are at most the width
    if (q_heads > width || kv_heads > width || width % (q_heads + 2 * kv_heads) != 0)
        fail(op, "{}: {} columns are not (Hq + 2·Hkv)·dh for a whole head size dh >= 1", shape, width);
    const int64_t dh = width / (q_heads + 2 * kv_heads);
    check_packing(op, shape, N, starts, window);
    const Dims d{1, N, N, q_heads, kv_heads, q_heads / kv_heads, dh, width, width};
    const Tensor x = qkv.detach().contiguous();
    Tensor out;
    const auto sv =
        run(x, x, x, 0, q_heads * dh, (q_heads + kv_heads) * dh, d, visible_in_sequences(starts, window), out);
    if (weights) *weights = packed_weights(op, *sv, starts);
    return record(op, out.reshape({N, q_heads, dh}), {qkv}, [sv, N, q_heads, kv_heads, dh](const Tensor& grad) {
        Tensor dqkv = empty(sv->q.shape());  // every element written: the q, k and v blocks of each row
        double* p = dqkv.data();
        backward_into(*sv, grad.reshape({1, N, q_heads, dh}), p, p + q_heads * dh, p + (q_heads + kv_heads) * dh);
        return Grads{dqkv};
    });
}

}  // namespace ag
