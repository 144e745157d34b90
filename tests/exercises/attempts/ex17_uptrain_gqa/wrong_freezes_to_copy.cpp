// Attempt (wrong): keeps the copy out of the autograd graph by freezing the
// new model (requires_grad_(false)) instead of using an ag::NoGradGuard, and
// never unfreezes it: the converted model cannot be uptrained.
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
    ag::Tensor sum = w.detach().reshape({new_heads, g, head_dim, d}).narrow(1, 0, 1);
    for (int64_t i = 1; i < g; ++i) sum = sum + w.detach().reshape({new_heads, g, head_dim, d}).narrow(1, i, 1);
    return (sum / static_cast<double>(g)).reshape({new_heads * head_dim, d}).contiguous();
}

std::unique_ptr<nn::LanguageModel> convert_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads) {
    nn::LMConfig cfg = mha.config();
    if (n_kv_heads < 1 || cfg.n_kv_heads % n_kv_heads != 0) throw std::invalid_argument("convert_to_gqa: bad n_kv");
    cfg.n_kv_heads = n_kv_heads;
    auto gqa = std::make_unique<nn::LanguageModel>(cfg, 0);
    gqa->requires_grad_(false);  // writing into the parameters must not be recorded
    const auto from = mha.named_parameters(), to = gqa->named_parameters();
    for (size_t i = 0; i < to.size(); ++i) {
        const std::string& name = to[i].first;
        const bool kv =
            name.find(".attn.wk.weight") != std::string::npos || name.find(".attn.wv.weight") != std::string::npos;
        const ag::Tensor value =
            kv ? pool_kv_heads(from[i].second, cfg.head_dim(), n_kv_heads) : from[i].second.detach().contiguous();
        ag::Tensor p = to[i].second;
        std::copy_n(value.data(), p.numel(), p.data());
    }
    return gqa;
}

}  // namespace ex17
