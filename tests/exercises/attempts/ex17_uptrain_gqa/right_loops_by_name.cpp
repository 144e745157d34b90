// Attempt (right): pools with explicit loops over the rows of a contiguous
// copy of w, and matches the two models' parameters by name (a map) rather
// than by position in named_parameters().
#include "exercises/ex17_uptrain_gqa.h"

#include <map>
#include <stdexcept>
#include <string>

#include "autograd/autograd.h"

namespace ex17 {

ag::Tensor pool_kv_heads(const ag::Tensor& w, int64_t head_dim, int64_t new_heads) {
    if (w.dim() != 2 || head_dim <= 0 || w.size(0) % head_dim != 0)
        throw std::invalid_argument("pool_kv_heads: rows are not whole heads");
    const int64_t old_heads = w.size(0) / head_dim;
    if (new_heads <= 0 || old_heads % new_heads != 0)
        throw std::invalid_argument("pool_kv_heads: heads do not split into equal groups");
    const int64_t group = old_heads / new_heads, d = w.size(1);
    const ag::Tensor src = w.detach().contiguous();
    ag::Tensor out = ag::Tensor::zeros({new_heads * head_dim, d});
    const double* in = src.data();
    double* o = out.data();
    for (int64_t j = 0; j < new_heads; ++j)
        for (int64_t i = 0; i < group; ++i) {
            const int64_t old = j * group + i;  // consecutive heads j·g … j·g+g-1
            for (int64_t r = 0; r < head_dim; ++r)
                for (int64_t c = 0; c < d; ++c)
                    o[(j * head_dim + r) * d + c] += in[(old * head_dim + r) * d + c] / static_cast<double>(group);
        }
    return out;
}

std::unique_ptr<nn::LanguageModel> convert_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads) {
    nn::LMConfig cfg = mha.config();
    if (n_kv_heads <= 0 || cfg.n_kv_heads % n_kv_heads != 0)
        throw std::invalid_argument("convert_to_gqa: K/V heads do not split into equal groups");
    cfg.n_kv_heads = n_kv_heads;
    auto out = std::make_unique<nn::LanguageModel>(cfg, 1234);

    std::map<std::string, ag::Tensor> old_params;
    for (const auto& [name, p] : mha.named_parameters()) old_params[name] = p;

    ag::NoGradGuard no_grad;
    for (auto& [name, p] : out->named_parameters()) {
        const ag::Tensor& old = old_params.at(name);
        const bool kv =
            name.find("attn.wk.weight") != std::string::npos || name.find("attn.wv.weight") != std::string::npos;
        const ag::Tensor value = kv ? pool_kv_heads(old, cfg.head_dim(), n_kv_heads) : old.contiguous();
        if (value.numel() != p.numel()) throw std::logic_error("convert_to_gqa: size mismatch for " + name);
        ag::Tensor dst = p;
        const double* s = value.data();
        double* t = dst.data();
        for (int64_t i = 0; i < dst.numel(); ++i) t[i] = s[i];
    }
    return out;
}

}  // namespace ex17
