#include "lessons/gqa/kv_heads.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace lessons::gqa {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_kv_projection(const std::string& name) {
    return ends_with(name, ".attn.wk.weight") || ends_with(name, ".attn.wv.weight");
}

// head(w, j): K/V head j of the new model, [head_dim, d], made from a
// source projection w [n_kv_heads · head_dim, d].
using MakeHead = std::function<ag::Tensor(const ag::Tensor& w, int64_t j)>;

// A copy of `source` with n_kv_heads K/V heads: wk and wv rebuilt head by
// head, every other parameter copied unchanged.
std::unique_ptr<nn::LanguageModel> with_kv_heads(const nn::LanguageModel& source, int64_t n_kv_heads,
                                                 const MakeHead& head) {
    ag::NoGradGuard no_grad;
    nn::LMConfig cfg = source.config();
    cfg.n_kv_heads = n_kv_heads;
    auto target = std::make_unique<nn::LanguageModel>(cfg, 0);  // every value is overwritten below
    const auto from = source.named_parameters(), to = target->named_parameters();
    for (size_t i = 0; i < to.size(); ++i) {
        ag::Tensor value = from[i].second;
        if (is_kv_projection(to[i].first)) {
            std::vector<ag::Tensor> heads;
            for (int64_t j = 0; j < n_kv_heads; ++j) heads.push_back(head(value, j));
            value = ag::cat(heads, 0);
        }
        value = value.contiguous();
        ag::Tensor param = to[i].second;
        std::copy_n(value.data(), param.numel(), param.data());
    }
    return target;
}

}  // namespace

std::unique_ptr<nn::LanguageModel> repeat_kv_heads(const nn::LanguageModel& gqa) {
    const nn::LMConfig& cfg = gqa.config();
    const int64_t dh = cfg.head_dim(), g = cfg.n_heads / cfg.n_kv_heads;
    // §5.2 query head h uses K/V head floor(h / g): give it its own copy.
    return with_kv_heads(gqa, cfg.n_heads,
                         [=](const ag::Tensor& w, int64_t h) { return w.narrow(0, (h / g) * dh, dh); });
}

std::unique_ptr<nn::LanguageModel> convert_mha_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads) {
    const nn::LMConfig& cfg = mha.config();
    if (cfg.model != nn::ModelKind::ModernLM)
        throw std::invalid_argument(fmt::format("convert_mha_to_gqa: a '{}' model has no separate wk and wv to pool",
                                                nn::to_string(cfg.model)));
    if (n_kv_heads < 1 || n_kv_heads > cfg.n_kv_heads || cfg.n_kv_heads % n_kv_heads != 0)
        throw std::invalid_argument(
            fmt::format("convert_mha_to_gqa: {} K/V heads cannot be pooled into {} groups of equal size",
                        cfg.n_kv_heads, n_kv_heads));
    const int64_t dh = cfg.head_dim(), g = cfg.n_kv_heads / n_kv_heads;
    // §5.4 new head j = (head j·g + … + head j·g + g - 1) / g
    return with_kv_heads(mha, n_kv_heads, [=](const ag::Tensor& w, int64_t j) {
        ag::Tensor sum = w.narrow(0, j * g * dh, dh);
        for (int64_t i = 1; i < g; ++i) sum = sum + w.narrow(0, (j * g + i) * dh, dh);
        return sum / static_cast<double>(g);
    });
}

}  // namespace lessons::gqa
