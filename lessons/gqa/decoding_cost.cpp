#include "lessons/gqa/decoding_cost.h"

#include "nn/param_count.h"

namespace lessons::gqa {

DecodingCost decoding_cost(const nn::LMConfig& cfg, int64_t weight_bytes, const DecodingSetup& setup) {
    DecodingCost cost;
    // every layer keeps one key and one value vector per KV head and token
    cost.cache_bytes_per_token = cfg.n_layers * 2 * cfg.n_kv_heads * cfg.head_dim() * setup.bytes_per_value;
    cost.cache_bytes = cost.cache_bytes_per_token * setup.batch * setup.tokens;
    cost.weight_bytes = weight_bytes;
    // A decoding step does a few FLOPs per byte it reads: its time is the
    // time to stream every weight and the whole cache through the chip once.
    cost.bytes_per_step = weight_bytes + cost.cache_bytes;
    cost.step_seconds = static_cast<double>(cost.bytes_per_step) / setup.bandwidth;
    cost.fits = static_cast<double>(cost.bytes_per_step) <= setup.memory_bytes;
    return cost;
}

int64_t weight_bytes(const nn::LMConfig& cfg, const DecodingSetup& setup) {
    return nn::count_parameters(cfg).total() * setup.bytes_per_value;
}

}  // namespace lessons::gqa
