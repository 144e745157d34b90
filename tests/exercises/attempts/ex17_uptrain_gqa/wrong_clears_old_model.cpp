// Attempt (wrong): makes sure no gradient or frozen flag is carried over by clearing them at the
// source: zeroes the old model's gradients and unfreezes its parameters before copying, so the
// conversion changes the model it was given
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
    for (auto [name, p] : from) {
        p.zero_grad();
        p.requires_grad_(true);
    }
    auto to = gqa->named_parameters();
    ag::NoGradGuard guard;
    for (size_t i = 0; i < from.size(); ++i) {
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
