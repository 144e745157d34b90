#pragma once
// Measuring a language model on the farm language (docs/farm_language.md):
// perplexity, the subject-verb agreement test, and text generation with
// the KV cache. Everything here runs without recording a graph.
#include <cstdint>
#include <vector>

#include "autograd/generator.h"
#include "data/farm_language.h"
#include "nn/language_model.h"

namespace lessons {

// exp(mean cross-entropy) over every predicted token of the sentences: all
// tokens after <s>, </s> included, <pad> excluded (a sentence of L tokens
// contributes L - 1). The per-token losses are summed over all batches
// before dividing, so the batch size does not change the result. A model
// that gives every token the same logit scores exactly V = 68.
double perplexity(const nn::LanguageModel& model, const std::vector<farm::Sentence>& sentences);

// The farm grammar's own perplexity, the floor under every trained model's
// test perplexity (§5.4, §7.2): exp of the mean over predicted tokens (every token after <s>, as
// lessons::perplexity counts them) of -log p(token | prefix) under the
// language that generated the sentences (farm::log_probability; in the
// uniform language a sentence's conditionals multiply to
//   p = 1/4 (k) · 1/24 (SUBJ) · (1/6 · 1/24)^k (PPs) · 1/12 (verb lemma)
//       · p(OBJ) · p(ADV),
// docs/farm_language.md). No model beats it on average: it is the floor
// under every trained model's test perplexity. Throws
// std::invalid_argument for a sentence the grammar cannot make.
double grammar_perplexity(const std::vector<farm::Sentence>& sentences, const farm::Language& language);

// The agreement test (§6.5, §7.3) on prefixes <s> the SUBJ PP{k}: at the
// last position, the probability mass on the 12 verb forms of the
// subject's number against the mass on the 12 of the other number.
struct AgreementResult {
    double accuracy = 0;   // share of prefixes where the correct number has more mass
    double p_correct = 0;  // mean of mass(correct) / mass(all 24 verb forms); 0.5 = cannot tell
};
AgreementResult agreement(const nn::LanguageModel& model, const std::vector<farm::Sentence>& prefixes);
// One result per set: sets[k - 1] holds the prefixes with k attractors
// (farm::make_agreement_sets).
std::vector<AgreementResult> agreement_per_k(const nn::LanguageModel& model,
                                             const std::vector<std::vector<farm::Sentence>>& sets);

// How the next token is chosen: greedy (argmax; temperature 0) or sampled
// from softmax(logits / temperature).
struct Sampling {
    double temperature = 0;
    static Sampling greedy() { return {}; }
    static Sampling with_temperature(double t) { return {t}; }
};

// The longest sequence generate() reads when the positions are not learned
// (learned ones stop at the model's max_len, 40 for GPT): a farm sentence
// is a few dozen tokens at most, and a longer run only costs time (each
// new token attends to every earlier one).
constexpr int64_t kMaxSequence = 1024;
// The longest sequence generate() reads with a model of this config:
// max_len with learned positions, kMaxSequence otherwise.
int64_t generation_context(const nn::LMConfig& cfg);

// Continues `prompt` (token ids, starting with <s>) by up to max_new_tokens
// tokens, stopping after </s>, and returns prompt + continuation. Decoding
// uses the KV cache (a rolling buffer of W - 1 slots when the model has a
// window W, §6.4): the prompt is read in one call, then one token per call
// at its absolute position. It also stops once the model has read
// generation_context(cfg) tokens (learned positions have no embedding for
// position max_len), with the token predicted at the last of them: the
// sequence holds at most that + 1. Neither <pad> nor <s> is ever
// chosen: the continuation is text that farm::encode reads back. `gen`
// draws the samples (one uniform per sampled token; greedy draws nothing).
std::vector<int64_t> generate(const nn::LanguageModel& model, const std::vector<int64_t>& prompt,
                              int64_t max_new_tokens, const Sampling& sampling, ag::Generator& gen);
// The same without a cache: the whole sequence is run again for every new
// token. The reference the cached path is tested against.
std::vector<int64_t> generate_uncached(const nn::LanguageModel& model, const std::vector<int64_t>& prompt,
                                       int64_t max_new_tokens, const Sampling& sampling, ag::Generator& gen);

}  // namespace lessons
