#include "nn/language_model.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace nn {

namespace {

// GPT-2's initialisation (Radford et al., 2019; nanoGPT's _init_weights),
// over a model built with PyTorch's: every parameter of two dimensions
// (the weight matrices, the token and position tables) drawn again from
// N(0, 0.02) by a fresh ag::Generator(seed), in registration order, and
// every bias set to 0; the norms' weights stay 1. GPT-2's 1/√(2 n_layers)
// scaling of the residual projections is not part of it. The std 0.02
// keeps a 64-wide embedding row's norm near 0.16 where N(0, 1) gives 8,
// so learned position rows that no sentence reaches start near zero
// (§2.8 control, lesson 01).
constexpr double kGpt2Std = 0.02;

void init_gpt2(Module& model, uint64_t seed) {
    ag::Generator gen(seed);
    for (auto& [name, p] : model.named_parameters()) {
        const bool bias = name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
        if (p.dim() < 2 && !bias) continue;  // a norm's weight
        double* x = p.data();
        for (int64_t i = 0; i < p.numel(); ++i) x[i] = bias ? 0.0 : gen.normal(0.0, kGpt2Std);
    }
}

}  // namespace

LanguageModel::LanguageModel(const LMConfig& cfg, uint64_t seed) : cfg_(cfg) {
    cfg.validate();
    ag::Generator gen(seed);
    tok_emb = register_module("tok_emb", std::make_shared<Embedding>(cfg.vocab, cfg.d_model, gen));
    if (cfg.pos == PosEncoding::Learned)
        pos_emb = register_module("pos_emb", std::make_shared<Embedding>(cfg.max_len, cfg.d_model, gen));
    auto list = register_module("layers", std::make_shared<ModuleList>());
    for (int64_t l = 0; l < cfg.n_layers; ++l) layers.push_back(list->push_back(make_block(cfg, gen)));
    if (cfg.model == ModelKind::Gpt)
        final_norm = register_module("ln_f", std::make_shared<LayerNorm>(cfg.d_model));
    else
        final_norm = register_module("norm", std::make_shared<RMSNorm>(cfg.d_model));
    head = register_module("head", std::make_shared<Linear>(LinearOptions(cfg.d_model, cfg.vocab).bias(false), gen));
    if (cfg.init == Init::Gpt2) init_gpt2(*this, seed);
}

Tensor sinusoidal_positions(const std::vector<int64_t>& positions, int64_t d) {
    Tensor pe = Tensor::zeros({static_cast<int64_t>(positions.size()), d});
    for (size_t r = 0; r < positions.size(); ++r)
        for (int64_t i = 0; 2 * i < d; ++i) {
            const double angle = static_cast<double>(positions[r]) /
                                 std::pow(10000.0, static_cast<double>(2 * i) / static_cast<double>(d));
            pe.data()[static_cast<int64_t>(r) * d + 2 * i] = std::sin(angle);
            if (2 * i + 1 < d) pe.data()[static_cast<int64_t>(r) * d + 2 * i + 1] = std::cos(angle);
        }
    return pe;
}

// Token embeddings plus, for absolute encodings, the positions' vectors.
// ids: any shape; positions: one per element of ids, in order.
Tensor LanguageModel::embed(const Tensor& ids, const std::vector<int64_t>& positions) const {
    Tensor x = tok_emb->forward(ids);  // [..., d]
    if (cfg_.pos == PosEncoding::Learned) {
        std::vector<double> rows;
        for (int64_t p : positions) {
            if (p < 0 || p >= cfg_.max_len)
                throw std::invalid_argument(fmt::format("{}: position {} has no learned embedding (max_len {})",
                                                        to_string(cfg_.model), p, cfg_.max_len));
            rows.push_back(static_cast<double>(p));
        }
        x = x + pos_emb->forward(Tensor::from(ids.shape(), rows));
    } else if (cfg_.pos == PosEncoding::Sinusoidal) {
        x = x + sinusoidal_positions(positions, cfg_.d_model).reshape(x.shape());
    }
    return x;
}

void LanguageModel::check_packed(const Tensor& ids, const Packing& packing) const {
    if (ids.dim() != 1 || ids.size(0) != packing.rows())
        throw std::invalid_argument(fmt::format("{}: packed ids must be [N] with N = {}, got {}", to_string(cfg_.model),
                                                packing.rows(), ag::shape_str(ids.shape())));
}

Tensor LanguageModel::hidden(const Tensor& ids, const Packing& packing, std::vector<Tensor>* weights) const {
    check_packed(ids, packing);
    Tensor x = embed(ids, packing.positions);
    if (weights) weights->assign(layers.size(), Tensor());
    for (size_t l = 0; l < layers.size(); ++l)
        x = layers[l]->forward(x, Attend::packed(packing, weights ? &(*weights)[l] : nullptr));
    return final_norm->forward(x);
}

Tensor LanguageModel::hidden_at(const Tensor& ids, const Packing& packing, const RowSelection& rows) const {
    check_packed(ids, packing);
    Tensor x = embed(ids, packing.positions);
    for (size_t l = 0; l + 1 < layers.size(); ++l) x = layers[l]->forward(x, Attend::packed(packing));
    return final_norm->forward(layers.back()->forward(x, Attend::rows(packing, rows)));
}

Tensor LanguageModel::forward(const Tensor& ids, const Packing& packing) const {
    return head->forward(hidden(ids, packing));
}

// A padded batch is B packed sequences of length T.
Tensor LanguageModel::hidden(const Tensor& ids, std::vector<Tensor>* weights) const {
    if (ids.dim() != 2)
        throw std::invalid_argument(
            fmt::format("{}: ids must be [B, T], got {}", to_string(cfg_.model), ag::shape_str(ids.shape())));
    const int64_t B = ids.size(0), T = ids.size(1);
    return hidden(ids.reshape({B * T}), Packing::uniform(B, T), weights).reshape({B, T, cfg_.d_model});
}

Tensor LanguageModel::forward(const Tensor& ids, std::vector<Tensor>* weights) const {
    return head->forward(hidden(ids, weights));
}

std::vector<KVCache> LanguageModel::new_caches(CacheKind kind) const {
    const bool rolling = kind == CacheKind::Rolling;
    if (rolling && cfg_.window <= 0)
        throw std::invalid_argument("new_caches: a rolling buffer needs a window (LMConfig::window > 0)");
    return std::vector<KVCache>(layers.size(), rolling ? KVCache::rolling(cfg_.window) : KVCache::plain());
}

Tensor LanguageModel::forward_cached(const Tensor& ids, const std::vector<int64_t>& positions,
                                     std::vector<KVCache>& caches, const std::vector<int64_t>& rope_positions) const {
    if (caches.size() != layers.size())
        throw std::invalid_argument(
            fmt::format("forward_cached: {} caches for {} layers", caches.size(), layers.size()));
    ag::NoGradGuard no_grad;
    if (ids.dim() != 2 || ids.size(1) != static_cast<int64_t>(positions.size()))
        throw std::invalid_argument(fmt::format("{}: ids must be [B, T] with T = {} positions, got {}",
                                                to_string(cfg_.model), positions.size(), ag::shape_str(ids.shape())));
    std::vector<int64_t> all;  // the positions of every row of ids, in order
    for (int64_t b = 0; b < ids.size(0); ++b) all.insert(all.end(), positions.begin(), positions.end());
    Tensor x = embed(ids, all);
    for (size_t l = 0; l < layers.size(); ++l)
        x = layers[l]->forward(x, Attend::cached(positions, caches[l], rope_positions));
    return head->forward(final_norm->forward(x));
}

}  // namespace nn
