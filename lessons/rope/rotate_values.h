#pragma once
// §9 pitfall 2, "RoPE is a position vector added to the input": RoPE adds
// nothing to the input. In every layer it turns q and k by their own
// absolute positions, and v is left as it is: the scores then depend only
// on t - j (§4.4), and so does the attention's output Σ_j a_tj v_j. Turn v
// as well and the output becomes Σ_j a_tj R_j v_j, which carries the keys'
// absolute positions j: the same sentence read from another first position
// gives other outputs. Here a trained ModernLM's attention runs by hand,
// with the engine's own ops (ag::rope, ag::attention_packed), once as the
// model computes it and once with v turned too.
#include <cstdint>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "lessons/common/cli.h"
#include "nn/language_model.h"

namespace lessons::rope {

// The logits [N, V] of a ModernLM with RoPE on the packed rows ids [N]
// (packing: nn/attention.h), every layer's attention computed by hand: q
// and k, and v too if rotate_values, turned by (position in the sentence +
// shift). With rotate_values false it is the model's own forward pass.
// first_attention, if given, receives layer 1's attention output [N, Hq, dh]
// (before W_o).
ag::Tensor logits_by_hand(const nn::LanguageModel& model, const ag::Tensor& ids, const nn::Packing& packing,
                          int64_t shift, bool rotate_values, ag::Tensor* first_attention = nullptr);

// The test sentences read from first position `shift` instead of 0.
struct ShiftRow {
    int64_t shift = 0;
    double perplexity = 0;          // RoPE on q and k (the model as trained)
    double rotated_perplexity = 0;  // v turned as well
    // max |output(shift) - output(shift 0)| over every test token: layer 1's
    // attention output, and the logits
    double attention_change = 0, rotated_attention_change = 0;
    double logit_change = 0, rotated_logit_change = 0;
};

struct RotatedValues {
    std::string status;    // from the model cache: "trained", "loaded from …"
    std::string training;  // one line: the model and what it was trained on
    int64_t test_sentences = 0;
    double engine_perplexity = 0;   // the model's own forward (lessons::perplexity)
    double by_hand_difference = 0;  // max |logits by hand - the model's own| (v not turned, shift 0)
    std::vector<ShiftRow> shifts;   // in the order asked, the first one 0
};

// The half-pairing ModernLM of part 6 (seed 0, through the model cache in
// --out), on its test sentences at each shift (shifts[0] must be 0).
RotatedValues rotate_values(const Options& options, const std::vector<int64_t>& shifts);

}  // namespace lessons::rope
