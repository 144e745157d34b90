#include "lessons/modern_transformer/position_encodings.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace lessons::modern_transformer {

double mean_over_k(const std::vector<double>& per_k, int first, int last) {
    double sum = 0;
    for (int k = first; k <= last; ++k) sum += per_k[static_cast<size_t>(k - 1)];
    return sum / static_cast<double>(last - first + 1);
}

std::vector<double> EncodingRuns::accuracy_at(int k) const {
    std::vector<double> per_seed;
    for (const auto& per_k : scores) per_seed.push_back(per_k.at(static_cast<size_t>(k - 1)).accuracy);
    return per_seed;
}

namespace {

// The mean accuracy over k = first … last.
double mean_accuracy(const std::vector<AgreementResult>& per_k, int first, int last) {
    std::vector<double> accuracy;
    for (const AgreementResult& a : per_k) accuracy.push_back(a.accuracy);
    return mean_over_k(accuracy, first, last);
}

}  // namespace

PositionEncodings train_position_encodings(const Options& options, const FarmRuns& runs) {
    PositionEncodings result;
    std::array<EncodingRuns, 3>& all = result.encodings;
    std::vector<LmRun> models;  // every encoding's seeds, trained side by side
    for (int seed = 0; seed < options.seeds; ++seed)
        for (size_t e = 0; e < kEncodings.size(); ++e) {
            models.push_back({nn::LMConfig::modern_lm(), static_cast<uint64_t>(seed)});
            models.back().config.pos = kEncodings[e].pos;
        }
    std::vector<CachedLm> trained_runs = trained(options, runs, models);
    size_t next = 0;
    for (int seed = 0; seed < options.seeds; ++seed)
        for (size_t e = 0; e < kEncodings.size(); ++e) {
            CachedLm run = std::move(trained_runs[next++]);
            all[e].scores.push_back(agreement_per_k(*run.model, runs.agreement));
            all[e].models.push_back(std::move(run));
        }
    for (EncodingRuns& enc : all) {
        for (const auto& per_k : enc.scores) {
            enc.within.push_back(mean_accuracy(per_k, 1, 3));
            enc.beyond.push_back(mean_accuracy(per_k, 4, 6));
            enc.mean13 += enc.within.back() / options.seeds;
            enc.mean46 += enc.beyond.back() / options.seeds;
            enc.min46 = std::min(enc.min46, enc.beyond.back());
        }
    }
    for (size_t e = 1; e < all.size(); ++e)
        if (all[e].min46 < all[result.worst_seed].min46) result.worst_seed = e;
    return result;
}

}  // namespace lessons::modern_transformer
