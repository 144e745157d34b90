#include "nn/block.h"

namespace nn {

// Registration order = parameter order = the order initial values are drawn.
GptBlock::GptBlock(const LMConfig& cfg, ag::Generator& gen) {
    ln1 = register_module("ln1", std::make_shared<LayerNorm>(cfg.d_model));
    attn = register_module("attn", std::make_shared<GptAttention>(cfg, gen));
    ln2 = register_module("ln2", std::make_shared<LayerNorm>(cfg.d_model));
    mlp = register_module("mlp", std::make_shared<GeluMLP>(cfg.d_model, cfg.d_ff, gen));
}

ModernBlock::ModernBlock(const LMConfig& cfg, ag::Generator& gen) {
    attn_norm = register_module("attn_norm", std::make_shared<RMSNorm>(cfg.d_model));
    attn = register_module("attn", std::make_shared<ModernAttention>(cfg, gen));
    mlp_norm = register_module("mlp_norm", std::make_shared<RMSNorm>(cfg.d_model));
    mlp = register_module("mlp", std::make_shared<SwiGLU>(cfg.d_model, cfg.d_ff, gen));
}

std::shared_ptr<Block> make_block(const LMConfig& cfg, ag::Generator& gen) {
    switch (cfg.model) {
        case ModelKind::Gpt:
            return std::make_shared<GptBlock>(cfg, gen);
        case ModelKind::ModernLM:
            return std::make_shared<ModernBlock>(cfg, gen);
    }
    return nullptr;
}

}  // namespace nn
