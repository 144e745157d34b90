#include "lessons/rope/scores.h"

#include <algorithm>
#include <cmath>

#include "autograd/generator.h"
#include "lessons/rope/rotation.h"

namespace lessons::rope {
namespace {

// u · v for two [1, d] row vectors.
double dot(const ag::Tensor& u, const ag::Tensor& v) { return ag::sum(u * v).item(); }

// x rotated by R_{Θ,m}: the definition (full matrix).
ag::Tensor rotated(const ag::Tensor& x, int64_t m) { return rotate_full_matrix(x, {m}); }

}  // namespace

Scores scores(const std::vector<Placement>& placements, int seeds, int64_t d) {
    Scores s;
    for (int seed = 0; seed < seeds; ++seed) {
        ag::Generator gen(static_cast<uint64_t>(seed));
        const ag::Tensor q = ag::Tensor::randn({1, d}, gen), k = ag::Tensor::randn({1, d}, gen);
        const double plain = dot(k, q);
        double rope_lo = INFINITY, rope_hi = -INFINITY, wrong_lo = INFINITY, wrong_hi = -INFINITY;
        for (const auto& [t, j] : placements) {
            const PlacedScores p{seed,
                                 t,
                                 j,
                                 dot(rotated(k, j), rotated(q, t)),
                                 dot(k, rotated(q, t - j)),
                                 dot(rotated(k, t - j), rotated(q, t - j)),
                                 plain};
            rope_lo = std::min(rope_lo, p.rope), rope_hi = std::max(rope_hi, p.rope);
            wrong_lo = std::min(wrong_lo, p.wrong), wrong_hi = std::max(wrong_hi, p.wrong);
            s.relative_error = std::max(s.relative_error, std::fabs(p.rope - p.relative));
            s.wrong_minus_plain = std::max(s.wrong_minus_plain, std::fabs(p.wrong - p.plain));
            s.rows.push_back(p);
        }
        s.rope_range = std::max(s.rope_range, rope_hi - rope_lo);
        s.wrong_range = std::max(s.wrong_range, wrong_hi - wrong_lo);
    }
    return s;
}

IdentityErrors relative_rotation_errors(const std::vector<Placement>& placements, int64_t d) {
    IdentityErrors result;
    for (const auto& [t, j] : placements) {
        const ag::Tensor product = ag::matmul(rotation_matrix(j, d).t(), rotation_matrix(t, d));
        const double error = ag::max_abs_diff(product, rotation_matrix(t - j, d));
        result.worst = std::max(result.worst, error);
        result.errors.push_back(error);
    }
    return result;
}

}  // namespace lessons::rope
