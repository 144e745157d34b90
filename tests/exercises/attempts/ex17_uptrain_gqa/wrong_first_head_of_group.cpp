// Attempt (wrong): the g heads of a group end up shared anyway, so each new
// K/V head is taken to be the group's first head (a representative) rather
// than the MEAN of the group's heads.
#include "exercises/ex17_uptrain_gqa.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "autograd/autograd.h"

namespace ex17 {

ag::Tensor pool_kv_heads(const ag::Tensor& w, int64_t head_dim, int64_t new_heads) {
    if (head_dim < 1 || w.size(0) % head_dim != 0) throw std::invalid_argument("pool_kv_heads: rows vs head_dim");
    const int64_t old_heads = w.size(0) / head_dim;
    if (new_heads < 1 || old_heads % new_heads != 0) throw std::invalid_argument("pool_kv_heads: groups");
    const int64_t g = old_heads / new_heads;
    ag::NoGradGuard no_grad;
    std::vector<ag::Tensor> picked;
    for (int64_t j = 0; j < new_heads; ++j) picked.push_back(w.narrow(0, j * g * head_dim, head_dim));
    return ag::cat(picked, 0).contiguous();
}

std::unique_ptr<nn::LanguageModel> convert_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads) {
    nn::LMConfig cfg = mha.config();
    if (n_kv_heads < 1 || cfg.n_kv_heads % n_kv_heads != 0) throw std::invalid_argument("convert_to_gqa: groups");
    cfg.n_kv_heads = n_kv_heads;
    auto gqa = std::make_unique<nn::LanguageModel>(cfg, 0);
    ag::NoGradGuard no_grad;
    const auto a = mha.named_parameters(), b = gqa->named_parameters();
    for (size_t i = 0; i < b.size(); ++i) {
        const std::string& n = b[i].first;
        const bool kv =
            n.find(".attn.wk.weight") != std::string::npos || n.find(".attn.wv.weight") != std::string::npos;
        const ag::Tensor src = kv ? pool_kv_heads(a[i].second, cfg.head_dim(), n_kv_heads) : a[i].second.contiguous();
        ag::Tensor dst = b[i].second;
        std::copy_n(src.data(), dst.numel(), dst.data());
    }
    return gqa;
}

}  // namespace ex17
