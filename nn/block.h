#pragma once
// One Transformer block, pre-norm, in each of the lecture's two recipes
// (§7.1). Both are the same two residual steps,
//   x = x + attention(norm(x))
//   x = x + feed_forward(norm(x))
// with different parts; `attend` says how attention runs in this pass
// (every row, chosen rows, or decoding with a cache: nn/attention.h).
#include <memory>

#include "nn/attention.h"
#include "nn/feed_forward.h"

namespace nn {

class Block : public Module {
public:
    virtual Tensor forward(const Tensor& x, const Attend& attend) const = 0;
};

// Lecture 2's GPT: LayerNorm, fused-qkv attention and a GELU MLP, all with
// biases.
class GptBlock final : public Block {
public:
    GptBlock(const LMConfig& cfg, ag::Generator& gen);
    Tensor forward(const Tensor& x, const Attend& attend) const override {
        const Tensor attended = attend(*attn, ln1->forward(x));  // first: it checks the rows attend picks
        const Tensor h = attend.residual(x) + attended;
        return h + mlp->forward(ln2->forward(h));
    }

    std::shared_ptr<LayerNorm> ln1, ln2;
    std::shared_ptr<GptAttention> attn;
    std::shared_ptr<GeluMLP> mlp;
};

// ModernLM (§3, §5): RMSNorm, GQA attention with RoPE, a SwiGLU MLP, no
// biases.
class ModernBlock final : public Block {
public:
    ModernBlock(const LMConfig& cfg, ag::Generator& gen);
    Tensor forward(const Tensor& x, const Attend& attend) const override {
        const Tensor attended = attend(*attn, attn_norm->forward(x));  // first: it checks the rows attend picks
        const Tensor h = attend.residual(x) + attended;
        return h + mlp->forward(mlp_norm->forward(h));
    }

    std::shared_ptr<RMSNorm> attn_norm, mlp_norm;
    std::shared_ptr<ModernAttention> attn;
    std::shared_ptr<SwiGLU> mlp;
};

// The block of cfg.model's recipe.
std::shared_ptr<Block> make_block(const LMConfig& cfg, ag::Generator& gen);

}  // namespace nn
