#pragma once
// Exercise 17 · uptraining: MHA -> GQA by mean-pooling K/V heads (lecture
// §5.4). The statement is in ex17_uptrain_gqa.cpp.
#include <cstdint>
#include <memory>

#include "autograd/tensor.h"
#include "nn/language_model.h"

namespace ex17 {

// A K or V projection's weight w [H_old·dh, d] (nn::Linear's layout: head h
// is the block of rows h·dh … h·dh+dh-1, dh = head_dim) pooled to
// new_heads heads: returns [new_heads·dh, d] whose head j is the mean of
// the old heads j·g … j·g+g-1, g = H_old / new_heads (consecutive groups:
// for 4 -> 2, heads 0,1 -> 0 and 2,3 -> 1). w is not changed.
// Throws std::invalid_argument when w.size(0) is not a multiple of
// head_dim, or new_heads < 1 does not divide H_old.
ag::Tensor pool_kv_heads(const ag::Tensor& w, int64_t head_dim, int64_t new_heads);

// The first step of uptraining (Ainslie et al., 2023): a new ModernLM with
// the config of `mha` except n_kv_heads, every parameter an exact copy of
// mha's except each layer's attn.wk.weight and attn.wv.weight, which are
// mha's pooled by pool_kv_heads. The new model owns its numbers (changing
// them leaves mha alone) and every parameter is trainable.
// Throws std::invalid_argument as pool_kv_heads does.
std::unique_ptr<nn::LanguageModel> convert_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads);

}  // namespace ex17
