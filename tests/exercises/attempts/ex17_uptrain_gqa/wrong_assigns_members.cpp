// Attempt (wrong): copies the unpooled parameters by number, but puts the pooled wk and wv in
// place by assigning them to each layer's attn->wk->weight / wv->weight member, computed without
// a NoGradGuard: the model's forward uses them, but they are not its registered parameters (a
// graph back to the old weights instead)
#include "exercises/ex17_uptrain_gqa.h"

#include <stdexcept>
#include <string>

#include "autograd/autograd.h"

namespace ex17 {

ag::Tensor pool_kv_heads(const ag::Tensor& w, int64_t head_dim, int64_t new_heads) {
    if (head_dim < 1 || w.size(0) % head_dim != 0) throw std::invalid_argument("rows are not whole heads");
    const int64_t H = w.size(0) / head_dim;
    if (new_heads < 1 || H % new_heads != 0) throw std::invalid_argument("new_heads must divide the heads");
    const int64_t g = H / new_heads, d = w.size(1);
    return ag::mean(w.contiguous().reshape({new_heads, g, head_dim, d}), {1}).reshape({new_heads * head_dim, d});
}

static bool pooled(const std::string& name) {
    const auto ends = [&](const std::string& s) {
        return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    return ends("attn.wk.weight") || ends("attn.wv.weight");
}

std::unique_ptr<nn::LanguageModel> convert_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads) {
    nn::LMConfig cfg = mha.config();
    const int64_t dh = cfg.head_dim();
    if (n_kv_heads < 1 || cfg.n_kv_heads % n_kv_heads != 0) throw std::invalid_argument("bad n_kv_heads");
    cfg.n_kv_heads = n_kv_heads;
    auto gqa = std::make_unique<nn::LanguageModel>(cfg, 0);
    const auto from = mha.named_parameters();
    auto to = gqa->named_parameters();
    for (size_t l = 0; l < gqa->layers.size(); ++l) {
        const auto& to_attn = *dynamic_cast<const nn::ModernBlock&>(*gqa->layers[l]).attn;
        const auto& from_attn = *dynamic_cast<const nn::ModernBlock&>(*mha.layers[l]).attn;
        to_attn.wk->weight = pool_kv_heads(from_attn.wk->weight, dh, n_kv_heads);
        to_attn.wv->weight = pool_kv_heads(from_attn.wv->weight, dh, n_kv_heads);
    }
    ag::NoGradGuard guard;
    for (size_t i = 0; i < from.size(); ++i) {
        if (pooled(from[i].first)) continue;
        const ag::Tensor src =
            pooled(from[i].first) ? pool_kv_heads(from[i].second, dh, n_kv_heads) : from[i].second.contiguous();
        ag::Tensor dst = to[i].second;
        const double* s = src.contiguous().data();
        double* t = dst.data();
        for (int64_t j = 0; j < dst.numel(); ++j) t[j] = s[j];
    }
    return gqa;
}

}  // namespace ex17
