#include "nn/attention.h"

#include <stdexcept>

#include <fmt/format.h>

namespace nn {

Attention::Attention(const LMConfig& cfg, ag::Generator& gen) : cfg_(cfg) {
    const int64_t d = cfg.d_model, kv = cfg.n_kv_heads * cfg.head_dim();
    if (cfg.model == "gpt") {
        qkv = register_module("qkv", std::make_shared<Linear>(d, d + 2 * kv, true, gen));
        proj = register_module("proj", std::make_shared<Linear>(d, d, true, gen));
    } else {
        wq = register_module("wq", std::make_shared<Linear>(d, d, false, gen));
        wk = register_module("wk", std::make_shared<Linear>(d, kv, false, gen));
        wv = register_module("wv", std::make_shared<Linear>(d, kv, false, gen));
        wo = register_module("wo", std::make_shared<Linear>(d, d, false, gen));
    }
}

Packing Packing::from_starts(std::vector<int64_t> starts) {
    if (starts.empty() || starts.front() != 0)
        throw std::invalid_argument("Packing: starts must begin at 0");
    Packing p;
    for (size_t b = 0; b + 1 < starts.size(); ++b) {
        if (starts[b + 1] < starts[b])
            throw std::invalid_argument(fmt::format("Packing: starts decrease at {} ({} > {})", b, starts[b], starts[b + 1]));
        for (int64_t i = starts[b]; i < starts[b + 1]; ++i) p.positions.push_back(i - starts[b]);
    }
    p.starts = std::move(starts);
    return p;
}

Packing Packing::uniform(int64_t B, int64_t T) {
    std::vector<int64_t> starts;
    for (int64_t b = 0; b <= B; ++b) starts.push_back(b * T);
    return from_starts(std::move(starts));
}

// q, k, v as [..., T, heads, dh] (heads are consecutive blocks of dh
// columns), q and k rotated by their positions when the model uses RoPE
// (§4: never v).
Attention::QKV Attention::project(const Tensor& x, const std::vector<int64_t>& positions) const {
    const int64_t dh = cfg_.head_dim(), d = cfg_.d_model, kv = cfg_.n_kv_heads * dh;
    Tensor q, k, v;
    if (qkv) {
        // qkv.weight holds the q, k, v blocks of rows in that order: three
        // products with row blocks of it (views, no copy) give three
        // contiguous outputs, which the attention kernel reads directly.
        const auto block = [&](int64_t start, int64_t rows) {
            return ag::linear(x, qkv->weight.narrow(0, start, rows), qkv->bias.narrow(0, start, rows));
        };
        q = block(0, d);
        k = block(d, kv);
        v = block(d + kv, kv);
    } else {
        q = wq->forward(x);
        k = wk->forward(x);
        v = wv->forward(x);
    }
    const auto heads = [dh](const Tensor& t, int64_t H) {
        Shape s = t.shape();
        s.back() = H;
        s.push_back(dh);
        return t.reshape(s);
    };
    q = heads(q, cfg_.n_heads);
    k = heads(k, cfg_.n_kv_heads);
    v = heads(v, cfg_.n_kv_heads);
    if (cfg_.pos == PosEncoding::Rope) {
        q = ag::rope(q, positions, cfg_.rope_base, cfg_.rope_pairing);
        k = ag::rope(k, positions, cfg_.rope_base, cfg_.rope_pairing);
    }
    return {q, k, v};
}

Tensor Attention::output(const Tensor& heads) const {
    Shape s(heads.shape().begin(), heads.shape().end() - 1);
    s.back() = cfg_.d_model;
    const Tensor y = heads.reshape(s);
    return proj ? proj->forward(y) : wo->forward(y);
}

Tensor Attention::forward(const Tensor& x, const Packing& packing, Tensor* weights) const {
    if (x.dim() != 2 || x.size(1) != cfg_.d_model || x.size(0) != packing.rows())
        throw std::invalid_argument(fmt::format("Attention: input {} is not [N, {}] with N = {} packed rows",
                                                ag::shape_str(x.shape()), cfg_.d_model, packing.rows()));
    const QKV p = project(x, packing.positions);
    return output(ag::attention_packed(p.q, p.k, p.v, packing.starts, cfg_.window, weights));
}

Tensor Attention::forward_cached(const Tensor& x, const std::vector<int64_t>& positions, KVCache& cache) const {
    if (x.dim() != 3 || x.size(2) != cfg_.d_model || static_cast<int64_t>(positions.size()) != x.size(1))
        throw std::invalid_argument(fmt::format("Attention: input {} with {} positions is not [B, T, {}]",
                                                ag::shape_str(x.shape()), positions.size(), cfg_.d_model));
    ag::NoGradGuard no_grad;  // decoding only: the cache is written in place
    const QKV p = project(x, positions);
    // The new tokens see the cached positions and each other.
    Tensor keys = p.k, values = p.v;
    std::vector<int64_t> key_positions = positions;
    if (cache.slots() > 0) {
        keys = ag::cat({cache.k, p.k}, 1);
        values = ag::cat({cache.v, p.v}, 1);
        key_positions.insert(key_positions.begin(), cache.positions.begin(), cache.positions.end());
    }
    const Tensor out = ag::attention(p.q, keys, values, positions, key_positions, cfg_.window);

    if (cache.capacity < 0) {  // plain cache: keep everything
        cache.k = keys.contiguous();
        cache.v = values.contiguous();
        cache.positions = key_positions;
    } else if (cache.capacity > 0) {  // rolling buffer: position p goes to slot p mod capacity
        const int64_t B = x.size(0), H = cfg_.n_kv_heads, dh = cfg_.head_dim(), C = cache.capacity;
        if (cache.slots() == 0) {
            cache.k = Tensor::zeros({B, C, H, dh});
            cache.v = Tensor::zeros({B, C, H, dh});
            cache.positions.assign(static_cast<size_t>(C), -1);
        }
        const Tensor k_new = p.k.contiguous(), v_new = p.v.contiguous();
        const int64_t T = x.size(1), row = H * dh;
        for (int64_t t = 0; t < T; ++t) {
            const int64_t slot = positions[static_cast<size_t>(t)] % C;
            cache.positions[static_cast<size_t>(slot)] = positions[static_cast<size_t>(t)];
            for (int64_t b = 0; b < B; ++b) {
                std::copy_n(k_new.data() + (b * T + t) * row, row, cache.k.data() + (b * C + slot) * row);
                std::copy_n(v_new.data() + (b * T + t) * row, row, cache.v.data() + (b * C + slot) * row);
            }
        }
    }
    return output(out);
}

}  // namespace nn
