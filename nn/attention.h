#pragma once
// Causal self-attention with every option of the lecture: query heads and
// KV heads (§5 MHA / GQA / MQA), RoPE on q and k (§4), a sliding window
// (§6), and decoding with a KV cache, including Mistral's rolling buffer
// (§6.4).
#include <memory>
#include <vector>

#include "nn/config.h"
#include "nn/layers.h"

namespace nn {

// Keys and values of the positions seen so far, for one layer.
//  - plain cache: grows by one entry per decoded token;
//  - rolling buffer (window W > 0): W-1 slots, position p stored in slot
//    p mod (W-1), overwriting the oldest. A query at p sees p itself and the
//    W-1 positions before it, so nothing older is ever needed again.
// Keys are stored rotated by their own absolute position (RoPE), so where
// they sit in the buffer does not matter.
struct KVCache {
    Tensor k, v;                     // [B, slots, Hkv, dh]
    std::vector<int64_t> positions;  // absolute position of each slot (-1: empty)
    int64_t capacity = -1;           // slots of a rolling buffer; -1: a plain cache

    static KVCache plain() { return {}; }
    static KVCache rolling(int64_t window) {
        KVCache c;
        c.capacity = window - 1;
        return c;
    }
    int64_t slots() const { return static_cast<int64_t>(positions.size()); }
};

// Where the rows of a packed activation [N, d] come from: several sequences
// laid end to end without padding. Sequence b is rows starts[b] …
// starts[b+1]-1; row i is token positions[i] of its sequence. Every
// row-wise layer (norms, linears, the MLP, the head) just sees N rows; only
// attention needs the packing, to keep sequences apart.
struct Packing {
    std::vector<int64_t> starts;     // [B + 1], from 0 to N
    std::vector<int64_t> positions;  // [N]

    static Packing from_starts(std::vector<int64_t> starts);  // validates
    static Packing uniform(int64_t B, int64_t T);              // B sequences of length T
    int64_t rows() const { return starts.empty() ? 0 : starts.back(); }
    int64_t sequences() const { return starts.empty() ? 0 : static_cast<int64_t>(starts.size()) - 1; }
};

class Attention : public Module {
public:
    // GPT names its projections qkv (fused, [3d, d]) and proj, with biases;
    // ModernLM names them wq, wk, wv, wo, without biases.
    Attention(const LMConfig& cfg, ag::Generator& gen);

    // x [N, d]: packed sequences (training and evaluation). With `weights`
    // (sequences of one length T only), receives the attention
    // probabilities [B, Hq, T, T].
    Tensor forward(const Tensor& x, const Packing& packing, Tensor* weights = nullptr) const;

    // Decoding: x [B, T, d] are new tokens at absolute `positions`; they
    // attend to the cache and to each other, then are stored in it.
    Tensor forward_cached(const Tensor& x, const std::vector<int64_t>& positions, KVCache& cache) const;

    std::shared_ptr<Linear> qkv, proj;          // GPT
    std::shared_ptr<Linear> wq, wk, wv, wo;     // ModernLM

private:
    struct QKV {
        Tensor q, k, v;  // [..., T, H, dh] each
    };
    // x [..., T, d] with T = positions.size()
    QKV project(const Tensor& x, const std::vector<int64_t>& positions) const;
    Tensor output(const Tensor& heads) const;  // [..., Hq, dh] -> [..., d]

    LMConfig cfg_;
};

}  // namespace nn
