// Attempt (wrong): pools by indexing w.data() as a flat row-major array,
// which is only w's numbers when w is contiguous; a view of a weight (a
// transpose, a slice) is read wrongly.
#include "exercises/ex17_uptrain_gqa.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "autograd/autograd.h"

namespace ex17 {

ag::Tensor pool_kv_heads(const ag::Tensor& w, int64_t head_dim, int64_t new_heads) {
    if (head_dim < 1 || w.size(0) % head_dim != 0) throw std::invalid_argument("pool_kv_heads: bad head_dim");
    const int64_t old_heads = w.size(0) / head_dim;
    if (new_heads < 1 || old_heads % new_heads != 0) throw std::invalid_argument("pool_kv_heads: bad new_heads");
    const int64_t g = old_heads / new_heads;
    const int64_t block = head_dim * w.size(1);  // the numbers of one head
    std::vector<double> out(static_cast<size_t>(new_heads * block), 0.0);
    const double* src = w.data();
    for (int64_t h = 0; h < old_heads; ++h)
        for (int64_t k = 0; k < block; ++k)
            out[static_cast<size_t>((h / g) * block + k)] += src[h * block + k] / static_cast<double>(g);
    return ag::Tensor::from({new_heads * head_dim, w.size(1)}, out);
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
        const bool kv =
            name.find(".attn.wk.weight") != std::string::npos || name.find(".attn.wv.weight") != std::string::npos;
        const ag::Tensor value =
            kv ? pool_kv_heads(from[i].second, cfg.head_dim(), n_kv_heads) : from[i].second.contiguous();
        ag::Tensor p = to[i].second;
        std::copy_n(value.data(), p.numel(), p.data());
    }
    return gqa;
}

}  // namespace ex17
