// Attempt (wrong): takes a K/V head's size to be d_model / n_kv_heads (the
// K projection's rows split evenly over the K/V heads). That is head_dim only
// for MHA; in a model that already shares K/V heads each K/V head still has
// head_dim = d_model / n_heads dimensions, like a query head.
#include "exercises/ex17_uptrain_gqa.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "autograd/autograd.h"

namespace ex17 {

namespace {
bool is_kv_weight(const std::string& name) {
    return name.find("attn.wk.weight") != std::string::npos || name.find("attn.wv.weight") != std::string::npos;
}
}  // namespace

ag::Tensor pool_kv_heads(const ag::Tensor& w, int64_t head_dim, int64_t new_heads) {
    if (head_dim <= 0 || w.size(0) % head_dim != 0) throw std::invalid_argument("pool_kv_heads: not whole heads");
    const int64_t old_heads = w.size(0) / head_dim;
    if (new_heads <= 0 || old_heads % new_heads != 0) throw std::invalid_argument("pool_kv_heads: unequal groups");
    const int64_t g = old_heads / new_heads, d = w.size(1);
    ag::NoGradGuard no_grad;
    return ag::mean(w.reshape({new_heads, g, head_dim, d}), {1}).reshape({new_heads * head_dim, d}).contiguous();
}

std::unique_ptr<nn::LanguageModel> convert_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads) {
    nn::LMConfig cfg = mha.config();
    if (n_kv_heads < 1 || cfg.n_kv_heads % n_kv_heads != 0)
        throw std::invalid_argument("convert_to_gqa: K/V heads do not split evenly");
    const int64_t kv_head_size = cfg.d_model / cfg.n_kv_heads;  // the size of one K/V head
    cfg.n_kv_heads = n_kv_heads;
    auto gqa = std::make_unique<nn::LanguageModel>(cfg, 7);
    ag::NoGradGuard no_grad;
    const auto from = mha.named_parameters(), to = gqa->named_parameters();
    for (size_t i = 0; i < to.size(); ++i) {
        const ag::Tensor value = is_kv_weight(to[i].first) ? pool_kv_heads(from[i].second, kv_head_size, n_kv_heads)
                                                           : from[i].second.contiguous();
        ag::Tensor p = to[i].second;
        std::copy_n(value.data(), p.numel(), p.data());
    }
    return gqa;
}

}  // namespace ex17
