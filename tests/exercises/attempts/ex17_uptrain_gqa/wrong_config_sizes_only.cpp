// Attempt (wrong): builds the new config from LMConfig::modern_lm() and
// copies over only the sizes that shape the parameters (vocab, d_model,
// layers, heads, d_ff), so the old model's RoPE base, pairing, window and
// max_len are silently reset to the defaults.
#include "exercises/ex17_uptrain_gqa.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "autograd/autograd.h"

namespace ex17 {

ag::Tensor pool_kv_heads(const ag::Tensor& w, int64_t head_dim, int64_t new_heads) {
    if (head_dim < 1 || w.size(0) % head_dim != 0) throw std::invalid_argument("pool_kv_heads: bad head_dim");
    const int64_t heads = w.size(0) / head_dim;
    if (new_heads < 1 || heads % new_heads != 0) throw std::invalid_argument("pool_kv_heads: bad new_heads");
    const int64_t g = heads / new_heads;
    ag::NoGradGuard ng;
    return ag::mean(w.reshape({new_heads, g, head_dim, w.size(1)}), {1}).reshape({new_heads * head_dim, w.size(1)});
}

std::unique_ptr<nn::LanguageModel> convert_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads) {
    const nn::LMConfig& old = mha.config();
    if (n_kv_heads < 1 || old.n_kv_heads % n_kv_heads != 0)
        throw std::invalid_argument("convert_to_gqa: bad n_kv_heads");
    nn::LMConfig cfg = nn::LMConfig::modern_lm();
    cfg.vocab = old.vocab;
    cfg.d_model = old.d_model;
    cfg.n_layers = old.n_layers;
    cfg.n_heads = old.n_heads;
    cfg.d_ff = old.d_ff;
    cfg.n_kv_heads = n_kv_heads;
    auto gqa = std::make_unique<nn::LanguageModel>(cfg, 0);
    ag::NoGradGuard ng;
    const auto src = mha.named_parameters(), dst = gqa->named_parameters();
    for (size_t i = 0; i < dst.size(); ++i) {
        const std::string& name = dst[i].first;
        const bool pool = name.find(".attn.wk.") != std::string::npos || name.find(".attn.wv.") != std::string::npos;
        const ag::Tensor v =
            pool ? pool_kv_heads(src[i].second, cfg.head_dim(), n_kv_heads) : src[i].second.contiguous();
        ag::Tensor p = dst[i].second;
        std::copy_n(v.data(), p.numel(), p.data());
    }
    return gqa;
}

}  // namespace ex17
