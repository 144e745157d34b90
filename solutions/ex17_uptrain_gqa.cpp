// Exercise 17 · uptraining: MHA -> GQA by mean-pooling K/V heads: reference
// solution (lecture §5.4).
#include "exercises/ex17_uptrain_gqa.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "autograd/autograd.h"

namespace ex17 {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool pooled(const std::string& name) {
    return ends_with(name, ".attn.wk.weight") || ends_with(name, ".attn.wv.weight");
}

}  // namespace

ag::Tensor pool_kv_heads(const ag::Tensor& w, int64_t head_dim, int64_t new_heads) {
    if (w.dim() != 2 || head_dim < 1 || w.size(0) % head_dim != 0)
        throw std::invalid_argument(
            fmt::format("pool_kv_heads: {} is not [heads · {}, d]", ag::shape_str(w.shape()), head_dim));
    const int64_t old_heads = w.size(0) / head_dim, d = w.size(1);
    if (new_heads < 1 || old_heads % new_heads != 0)
        throw std::invalid_argument(
            fmt::format("pool_kv_heads: {} heads do not split into {} groups of equal size", old_heads, new_heads));
    const int64_t g = old_heads / new_heads;
    ag::NoGradGuard no_grad;
    // Rows (j·g + i)·dh + r hold row r of old head j·g + i: as [H_new, g, dh, d]
    // the group of new head j is axis 1, and its mean is
    //   new head j = (head j·g + … + head j·g+g-1) / g.
    return ag::mean(w.reshape({new_heads, g, head_dim, d}), {1}).reshape({new_heads * head_dim, d}).contiguous();
}

std::unique_ptr<nn::LanguageModel> convert_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads) {
    nn::LMConfig cfg = mha.config();
    const int64_t dh = cfg.head_dim();
    if (n_kv_heads < 1 || cfg.n_kv_heads % n_kv_heads != 0)
        throw std::invalid_argument(fmt::format(
            "convert_to_gqa: {} K/V heads do not split into {} groups of equal size", cfg.n_kv_heads, n_kv_heads));
    cfg.n_kv_heads = n_kv_heads;
    auto gqa = std::make_unique<nn::LanguageModel>(cfg, 0);  // every number is overwritten below
    ag::NoGradGuard no_grad;
    const auto from = mha.named_parameters(), to = gqa->named_parameters();
    for (size_t i = 0; i < to.size(); ++i) {
        // Same module tree, same order: parameter i of one is parameter i of the other.
        const ag::Tensor value =
            pooled(to[i].first) ? pool_kv_heads(from[i].second, dh, n_kv_heads) : from[i].second.contiguous();
        ag::Tensor param = to[i].second;
        if (value.numel() != param.numel())
            throw std::logic_error(
                fmt::format("convert_to_gqa: {} has {} numbers, {} given", to[i].first, param.numel(), value.numel()));
        std::copy_n(value.data(), param.numel(), param.data());
    }
    return gqa;
}

}  // namespace ex17
