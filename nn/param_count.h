#pragma once
// §7.1 the parameter-count formula: what a model of a given config has,
// without building it (Llama-3 8B's 8.03B included), split by where the
// parameters live.
#include "nn/config.h"

namespace nn {

struct ParamCount {
    int64_t embeddings = 0;  // token (+ learned position) embeddings
    int64_t attention = 0;   // q, k, v, output projections (+ biases)
    int64_t ffn = 0;         // feed-forward networks
    int64_t norms = 0;       // norm weights (+ biases)
    int64_t head = 0;        // output layer (untied, no bias)
    int64_t total() const { return embeddings + attention + ffn + norms + head; }
};

// Of any config, checked or not (LMConfig::validate calls it to refuse a
// model too big to build). Throws std::invalid_argument when n_heads < 1
// (head_dim divides by it) or when a part or the total does not fit in
// int64 (d_model 2^62), never wrapping around.
ParamCount count_parameters(const LMConfig& cfg);

// Llama-3 8B in the same terms (d=4096, 32 layers, 32/8 heads, FFN 14,336,
// V=128,256, untied, RoPE): 8.03B. It is counted (lesson 05), not built:
// validate() refuses it, 80 times LMConfig::kMaxParameters.
LMConfig llama3_8b();

}  // namespace nn
