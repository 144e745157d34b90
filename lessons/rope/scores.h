#pragma once
// §4.3, §4.4 the score of one query and one key under RoPE, and under the
// slides' "wrong" version. With the 1/√d_k factor left out (it scales every
// score alike), the score of q at position t and k at position j is
//   (R_j k)ᵀ (R_t q) = kᵀ R_jᵀ R_t q = kᵀ R_{t-j} q      (§4.4),
// so it depends only on t - j; rotating both by R_{t-j} instead gives
//   (R_{t-j} k)ᵀ (R_{t-j} q) = kᵀ q                     (§4.3),
// since a rotation is orthogonal: the position cancels altogether.
#include <cstdint>
#include <utility>
#include <vector>

namespace lessons::rope {

// A query position t and a key position j.
using Placement = std::pair<int64_t, int64_t>;

// One seed's q and k (entries N(0, 1), size d; ag::Generator(seed) draws q,
// then k) placed at one (t, j), scored four ways.
struct PlacedScores {
    int seed = 0;
    int64_t t = 0, j = 0;
    double rope = 0;      // (R_j k)ᵀ (R_t q): each vector rotated by its own position
    double relative = 0;  // kᵀ R_{t-j} q: §4.4 says it equals rope
    double wrong = 0;     // (R_{t-j} k)ᵀ (R_{t-j} q): the slides' "wrong" version
    double plain = 0;     // kᵀ q, no rotation: §4.3 says it equals wrong
};

struct Scores {
    std::vector<PlacedScores> rows;  // seed 0 … seeds-1, each at every placement in order
    // The largest spread (max - min) of one seed's scores over the placements:
    // 0 when a score does not see where q and k are.
    double rope_range = 0;
    double wrong_range = 0;
    double relative_error = 0;     // max |rope - relative|
    double wrong_minus_plain = 0;  // max |wrong - plain|
};
Scores scores(const std::vector<Placement>& placements, int seeds, int64_t d);

// §4.4 the identity behind it, R_jᵀ R_t = R_{t-j} (turn by t, then back by
// j): for each (t, j), the largest entry of |R_jᵀ R_t - R_{t-j}| (d×d).
struct IdentityErrors {
    std::vector<double> errors;  // one per placement, in order
    double worst = 0;
};
IdentityErrors relative_rotation_errors(const std::vector<Placement>& placements, int64_t d);

}  // namespace lessons::rope
