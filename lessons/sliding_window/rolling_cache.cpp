#include "lessons/sliding_window/rolling_cache.h"

#include <algorithm>
#include <stdexcept>

#include "autograd/autograd.h"

namespace lessons::sliding_window {

std::string describe(RotateBy rotate_by) {
    switch (rotate_by) {
        case RotateBy::AbsolutePosition: return "absolute position p (correct)";
        case RotateBy::CacheLength: return "cache length min(p, W-1) (bug)";
        case RotateBy::Slot: return "slot p mod (W-1) (bug)";
    }
    return "";
}

int64_t rotation_position(RotateBy rotate_by, int64_t position, int64_t window) {
    switch (rotate_by) {
        case RotateBy::AbsolutePosition: return position;
        case RotateBy::CacheLength: return std::min(position, window - 1);
        case RotateBy::Slot: return position % (window - 1);
    }
    return position;
}

ag::Tensor decode_rolling(const nn::LanguageModel& model, int64_t token, int64_t position, RotateBy rotate_by,
                          std::vector<nn::KVCache>& caches) {
    const nn::LMConfig& cfg = model.config();
    if (cfg.pos != nn::PosEncoding::Rope || cfg.window < 2 || !model.norm ||
        caches.size() != model.layers.size())
        throw std::invalid_argument("decode_rolling: needs a ModernLM with RoPE, a window W >= 2 and one cache per layer");
    ag::NoGradGuard no_grad;
    const int64_t d = cfg.d_model, dh = cfg.head_dim(), slots = cfg.window - 1;
    const std::vector<int64_t> angle_at{rotation_position(rotate_by, position, cfg.window)};
    const auto heads = [&](const ag::Tensor& x, int64_t H) { return x.reshape({1, 1, H, dh}); };

    ag::Tensor x = model.tok_emb->forward(ag::Tensor::from({1, 1}, {static_cast<double>(token)}));   // [1, 1, d]
    for (size_t l = 0; l < model.layers.size(); ++l) {
        const nn::Block& block = *model.layers[l];
        const nn::Attention& attn = *block.attn;
        nn::KVCache& cache = caches[l];
        if (cache.slots() == 0) {   // W-1 empty slots (position -1: never visible)
            cache.k = ag::Tensor::zeros({1, slots, cfg.n_kv_heads, dh});
            cache.v = ag::Tensor::zeros({1, slots, cfg.n_kv_heads, dh});
            cache.positions.assign(static_cast<size_t>(slots), -1);
        }
        // §4: q and k turned by angle_at θ_i; v never.
        const ag::Tensor h = block.attn_norm->forward(x);
        const ag::Tensor q = ag::rope(heads(attn.wq->forward(h), cfg.n_heads), angle_at, cfg.rope_base, cfg.rope_pairing);
        const ag::Tensor k = ag::rope(heads(attn.wk->forward(h), cfg.n_kv_heads), angle_at, cfg.rope_base, cfg.rope_pairing);
        const ag::Tensor v = heads(attn.wv->forward(h), cfg.n_kv_heads);

        // The new token sees the cached positions and itself, within the window.
        std::vector<int64_t> key_positions = cache.positions;
        key_positions.push_back(position);
        const ag::Tensor heads_out = ag::attention(q, ag::cat({cache.k, k}, 1), ag::cat({cache.v, v}, 1), {position},
                                                   key_positions, cfg.window);
        x = x + attn.wo->forward(heads_out.reshape({1, 1, d}));
        x = x + block.swiglu->forward(block.mlp_norm->forward(x));

        // Position p goes to slot p mod (W-1), over the oldest entry (a
        // slot is H·dh contiguous numbers of the [1, slots, H, dh] buffer).
        const int64_t slot = position % slots;
        std::copy_n(k.contiguous().data(), k.numel(), cache.k.data() + slot * k.numel());
        std::copy_n(v.contiguous().data(), v.numel(), cache.v.data() + slot * v.numel());
        cache.positions[static_cast<size_t>(slot)] = position;
    }
    return model.head->forward(model.norm->forward(x));
}

}  // namespace lessons::sliding_window
