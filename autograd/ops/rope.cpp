// §4 rotary position embedding. The head vector of time step t is cut into
// dh/2 pairs and pair i is turned by the angle m θ_i, m = positions[t],
// θ_i = base^(-2i/dh): the block-diagonal rotation R_{Θ,m} of §4.2, applied
// in O(dh) (§4.6) instead of as a dh×dh matrix.
#include <cmath>

#include "autograd/ops/common.h"

namespace ag {

using detail::fail;
using detail::Grads;

namespace {

// cos and sin of m θ_i for every time step t and pair i: [T, dh/2].
struct Angles {
    std::vector<double> cos, sin;
};

// cos and sin of m θ_i for one position m.
void angles_of(int64_t m, const std::vector<double>& theta, std::vector<double>& cos, std::vector<double>& sin) {
    for (const double th : theta) {
        const double angle = static_cast<double>(m) * th;
        cos.push_back(std::cos(angle));
        sin.push_back(std::sin(angle));
    }
}

// Training calls rope with the same small positions (0 … 40) every step and
// layer: each thread keeps the rows of positions 0, 1, … it has computed,
// per (dh, base). A row is computed by the same formula either way, so the
// cache changes no result.
struct AngleCache {
    int64_t dh = 0;
    double base = 0.0;
    std::vector<double> theta;
    Angles rows;  // row m at [m·dh/2, (m+1)·dh/2)
};
constexpr int64_t kCachedPositions = 1 << 14;

Angles angles(const std::vector<int64_t>& positions, int64_t dh, double base) {
    const int64_t half = dh / 2;
    thread_local AngleCache cache;
    if (cache.dh != dh || cache.base != base) {
        cache = AngleCache{dh, base, std::vector<double>(static_cast<size_t>(half)), {}};
        for (int64_t i = 0; i < half; ++i)
            cache.theta[static_cast<size_t>(i)] =
                std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(dh));
    }
    Angles a;
    a.cos.reserve(positions.size() * cache.theta.size());
    a.sin.reserve(positions.size() * cache.theta.size());
    for (const int64_t m : positions) {
        if (half == 0 || m < 0 || m >= kCachedPositions) {
            angles_of(m, cache.theta, a.cos, a.sin);
            continue;
        }
        while (static_cast<int64_t>(cache.rows.cos.size()) <= m * half)  // rows up to m
            angles_of(static_cast<int64_t>(cache.rows.cos.size()) / half, cache.theta, cache.rows.cos, cache.rows.sin);
        const auto at = static_cast<std::ptrdiff_t>(m * half);
        a.cos.insert(a.cos.end(), cache.rows.cos.begin() + at, cache.rows.cos.begin() + at + half);
        a.sin.insert(a.sin.end(), cache.rows.sin.begin() + at, cache.rows.sin.begin() + at + half);
    }
    return a;
}

// out = R x for every head vector of x [..., T, H, dh] (contiguous); with
// inverse, out = Rᵀ x = R(-angle) x: the same formula with -sin. For a pair
// (a, b) = (x_i, x_{i+dh/2}) (Half) or (x_{2i}, x_{2i+1}) (Interleaved):
//   a' = a cos - b sin,   b' = b cos + a sin.
Tensor rotate(const Tensor& x, const Angles& an, int64_t T, int64_t H, RopePairing pairing, bool inverse) {
    const int64_t dh = x.size(-1), half = dh / 2;
    const int64_t rows = dh ? x.numel() / dh : 0;  // head vectors
    const double sign = inverse ? -1.0 : 1.0;
    Tensor out = empty(x.shape());
    if (rows == 0) return out;  // (H or T may be 0: no time step or head to count)
    const double* px = x.data();
    double* po = out.data();
    const int64_t grain = std::max<int64_t>(1, detail::kPointwiseGrain / std::max<int64_t>(1, dh));
    detail::parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
        // row r is (…, t, h): t and h are counted on, not divided out of r per row
        int64_t t = (r0 / H) % T, h = r0 % H;
        for (int64_t r = r0; r < r1; ++r) {
            const double* c = an.cos.data() + t * half;
            const double* s = an.sin.data() + t * half;
            const double* xr = px + r * dh;
            double* yr = po + r * dh;  // never overlaps x, c or s
            if (pairing == RopePairing::Half) {
#pragma omp simd
                for (int64_t i = 0; i < half; ++i) {
                    const double a = xr[i], b = xr[i + half], sn = sign * s[i];
                    yr[i] = a * c[i] - b * sn;
                    yr[i + half] = b * c[i] + a * sn;
                }
            } else {
#pragma omp simd
                for (int64_t i = 0; i < half; ++i) {
                    const double a = xr[2 * i], b = xr[2 * i + 1], sn = sign * s[i];
                    yr[2 * i] = a * c[i] - b * sn;
                    yr[2 * i + 1] = b * c[i] + a * sn;
                }
            }
            if (++h == H) {  // the next row is the next time step's first head
                h = 0;
                if (++t == T) t = 0;
            }
        }
    });
    return out;
}

}  // namespace

// y = R_{Θ,m} x per head vector. Backward: dx = R_{Θ,m}ᵀ dy, the rotation
// by -m θ_i (a rotation's inverse is its transpose).
Tensor rope(const Tensor& x, const std::vector<int64_t>& positions, double base, RopePairing pairing) {
    if (x.dim() < 3) fail("rope", "x must be [..., T, H, dh], got {}", shape_str(x.shape()));
    const int64_t T = x.size(-3), H = x.size(-2), dh = x.size(-1);
    if (dh % 2 != 0) fail("rope", "x {}: head size dh = {} is odd (rotations act on pairs)", shape_str(x.shape()), dh);
    if (static_cast<int64_t>(positions.size()) != T)
        fail("rope", "x {}: {} positions for T = {} (dim -3)", shape_str(x.shape()), positions.size(), T);
    if (!(base > 0.0) || !std::isfinite(base))
        fail("rope", "x {}: base {} must be positive and finite", shape_str(x.shape()), base);

    Angles an = angles(positions, dh, base);
    const Tensor y = rotate(x.detach().contiguous(), an, T, H, pairing, false);
    return record("rope", y, {x}, [an = std::move(an), T, H, pairing](const Tensor& g) {
        return Grads{rotate(g.contiguous(), an, T, H, pairing, true)};
    });
}

}  // namespace ag
