#pragma once
// §5.2, §5.4: changing how many K/V heads a trained ModernLM has.
//
// Query head h reads K/V head floor(h / g), g = n_heads / n_kv_heads, and
// the heads are consecutive blocks of head_dim rows of wk.weight and
// wv.weight (docs/models.md). Both functions return a new model whose
// every other parameter is an exact copy of the source's.
#include <cstdint>
#include <memory>

#include "nn/language_model.h"

namespace lessons::gqa {

// §5.2 The MHA twin of a GQA model: n_kv_heads = n_heads, K/V head h of the
// result is K/V head floor(h / g) of `gqa` (each head copied g times), so
// every query head meets exactly the keys and values it met before: the
// same function, with g times the cache.
std::unique_ptr<nn::LanguageModel> repeat_kv_heads(const nn::LanguageModel& gqa);

// §5.4 The first step of uptraining (Ainslie et al., 2023): a model with
// n_kv_heads K/V heads whose head j is the mean of `mha`'s heads
// j·g … j·g + g - 1, g = mha's n_kv_heads / n_kv_heads (for 4 -> 2: heads
// 0,1 -> 0 and 2,3 -> 1). Mean-pooling the projection rows is the same as
// mean-pooling the keys (and values) they compute, since k = x Wkᵀ is
// linear in Wk. Throws std::invalid_argument unless n_kv_heads divides
// mha's (and mha is a ModernLM, with separate wk and wv).
std::unique_ptr<nn::LanguageModel> convert_mha_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads);

}  // namespace lessons::gqa
