// Attempt (right): pools with one matmul by an averaging matrix P [H_new·dh, H_old·dh]
// (1/g where row (j, r) meets a row (h, r) of group j), which reads a view through its strides;
// decides what to pool by comparing the two models' shapes rather than by name
#include "exercises/ex17_uptrain_gqa.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/autograd.h"

namespace ex17 {

ag::Tensor pool_kv_heads(const ag::Tensor& w, int64_t head_dim, int64_t new_heads) {
    if (head_dim < 1 || w.size(0) % head_dim != 0) throw std::invalid_argument("rows are not whole heads");
    const int64_t H = w.size(0) / head_dim;
    if (new_heads < 1 || H % new_heads != 0) throw std::invalid_argument("new_heads must divide the heads");
    const int64_t g = H / new_heads, d = w.size(1);
    std::vector<double> p(static_cast<size_t>(new_heads * head_dim * H * head_dim), 0.0);
    for (int64_t j = 0; j < new_heads; ++j)
        for (int64_t h = j * g; h < j * g + g; ++h)
            for (int64_t r = 0; r < head_dim; ++r)
                p[static_cast<size_t>((j * head_dim + r) * H * head_dim + h * head_dim + r)] =
                    1.0 / static_cast<double>(g);
    (void)d;
    return ag::matmul(ag::Tensor::from({new_heads * head_dim, H * head_dim}, p), w);
}

std::unique_ptr<nn::LanguageModel> convert_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads) {
    nn::LMConfig cfg = mha.config();
    const int64_t dh = cfg.head_dim();
    if (n_kv_heads < 1 || cfg.n_kv_heads % n_kv_heads != 0) throw std::invalid_argument("bad n_kv_heads");
    cfg.n_kv_heads = n_kv_heads;
    auto gqa = std::make_unique<nn::LanguageModel>(cfg, 0);
    const auto from = mha.named_parameters();
    auto to = gqa->named_parameters();
    ag::NoGradGuard guard;
    for (size_t i = 0; i < from.size(); ++i) {
        const ag::Tensor src = from[i].second.shape() != to[i].second.shape()
                                   ? pool_kv_heads(from[i].second, dh, n_kv_heads)
                                   : from[i].second.contiguous();
        ag::Tensor dst = to[i].second;
        const double* s = src.contiguous().data();
        double* t = dst.data();
        for (int64_t j = 0; j < dst.numel(); ++j) t[j] = s[j];
    }
    gqa->requires_grad_(true);
    gqa->zero_grad();
    return gqa;
}

}  // namespace ex17
