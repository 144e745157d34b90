#pragma once
// One Transformer block, pre-norm, in either recipe (§7.1):
//   GPT (lecture 2):  x += attn(ln1(x));       x += mlp(ln2(x))        LayerNorm, GELU MLP, biases
//   ModernLM (§3):    x += attn(attn_norm(x)); x += mlp(mlp_norm(x))   RMSNorm, SwiGLU, no biases
#include <memory>

#include "nn/attention.h"
#include "nn/feed_forward.h"

namespace nn {

class Block : public Module {
public:
    Block(const LMConfig& cfg, ag::Generator& gen);
    Tensor forward(const Tensor& x, const Packing& packing, Tensor* weights = nullptr) const;  // x [N, d]
    Tensor forward_cached(const Tensor& x, const std::vector<int64_t>& positions, KVCache& cache) const;

    std::shared_ptr<Attention> attn;
    std::shared_ptr<LayerNorm> ln1, ln2;          // GPT
    std::shared_ptr<GeluMLP> gelu_mlp;            // GPT: "mlp"
    std::shared_ptr<RMSNorm> attn_norm, mlp_norm; // ModernLM
    std::shared_ptr<SwiGLU> swiglu;               // ModernLM: "mlp"

private:
    Tensor norm1(const Tensor& x) const { return ln1 ? ln1->forward(x) : attn_norm->forward(x); }
    Tensor mlp(const Tensor& x) const {
        return gelu_mlp ? gelu_mlp->forward(ln2->forward(x)) : swiglu->forward(mlp_norm->forward(x));
    }
};

}  // namespace nn
