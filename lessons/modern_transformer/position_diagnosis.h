#pragma once
// §7.3 why a position encoding extrapolates or not: where the models look
// when they predict the verb, and which learned position vectors were never
// trained.
#include <cstdint>
#include <vector>

#include "data/farm_language.h"
#include "lessons/common/training.h"
#include "nn/language_model.h"

namespace lessons::modern_transformer {

// The subject is token 2 of every prefix (<s> the SUBJ PP{k}).
constexpr int64_t kSubject = 2;

// Per set (sets[k - 1]): the mean over its prefixes of the largest attention
// weight any head of any layer puts on the subject at the last prefix
// position, the one that predicts the verb. A model that reads the subject's
// number there needs some head to look at it.
std::vector<double> subject_attention_per_k(const nn::LanguageModel& model,
                                            const std::vector<std::vector<farm::Sentence>>& sets);

// Learned position rows that never received a gradient. A row gets one only
// when some training input sits at its position; otherwise each AdamW step
// only multiplies it by (1 - lr λ) (decoupled weight decay; with a zero
// gradient the moments stay 0 and the Adam update is exactly 0). So a row
// is untouched iff it equals the freshly initialised row (same seed) after
// `steps` such multiplications, bit for bit.
struct PositionRows {
    std::vector<bool> untouched;     // one per row of pos_emb (max_len rows)
    double decay = 1;                // (1 - lr λ)^steps: what weight decay alone leaves
    double max_moved = 0;            // max |trained - decayed fresh| over the other rows
    double mean_norm_untouched = 0;  // mean ‖row‖ of each group
    double mean_norm_trained = 0;
};
PositionRows untouched_position_rows(const nn::LanguageModel& trained, uint64_t init_seed, int64_t steps,
                                     const LmTrainOptions& training);

}  // namespace lessons::modern_transformer
