#pragma once
// §5.3 What the KV cache costs when a large model decodes: its size, and
// the time per decoding step of a memory-bound step, which reads every
// weight and the whole cache once from GPU memory.
#include <cstdint>

#include "nn/config.h"

namespace lessons::gqa {

// A batch being decoded on one GPU (the lecture's: Llama-3 8B in BF16,
// 32 sequences of 8192 tokens, an H100 with 80 GB at 3.35 TB/s).
struct DecodingSetup {
    int64_t batch = 32;
    int64_t tokens = 8192;        // per sequence, all in the cache
    int64_t bytes_per_value = 2;  // BF16 weights and cache
    double memory_bytes = 80e9;   // 80 GB
    double bandwidth = 3.35e12;   // bytes per second
};

struct DecodingCost {
    int64_t cache_bytes_per_token = 0;  // K and V of every layer: 2 · L · n_kv · head_dim · bytes
    int64_t cache_bytes = 0;            // × batch × tokens
    int64_t weight_bytes = 0;
    int64_t bytes_per_step = 0;  // weights + cache: what one step reads
    double step_seconds = 0;     // bytes_per_step / bandwidth
    bool fits = false;           // weights + cache <= memory
};

// The cost of decoding with model `cfg`'s cache (its n_layers, n_kv_heads,
// head_dim) and `weight_bytes` of weights.
DecodingCost decoding_cost(const nn::LMConfig& cfg, int64_t weight_bytes, const DecodingSetup& setup);

// Bytes of a model's weights at setup.bytes_per_value each, counted by
// nn::count_parameters.
int64_t weight_bytes(const nn::LMConfig& cfg, const DecodingSetup& setup);

}  // namespace lessons::gqa
