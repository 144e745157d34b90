#pragma once
// §7.3 which position encoding extrapolates: ModernLMs that differ only in
// their position encoding (a learned table, none, RoPE), trained on the
// same farm sentences in the same order, and tested on subject-verb
// agreement within the training lengths (k = 1-3) and beyond them (k = 4-6).
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "lessons/common/evaluation.h"
#include "lessons/modern_transformer/farm_runs.h"

namespace lessons::modern_transformer {

struct Encoding {
    nn::PosEncoding pos;
    std::string name;
};
inline const std::array<Encoding, 3> kEncodings{
    {{nn::PosEncoding::Learned, "learned"}, {nn::PosEncoding::None, "none"}, {nn::PosEncoding::Rope, "RoPE"}}};
constexpr size_t kLearned = 0, kNone = 1, kRope = 2;  // indices into kEncodings

// The mean of per_k[k - 1] over k = first … last.
double mean_over_k(const std::vector<double>& per_k, int first, int last);

// One encoding, seed by seed.
struct EncodingRuns {
    std::vector<CachedLm> models;                      // [seed]
    std::vector<std::vector<AgreementResult>> scores;  // [seed][k - 1]
    std::vector<double> within, beyond;                // [seed]: mean accuracy over k = 1-3 and over k = 4-6
    double mean13 = 0, mean46 = 0;                     // the means of within and beyond over the seeds
    double min46 = 1;                                  // the worst seed's beyond
    std::vector<double> accuracy_at(int k) const;      // [seed]: the accuracy at k (1 … 6)
};

struct PositionEncodings {
    std::array<EncodingRuns, 3> encodings;  // in kEncodings' order
    size_t worst_seed = kLearned;           // the encoding with the worst single seed at k = 4-6 (lowest min46)
};

// Every encoding for the initialisation seeds 0 … options.seeds-1 (seed
// by seed, then in kEncodings' order), each a ModernLM with that encoding,
// trained on runs.train through the model cache (trained()) and tested on
// runs.agreement.
PositionEncodings train_position_encodings(const Options& options, const FarmRuns& runs);

}  // namespace lessons::modern_transformer
