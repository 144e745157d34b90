#pragma once
// The rows of one attention head (dh numbers) that a kernel keeps while it
// loops over the keys (or queries) paired with it: HeadRow, a row it dots
// with each of theirs (q_t, dO_t), and HeadSum, a sum it gathers from them
// (out_t = Σ_s p_s v_s, dq_t, dk_s, dv_s).
//
// With ~6 keys a query and dh = 16 the loops over dh are short and their
// length is known only at run time: every dot and every axpy reloads the
// row it keeps, and a sum goes through memory once per key. For a head size
// that is a multiple of 8 (DH = 8, 16, …, 64) both are DH / 8 vectors of 8
// lanes (GCC's vector extension: one AVX-512 register each), so the loops
// unroll and the rows stay in registers. (A plain array of DH doubles does
// not reliably: GCC splits it into DH scalars and then does not vectorise
// the dot products again.) DH = 0 is any other dh, at run time: the row is
// read where it is and the sum gathered in its destination.
//
// Both round exactly like the loops they replace: dot is kernels::dot (lane
// l of the vector adds up elements l, l+8, … from 0, then combine_lanes adds
// the lanes; dots does that for several rows at once), and a sum starts at
// 0 and adds a·x element by element (y[i] += a x[i]). So a kernel written
// once over HeadRow<DH> and HeadSum<DH> gives the same bits for every DH it
// is compiled for.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "autograd/kernels/reduce.h"

namespace ag::kernels {

// A row of DH numbers in registers: DH / 8 vectors of kLanes.
template <int64_t DH>
struct RegisterRow {
    static_assert(DH > 0 && DH % kLanes == 0, "a head row in registers has DH a multiple of 8 (DH = 0: any dh)");
    using Vector = double __attribute__((vector_size(kLanes * sizeof(double))));
    static constexpr int64_t kVectors = DH / kLanes;
    Vector v[kVectors];
};

template <int64_t DH>
class HeadRow {
    using Vector = typename RegisterRow<DH>::Vector;
    using Quad = double __attribute__((vector_size(4 * sizeof(double))));

public:
    explicit HeadRow(int64_t /*dh = DH*/) {}
    // Vector by vector: one memcpy of the whole row made GCC keep the row on
    // the stack, and each dot then waited on a store of 64 bytes to reach
    // its loads (attention's backward 1.4x slower).
    void load(const double* x) {
        for (int64_t c = 0; c < RegisterRow<DH>::kVectors; ++c) {
            Vector xc;
            std::memcpy(&xc, x + c * kLanes, sizeof xc);
            row_.v[c] = xc;
        }
    }

    // Σ_i row[i] y[i], as kernels::dot(row, y, DH)
    double dot(const double* y) const {
        Vector lanes;
        products(y, lanes);
        double lane[kLanes];
        std::memcpy(lane, &lanes, sizeof lane);
        return combine_lanes(lane);
    }

    // out[u] = dot(base + rows[u]·stride) for u < n: the rows of a matrix
    // picked by index (a query's keys). Four at a time, the four vectors of
    // lanes are added up together, each in combine_lanes' tree — one
    // transposition instead of four horizontal sums — so every out[u] has
    // the bits dot gives it.
    void dots(const double* base, const int64_t* rows, int64_t stride, int64_t n, double* out) const {
        int64_t u = 0;
        for (; u + 4 <= n; u += 4) {
            Vector a, b, c, d;
            products(base + rows[u] * stride, a);
            products(base + rows[u + 1] * stride, b);
            products(base + rows[u + 2] * stride, c);
            products(base + rows[u + 3] * stride, d);
            // lane l + lane l+4: [a0+a4 a1+a5 a2+a6 a3+a7 | b0+b4 … b3+b7], and c, d
            const Vector ab = __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11) +
                              __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15);
            const Vector cd = __builtin_shufflevector(c, d, 0, 1, 2, 3, 8, 9, 10, 11) +
                              __builtin_shufflevector(c, d, 4, 5, 6, 7, 12, 13, 14, 15);
            // (l0+l4)+(l1+l5) and (l2+l6)+(l3+l7) of a, b, c, d in turn
            const Vector halves = __builtin_shufflevector(ab, cd, 0, 2, 4, 6, 8, 10, 12, 14) +
                                  __builtin_shufflevector(ab, cd, 1, 3, 5, 7, 9, 11, 13, 15);
            const Quad sums = __builtin_shufflevector(halves, halves, 0, 2, 4, 6) +
                              __builtin_shufflevector(halves, halves, 1, 3, 5, 7);
            std::memcpy(out + u, &sums, sizeof sums);
        }
        for (; u < n; ++u) out[u] = dot(base + rows[u] * stride);
    }

private:
    // lane l: Σ_c row[c·8 + l] y[c·8 + l], from 0 in increasing c. (Into
    // a reference: a 64-byte vector returned by value has another ABI with
    // AVX-512 than without, which GCC warns about.)
    void products(const double* y, Vector& lanes) const {
        Vector yc;
        lanes = Vector{};
        for (int64_t c = 0; c < RegisterRow<DH>::kVectors; ++c) {
            std::memcpy(&yc, y + c * kLanes, sizeof yc);
            lanes += row_.v[c] * yc;
        }
    }

    RegisterRow<DH> row_;
};

template <>
class HeadRow<0> {
public:
    explicit HeadRow(int64_t dh) : dh_(dh) {}
    void load(const double* x) { x_ = x; }
    double dot(const double* y) const { return kernels::dot(x_, y, dh_); }
    void dots(const double* base, const int64_t* rows, int64_t stride, int64_t n, double* out) const {
        for (int64_t u = 0; u < n; ++u) out[u] = dot(base + rows[u] * stride);
    }

private:
    int64_t dh_;
    const double* x_ = nullptr;
};

// start(y); add(a, x) …; finish(): y = Σ a x, in the order added. (x never
// overlaps y.)
template <int64_t DH>
class HeadSum {
public:
    explicit HeadSum(int64_t /*dh = DH*/) {}
    void start(double* y) {
        y_ = y;
        for (auto& v : sum_.v) v = typename RegisterRow<DH>::Vector{};
    }
    void add(double a, const double* x) {
        typename RegisterRow<DH>::Vector xc;
        for (int64_t c = 0; c < RegisterRow<DH>::kVectors; ++c) {
            std::memcpy(&xc, x + c * kLanes, sizeof xc);
            sum_.v[c] += a * xc;
        }
    }
    void finish() const { std::memcpy(y_, sum_.v, sizeof sum_.v); }

private:
    RegisterRow<DH> sum_;
    double* y_ = nullptr;
};

template <>
class HeadSum<0> {
public:
    explicit HeadSum(int64_t dh) : dh_(dh) {}
    void start(double* y) {
        y_ = y;
        std::fill_n(y_, dh_, 0.0);
    }
    // (4 lanes rather than 8: these rows are short and not a multiple of 8,
    // so this leaves fewer numbers to the scalar remainder.)
    void add(double a, const double* x) {
#pragma omp simd simdlen(4)
        for (int64_t i = 0; i < dh_; ++i) y_[i] += a * x[i];
    }
    void finish() const {}

private:
    int64_t dh_;
    double* y_ = nullptr;
};

}  // namespace ag::kernels
