#include "nn/block.h"

namespace nn {

// Registration order = parameter order = the order initial values are drawn.
Block::Block(const LMConfig& cfg, ag::Generator& gen) {
    if (cfg.model == "gpt") {
        ln1 = register_module("ln1", std::make_shared<LayerNorm>(cfg.d_model));
        attn = register_module("attn", std::make_shared<Attention>(cfg, gen));
        ln2 = register_module("ln2", std::make_shared<LayerNorm>(cfg.d_model));
        gelu_mlp = register_module("mlp", std::make_shared<GeluMLP>(cfg.d_model, cfg.d_ff, gen));
    } else {
        attn_norm = register_module("attn_norm", std::make_shared<RMSNorm>(cfg.d_model));
        attn = register_module("attn", std::make_shared<Attention>(cfg, gen));
        mlp_norm = register_module("mlp_norm", std::make_shared<RMSNorm>(cfg.d_model));
        swiglu = register_module("mlp", std::make_shared<SwiGLU>(cfg.d_model, cfg.d_ff, gen));
    }
}

Tensor Block::forward(const Tensor& x, const Packing& packing, Tensor* weights) const {
    const Tensor h = x + attn->forward(norm1(x), packing, weights);
    return h + mlp(h);
}

Tensor Block::forward_cached(const Tensor& x, const std::vector<int64_t>& positions, KVCache& cache) const {
    const Tensor h = x + attn->forward_cached(norm1(x), positions, cache);
    return h + mlp(h);
}

}  // namespace nn
