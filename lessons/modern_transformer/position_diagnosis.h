#pragma once
// §7.3 why a position encoding extrapolates or not: where the models look
// when they predict the verb, and which learned position vectors were never
// trained.
#include <cstdint>
#include <vector>

#include "data/farm_language.h"
#include "lessons/common/training.h"
#include "lessons/modern_transformer/farm_runs.h"
#include "lessons/modern_transformer/position_encodings.h"
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

// §7.3 one sentence through one model: what every head of every layer
// attends to, and where the position that predicts the verb looks hardest
// at the subject (the largest weight subject_attention_per_k averages).
struct AttentionMap {
    std::vector<int64_t> ids;  // the sentence as the model reads it: without its </s>, if it has one
    int64_t verb_query = 0;    // kSubject + 3k: the position whose output predicts the verb
    // [layer][head][query t][key j]: the weight query t gives key j (0 for
    // j > t: the mask is causal), each row summing to 1
    std::vector<std::vector<std::vector<std::vector<double>>>> weights;
    size_t layer = 0, head = 0;  // the head with the largest weight on the subject at verb_query
    double subject_weight(size_t layer, size_t head) const;  // weights[layer][head][verb_query][kSubject]
};
AttentionMap attention_map(const nn::LanguageModel& model, const farm::Sentence& sentence);

// The sentence such a map is drawn for: the first of `sentences` with k
// attractors that all have the number opposite to the subject's (the nearest
// noun then points to the wrong verb form), else the first with k
// attractors. Throws std::invalid_argument when none has k.
const farm::Sentence& example_sentence(const std::vector<farm::Sentence>& sentences, int k);

// The diagnosis of one model, one encoding and seed of part 3: where it
// looks when it predicts the verb, and how sure it is.
struct ModelDiagnosis {
    size_t encoding = 0;  // index into kEncodings
    int seed = 0;
    std::vector<double> weight;                   // [k - 1]: subject_attention_per_k
    std::vector<double> p_correct;                // [k - 1]: the agreement test's p(correct)
    double weight_within = 0, weight_beyond = 0;  // mean weight over k = 1-3 and over k = 4-6
    double p_beyond = 0;                          // mean p(correct) over k = 4-6
    double accuracy_beyond = 0;                   // mean accuracy over k = 4-6 (EncodingRuns::beyond)
};

// Whether the weight on the subject beyond the training lengths explains
// the accuracy there, over the models (every encoding and seed): the
// lecture's reading (§7.3) is that a model must find the subject to get
// the verb's number right, so the models that keep looking at it at
// k = 4-6 should be the ones that still agree.
struct WeightExplains {
    // Pearson's r of weight_beyond against accuracy_beyond over the models;
    // NaN when either has no spread.
    double correlation = 0;
    // The models split by weight_beyond: every model with a weight of at
    // least `threshold` scores at least lowest_above, every other one at
    // most highest_below. Of the splits between two distinct weights, the
    // one with the largest lowest_above - highest_below (the weight
    // separates the models when that is positive); with no such split
    // (every weight equal) all models are above and highest_below is NaN.
    double threshold = 0, lowest_above = 0, highest_below = 0;
    int above = 0, below = 0;
    bool separates() const { return below > 0 && lowest_above > highest_below; }
};

// The example's attractors: within the training lengths (also --quick's,
// k <= 2), and few enough for its tokens to label a map's rows and columns.
constexpr int kExampleK = 2;
// The long example's: beyond every training length (k <= 3), the subject
// 15 tokens back, and its prefix of 18 tokens still labels one panel.
constexpr int kLongExampleK = 5;

struct PositionDiagnosis {
    std::vector<ModelDiagnosis> models;  // seed by seed, each in kEncodings' order (the agreement table's)
    WeightExplains explains;
    // RoPE seed 0 (part 2's ModernLM) on example_sentence(runs.test, kExampleK),
    // and on the first agreement prefix with kLongExampleK attractors
    AttentionMap example, long_example;
    const ModelDiagnosis& at(size_t encoding, int seed) const;
};

// The diagnosis of every model of `encodings`, measured on runs.agreement.
PositionDiagnosis diagnose_positions(const PositionEncodings& encodings, const FarmRuns& runs);

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

// The learned-position models' untouched rows, seed by seed, against the
// prediction: a sentence of L tokens is read at positions 0 … L-2 (its last
// token is only a target), so the rows from longest - 1 on never get a
// gradient. A prefix with k attractors is read up to its verb-predicting
// position kSubject + 3k: beyond the training lengths it reads such rows.
struct UntrainedRows {
    int64_t longest = 0;                  // the longest training sentence, in tokens
    int64_t first_untrained = 0;          // longest - 1: the first row no training input reaches
    std::vector<bool> predicted;          // per row of pos_emb: row >= first_untrained
    std::vector<PositionRows> found;      // [seed]: untouched_position_rows of that seed's model
    std::vector<bool> match;              // [seed]: found[seed].untouched == predicted
    bool as_predicted = true;             // every seed matches
    std::vector<int64_t> verb_position;   // [k - 1]: kSubject + 3k
    std::vector<int64_t> untrained_read;  // [k - 1]: untrained rows among positions 0 … verb_position
};
// learned: the models of seeds 0, 1, … (pos = Learned) trained on runs.
UntrainedRows find_untrained_rows(const std::vector<CachedLm>& learned, const FarmRuns& runs);

}  // namespace lessons::modern_transformer
