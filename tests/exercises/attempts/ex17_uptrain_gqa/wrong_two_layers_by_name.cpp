// Attempt (wrong): lists the projections to pool by their full names for the
// lecture's two-layer ModernLM ("layers.0.attn.wk.weight", …), so a deeper
// model's later layers keep their unpooled K/V weights (only the first
// rows fit).
#include "exercises/ex17_uptrain_gqa.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "autograd/autograd.h"

namespace ex17 {

ag::Tensor pool_kv_heads(const ag::Tensor& w, int64_t head_dim, int64_t new_heads) {
    if (head_dim < 1 || w.size(0) % head_dim != 0) throw std::invalid_argument("pool_kv_heads: bad head_dim");
    const int64_t old_heads = w.size(0) / head_dim, d = w.size(1);
    if (new_heads < 1 || old_heads % new_heads != 0) throw std::invalid_argument("pool_kv_heads: bad new_heads");
    ag::NoGradGuard no_grad;
    return ag::mean(w.reshape({new_heads, old_heads / new_heads, head_dim, d}), {1})
        .reshape({new_heads * head_dim, d})
        .contiguous();
}

std::unique_ptr<nn::LanguageModel> convert_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads) {
    static const std::set<std::string> kv_names = {"layers.0.attn.wk.weight", "layers.0.attn.wv.weight",
                                                   "layers.1.attn.wk.weight", "layers.1.attn.wv.weight"};
    nn::LMConfig cfg = mha.config();
    if (n_kv_heads < 1 || cfg.n_kv_heads % n_kv_heads != 0) throw std::invalid_argument("convert_to_gqa: bad n_kv");
    cfg.n_kv_heads = n_kv_heads;
    auto gqa = std::make_unique<nn::LanguageModel>(cfg, 0);
    ag::NoGradGuard no_grad;
    const auto from = mha.named_parameters(), to = gqa->named_parameters();
    for (size_t i = 0; i < to.size(); ++i) {
        const ag::Tensor value = kv_names.count(to[i].first) ? pool_kv_heads(from[i].second, cfg.head_dim(), n_kv_heads)
                                                             : from[i].second.contiguous();
        ag::Tensor p = to[i].second;
        std::copy_n(value.data(), p.numel(), p.data());
    }
    return gqa;
}

}  // namespace ex17
