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
// the lanes), and a sum starts at 0 and adds a·x element by element
// (y[i] += a x[i]). So a kernel written once over HeadRow<DH> and
// HeadSum<DH> gives the same bits for every DH it is compiled for.
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
public:
    explicit HeadRow(int64_t /*dh = DH*/) {}
    void load(const double* x) { std::memcpy(row_.v, x, sizeof row_.v); }

    // Σ_i row[i] y[i], as kernels::dot(row, y, DH)
    double dot(const double* y) const {
        typename RegisterRow<DH>::Vector lanes{}, yc;
        for (int64_t c = 0; c < RegisterRow<DH>::kVectors; ++c) {
            std::memcpy(&yc, y + c * kLanes, sizeof yc);
            lanes += row_.v[c] * yc;
        }
        double lane[kLanes];
        std::memcpy(lane, &lanes, sizeof lane);
        return combine_lanes(lane);
    }

private:
    RegisterRow<DH> row_;
};

template <>
class HeadRow<0> {
public:
    explicit HeadRow(int64_t dh) : dh_(dh) {}
    void load(const double* x) { x_ = x; }
    double dot(const double* y) const { return kernels::dot(x_, y, dh_); }

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
