#include "lessons/common/evaluation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "data/batching.h"

namespace lessons {
namespace {

// Evaluation batches: larger than training's 32, as no graph is kept.
constexpr int64_t kEvalBatch = 128;

ag::Tensor row_of(const std::vector<int64_t>& ids) {
    return ag::Tensor::from({1, static_cast<int64_t>(ids.size())}, std::vector<double>(ids.begin(), ids.end()));
}

// Can `id` come next in a sentence? <pad> and <s> cannot: a pad is no
// text and <s> only opens a sentence (farm_lm's --prompt and --data refuse
// both inside one), so a continuation never holds them whatever the
// logits say (an untrained model gives them 1/68 each).
bool may_continue(int64_t id) { return id != farm::PAD && id != farm::BOS; }

// The next token from one row of logits z[0 … V-1], <pad> and <s> masked
// out: the first largest (greedy), or a draw from softmax(z / temperature)
// by inverting the cumulative distribution at one uniform u.
int64_t choose(const double* z, int64_t V, const Sampling& sampling, ag::Generator& gen) {
    int64_t best = -1;
    for (int64_t i = 0; i < V; ++i)
        if (may_continue(i) && (best < 0 || z[i] > z[best])) best = i;
    if (sampling.temperature <= 0) return best;
    std::vector<double> weight(static_cast<size_t>(V));
    double total = 0;
    for (int64_t i = 0; i < V; ++i)
        if (may_continue(i)) total += weight[i] = std::exp((z[i] - z[best]) / sampling.temperature);
    const double u = gen.uniform() * total;
    double cumulative = 0;
    for (int64_t i = 0; i < V; ++i) {
        cumulative += weight[i];
        if (u < cumulative) return i;
    }
    return best;  // u rounded up to the total: the cumulative sum never passed it
}

// Can the model read a sequence of `length` tokens (positions 0 … length-1)?
bool readable(const nn::LanguageModel& model, size_t length) {
    return static_cast<int64_t>(length) <= generation_context(model.config());
}

void check_prompt(const nn::LanguageModel& model, const std::vector<int64_t>& prompt) {
    if (prompt.empty()) throw std::invalid_argument("generate: the prompt is empty (start it with <s>)");
    if (!readable(model, prompt.size()))
        throw std::invalid_argument(
            fmt::format("generate: a prompt of {} tokens is longer than the model's context ({})", prompt.size(),
                        generation_context(model.config())));
}

}  // namespace

double perplexity(const nn::LanguageModel& model, const std::vector<farm::Sentence>& sentences) {
    if (sentences.empty()) throw std::invalid_argument("perplexity: no sentences");
    ag::NoGradGuard no_grad;
    double loss_sum = 0;  // Σ -log p(token | its prefix) over every predicted token
    int64_t tokens = 0;
    for (const farm::LmBatch& batch : farm::make_lm_batches(sentences, kEvalBatch)) {
        // Only the real tokens, packed without padding (as in training).
        // cross_entropy is the mean over them; times their count, the sum.
        const ag::Tensor logits = model.forward(batch.packed_ids, nn::Packing::from_starts(batch.starts));
        const double mean = ag::cross_entropy(logits, batch.packed_targets).item();
        loss_sum += mean * static_cast<double>(batch.tokens);
        tokens += batch.tokens;
    }
    return std::exp(loss_sum / static_cast<double>(tokens));
}

AgreementResult agreement(const nn::LanguageModel& model, const std::vector<farm::Sentence>& prefixes) {
    if (prefixes.empty()) throw std::invalid_argument("agreement: no prefixes");
    ag::NoGradGuard no_grad;
    const int64_t V = model.config().vocab;
    AgreementResult result;
    for (const farm::PrefixBatch& batch : farm::make_prefix_batches(prefixes, kEvalBatch)) {
        const std::vector<double> logits = model.forward(batch.ids).to_vector();  // [B, T, V]
        const int64_t T = batch.ids.size(1);
        for (size_t b = 0; b < batch.last.size(); ++b) {
            const double* z = logits.data() + (static_cast<int64_t>(b) * T + batch.last[b]) * V;
            // The softmax's normaliser cancels in every ratio below, so the
            // masses are exp(z - m) with m the largest verb logit (no overflow).
            double m = -INFINITY;
            for (int plural = 0; plural < 2; ++plural)
                for (int64_t id : farm::verb_ids(plural)) m = std::max(m, z[id]);
            double mass[2] = {0, 0};  // [singular verbs, plural verbs]
            for (int plural = 0; plural < 2; ++plural)
                for (int64_t id : farm::verb_ids(plural)) mass[plural] += std::exp(z[id] - m);
            const int label = batch.labels[b];
            result.accuracy += mass[label] > mass[1 - label] ? 1.0 : 0.0;
            result.p_correct += mass[label] / (mass[0] + mass[1]);
        }
    }
    const auto n = static_cast<double>(prefixes.size());
    result.accuracy /= n;
    result.p_correct /= n;
    return result;
}

std::vector<AgreementResult> agreement_per_k(const nn::LanguageModel& model,
                                             const std::vector<std::vector<farm::Sentence>>& sets) {
    std::vector<AgreementResult> results;
    for (const auto& set : sets) results.push_back(agreement(model, set));
    return results;
}

// Learned positions have a row per position below max_len; any other
// encoding reads on, up to the cap.
int64_t generation_context(const nn::LMConfig& cfg) {
    return cfg.pos == nn::PosEncoding::Learned ? cfg.max_len : kMaxSequence;
}

std::vector<int64_t> generate(const nn::LanguageModel& model, const std::vector<int64_t>& prompt,
                              int64_t max_new_tokens, const Sampling& sampling, ag::Generator& gen) {
    check_prompt(model, prompt);
    std::vector<int64_t> sequence = prompt;
    if (max_new_tokens <= 0) return sequence;
    const int64_t V = model.config().vocab;

    // The prompt in one call, at positions 0 … P-1; its last row predicts
    // the first new token.
    std::vector<nn::KVCache> caches =
        model.new_caches(model.config().window > 0 ? nn::CacheKind::Rolling : nn::CacheKind::Plain);
    std::vector<int64_t> positions(prompt.size());
    for (size_t t = 0; t < prompt.size(); ++t) positions[t] = static_cast<int64_t>(t);
    ag::Tensor logits = model.forward_cached(row_of(prompt), positions, caches).contiguous();  // [1, P, V]
    const double* last = logits.data() + (static_cast<int64_t>(prompt.size()) - 1) * V;

    for (int64_t produced = 0;;) {
        const int64_t next = choose(last, V, sampling, gen);
        sequence.push_back(next);
        if (next == farm::EOS || ++produced == max_new_tokens || !readable(model, sequence.size())) break;
        // Only the new token is run: the cache holds every earlier key and
        // value, and its absolute position keeps RoPE's rotation right.
        logits = model.forward_cached(row_of({next}), {static_cast<int64_t>(sequence.size()) - 1}, caches).contiguous();
        last = logits.data();
    }
    return sequence;
}

std::vector<int64_t> generate_uncached(const nn::LanguageModel& model, const std::vector<int64_t>& prompt,
                                       int64_t max_new_tokens, const Sampling& sampling, ag::Generator& gen) {
    check_prompt(model, prompt);
    ag::NoGradGuard no_grad;
    const int64_t V = model.config().vocab;
    std::vector<int64_t> sequence = prompt;
    for (int64_t produced = 0; produced < max_new_tokens; ++produced) {
        const ag::Tensor logits = model.forward(row_of(sequence)).contiguous();  // [1, L, V]
        const int64_t next = choose(logits.data() + (static_cast<int64_t>(sequence.size()) - 1) * V, V, sampling, gen);
        sequence.push_back(next);
        if (next == farm::EOS || !readable(model, sequence.size())) break;
    }
    return sequence;
}

double grammar_perplexity(const std::vector<farm::Sentence>& sentences, const farm::Language& language) {
    if (sentences.empty()) throw std::invalid_argument("grammar_perplexity: no sentences");
    double logp = 0;
    int64_t tokens = 0;
    for (const farm::Sentence& s : sentences) {
        try {
            logp += farm::log_probability(s.ids, language);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("grammar_perplexity: ") + e.what());
        }
        tokens += static_cast<int64_t>(s.ids.size()) - 1;
    }
    return std::exp(-logp / static_cast<double>(tokens));
}

}  // namespace lessons
