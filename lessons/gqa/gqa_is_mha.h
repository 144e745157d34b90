#pragma once
// §5.2 GQA: g = h_q / h_kv query heads share one K/V head, query head h
// reading K/V head floor(h / g). It is MHA whose K/V heads come in g equal
// copies, so it computes what that MHA model computes; it only drops the
// copies from wk and wv (a few parameters) and from the cache.
#include <cstdint>
#include <vector>

#include "data/farm_language.h"
#include "nn/config.h"

namespace lessons::gqa {

// One GQA model against its MHA copy, repeat_kv_heads(gqa).
struct CopyComparison {
    int seed = 0;  // the GQA model's init seed
    int64_t kv_heads = 0, g = 0;
    int64_t gqa_parameters = 0, mha_parameters = 0;
    double max_logit_difference = 0;  // max |logits GQA - logits MHA copy|
};

struct GqaAgainstMha {
    std::vector<CopyComparison> rows;  // seed by seed, kv_heads in the order asked
    double worst = 0;                  // max max_logit_difference
    int64_t sentences = 0;             // the logits are on the first 64 test sentences
    int64_t positions = 0;             // of the batch they make ([sentences, T], padding included)
};

// nn::LanguageModel(base with n_kv_heads = each of kv_heads, seed) for
// seed 0 … seeds-1, against its MHA copy, on the first 64 sentences of
// farm::make_corpora(0, language).test.
GqaAgainstMha gqa_against_mha_copies(const nn::LMConfig& base, const std::vector<int64_t>& kv_heads, int seeds,
                                     const farm::Language& language);

// The attention of one ModernLM layer, d = d_model with n_heads query heads
// of d_h = d / n_heads, and kv_heads K/V heads.
struct AttentionParameters {
    int64_t kv_heads = 0, g = 0;
    int64_t wq_wo = 0;             // wq and wo: d² each, whatever kv_heads is
    int64_t wk_wv = 0;             // wk and wv: d · (h_kv · d_h) each
    int64_t module = 0;            // nn::ModernAttention's num_parameters()
    int64_t formula = 0;           // nn::count_parameters: 2d² + 2·d·(h_kv·d_h)
    int64_t cached_per_token = 0;  // K and V values a token leaves in the cache: 2 · h_kv · d_h
};

// For every K/V head count that divides n_heads, from n_heads (MHA) down
// to 1 (MQA).
std::vector<AttentionParameters> attention_parameters(int64_t d_model, int64_t n_heads);

}  // namespace lessons::gqa
