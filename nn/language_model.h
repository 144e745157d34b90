#pragma once
// The lecture's two language models on one skeleton (docs/models.md):
//   logits = head(final_norm(blocks(tok_emb(ids) [+ positions])))
// GPT (lecture 2): learned positions, LayerNorm ln_f, GELU blocks, biases.
// ModernLM (§7, the HW1 TransformerLM): RoPE inside attention (or another
// position encoding), RMSNorm `norm`, SwiGLU blocks, GQA, optional window,
// no biases. Both have an untied output head without bias.
#include <memory>
#include <vector>

#include "nn/block.h"
#include "nn/config.h"

namespace nn {

class LanguageModel : public Module {
public:
    LanguageModel(const LMConfig& cfg, uint64_t seed);  // cfg.model picks the recipe (nn/block.h)
    const LMConfig& config() const { return cfg_; }

    // ids [B, T] (token ids as whole numbers, positions 0 … T-1).
    // hidden: [B, T, d] after the final norm (what a classifier head reads).
    // If `weights` is given, it receives each layer's attention
    // probabilities [B, Hq, T, T] (§7.3 diagnosis).
    Tensor hidden(const Tensor& ids, std::vector<Tensor>* weights = nullptr) const;
    Tensor forward(const Tensor& ids, std::vector<Tensor>* weights = nullptr) const;  // logits [B, T, V]

    // The same on packed sequences (no padding, nn/attention.h): ids [N],
    // returns [N, d] and [N, V]. Padding never changes a real token's
    // output (attention is causal and pads come last), so training computes
    // only the real rows.
    Tensor hidden(const Tensor& ids, const Packing& packing, std::vector<Tensor>* weights = nullptr) const;
    Tensor forward(const Tensor& ids, const Packing& packing) const;

    // The rows rows.rows of hidden(ids, packing), [R, d], with less work: the
    // layers below the top run on every row (the top layer needs their keys
    // and values), the top layer's queries and feed-forward and the final
    // norm run on the chosen rows only. What a classifier on the last
    // token of each sequence reads (§2.8, lesson 01).
    Tensor hidden_at(const Tensor& ids, const Packing& packing, const RowSelection& rows) const;

    // Decoding with a KV cache per layer: ids [B, T] are new tokens at
    // absolute `positions`; returns their logits [B, T, V].
    // rope_positions: see Attention::forward_cached (the §6.4 bug).
    std::vector<KVCache> new_caches(CacheKind kind = CacheKind::Plain) const;  // Rolling needs a window
    Tensor forward_cached(const Tensor& ids, const std::vector<int64_t>& positions, std::vector<KVCache>& caches,
                          const std::vector<int64_t>& rope_positions = {}) const;

    std::shared_ptr<Embedding> tok_emb, pos_emb;  // pos_emb: learned positions only
    std::vector<std::shared_ptr<Block>> layers;
    std::shared_ptr<Norm> final_norm;  // GPT: LayerNorm "ln_f"; ModernLM: RMSNorm "norm"
    std::shared_ptr<Linear> head;

private:
    Tensor embed(const Tensor& ids, const std::vector<int64_t>& positions) const;
    void check_packed(const Tensor& ids, const Packing& packing) const;

    LMConfig cfg_;
};

// Vaswani's sinusoidal table: PE[p, 2i] = sin(p / 10000^(2i/d)),
// PE[p, 2i+1] = cos(p / 10000^(2i/d)), one row per position.
Tensor sinusoidal_positions(const std::vector<int64_t>& positions, int64_t d);

}  // namespace nn
