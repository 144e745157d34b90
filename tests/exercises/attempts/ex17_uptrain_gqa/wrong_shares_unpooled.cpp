// Attempt (wrong): the parameters that are not pooled are "exact copies"
// anyway, so the new model is pointed at the old model's storage instead of
// copying the numbers: cheap, but uptraining the GQA model now changes the
// MHA model too.
#include "exercises/ex17_uptrain_gqa.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "autograd/autograd.h"

namespace ex17 {

ag::Tensor pool_kv_heads(const ag::Tensor& w, int64_t head_dim, int64_t new_heads) {
    if (head_dim < 1 || w.size(0) % head_dim != 0) throw std::invalid_argument("pool_kv_heads: bad head_dim");
    const int64_t old_heads = w.size(0) / head_dim, d = w.size(1);
    if (new_heads < 1 || old_heads % new_heads != 0) throw std::invalid_argument("pool_kv_heads: bad new_heads");
    const int64_t g = old_heads / new_heads;
    ag::NoGradGuard no_grad;
    return ag::mean(w.reshape({new_heads, g, head_dim, d}), {1}).reshape({new_heads * head_dim, d}).contiguous();
}

std::unique_ptr<nn::LanguageModel> convert_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads) {
    nn::LMConfig cfg = mha.config();
    if (n_kv_heads < 1 || cfg.n_kv_heads % n_kv_heads != 0) throw std::invalid_argument("convert_to_gqa: bad n_kv");
    cfg.n_kv_heads = n_kv_heads;
    auto gqa = std::make_unique<nn::LanguageModel>(cfg, 0);
    ag::NoGradGuard no_grad;
    const auto from = mha.named_parameters(), to = gqa->named_parameters();
    for (size_t i = 0; i < to.size(); ++i) {
        const std::string& name = to[i].first;
        ag::Tensor param = to[i].second;
        if (name.find(".attn.wk.weight") != std::string::npos || name.find(".attn.wv.weight") != std::string::npos) {
            const ag::Tensor pooled = pool_kv_heads(from[i].second, cfg.head_dim(), n_kv_heads);
            std::copy_n(pooled.data(), param.numel(), param.data());
        } else {
            param.set_(from[i].second);  // same numbers, no copy
        }
    }
    return gqa;
}

}  // namespace ex17
