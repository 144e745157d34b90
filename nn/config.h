#pragma once
// Every option of the lecture's language models (docs/models.md). The config is
// stored in each checkpoint's metadata as JSON, so a loader can rebuild the
// model it belongs to.
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "autograd/ops.h"

namespace nn {

// The two recipes (§7.1): lecture 2's GPT and the modern one (§3-§6).
enum class ModelKind { Gpt, ModernLM };

enum class PosEncoding { None, Learned, Sinusoidal, Rope };

// How a model's weights are drawn (docs/models.md, "Initialisation"):
//   PyTorch  each layer's PyTorch default: Linear U(±1/√in), Embedding N(0, 1)
//   Gpt2     GPT-2's: every weight matrix and embedding N(0, 0.02), biases 0
// Norms start at weight 1 (LayerNorm bias 0) in both.
enum class Init { PyTorch, Gpt2 };

struct LMConfig {
    ModelKind model = ModelKind::ModernLM;
    int64_t vocab = 68;
    int64_t max_len = 40;  // context T_max (learned position rows)
    int64_t d_model = 64;
    int64_t n_layers = 2;
    int64_t n_heads = 4;     // query heads
    int64_t n_kv_heads = 2;  // §5: 4 = MHA, 2 = GQA, 1 = MQA (GPT: = n_heads)
    int64_t d_ff = 172;      // SwiGLU hidden (GPT: 256, GELU)
    PosEncoding pos = PosEncoding::Rope;
    ag::RopePairing rope_pairing = ag::RopePairing::Half;
    double rope_base = 10000.0;
    int64_t window = 0;  // §6: visible tokens W (0 = full causal attention)
    Init init = Init::PyTorch;

    static LMConfig gpt();        // d=64, 2 layers, 4 heads, learned positions: 111,360 parameters
    static LMConfig modern_lm();  // d=64, 2 layers, 4/2 heads, RoPE, SwiGLU 172: 99,648 parameters

    int64_t head_dim() const { return d_model / n_heads; }
    // What the constructor of nn::LanguageModel and from_json check before
    // anything is allocated: a config that passes can be built. Throws
    // std::invalid_argument naming the first option out of its range or
    // inconsistent with another (docs/models.md). The ranges hold
    // Llama-3 8B's sizes with room to spare; what keeps a model buildable is
    // the limit on its parameter count, below.
    //   vocab      1 … 1,000,000      (Llama-3: 128,256)
    //   max_len    1 … 1,000,000      (learned positions: max_len × d_model parameters)
    //   d_model    1 … 65,536
    //   n_layers   1 … 1,024
    //   n_heads    a divisor of d_model; n_kv_heads a divisor of n_heads
    //   d_ff       1 … 1,048,576
    //   rope_base  a finite number > 0
    //   window     0 … 1,000,000      (0 = full attention)
    //   init       PyTorch or Gpt2
    //   nn::count_parameters(*this).total() at most kMaxParameters
    void validate() const;

    // 100 million: 800 MB of F64 weights, 3.2 GB while training (weights,
    // gradients and AdamW's two moments); the lecture's models have about
    // 100,000. A config from a file can ask for any size (n_layers
    // 1,000,000 grew to 12 GB before anything stopped it, issue 13).
    static constexpr int64_t kMaxParameters = 100'000'000;

    // The config as one line of JSON text (what a checkpoint's metadata
    // stores), and back; from_json throws std::invalid_argument.
    std::string to_json() const;
    static LMConfig from_json(const std::string& text);  // validates
};

// The same as a JSON object (nlohmann), for documents that embed the config:
// every field above under its own name, in this order; the enums as the
// strings of to_string below. `init` is written only when it is not the
// default ("gpt2"), so a default config reads as it did before the field
// existed (and so does every checkpoint and cache key that records one).
// from_json requires exactly these keys, `init` optional, each of the right
// type (whole numbers for the sizes), then validates; it throws
// std::invalid_argument naming the key.
void to_json(nlohmann::ordered_json& j, const LMConfig& c);
void from_json(const nlohmann::ordered_json& j, LMConfig& c);

std::string to_string(ModelKind m);
ModelKind model_kind_from_string(const std::string& s);  // "gpt" | "modern_lm"
std::string to_string(PosEncoding p);
PosEncoding pos_encoding_from_string(const std::string& s);  // "none" | "learned" | "sinusoidal" | "rope"
std::string to_string(ag::RopePairing p);
ag::RopePairing rope_pairing_from_string(const std::string& s);  // "half" | "interleaved"
std::string to_string(Init i);
Init init_from_string(const std::string& s);  // "pytorch" | "gpt2"

// The shape and attention of a config in words, as farm_lm and the lessons'
// progress print it: "d 64, 2 layers, 4 query / 2 KV heads, rope half
// positions, full attention" (or "window 4"), then ", gpt2 init" when the
// weights are not drawn as PyTorch draws them.
std::string describe(const LMConfig& c);

}  // namespace nn
