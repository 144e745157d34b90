#include "nn/param_count.h"

#include <stdexcept>

#include <fmt/format.h>

namespace nn {

namespace {

// int64 arithmetic that throws instead of wrapping: the count decides
// whether a config read from a file may be built at all (LMConfig::validate),
// so it must be right for any numbers the file holds, d_model 2^62 included.
struct Checked {
    int64_t value;
    Checked(int64_t v) : value(v) {}  // implicit, so that 2 * d reads as the formula
};

[[noreturn]] void overflow() {
    throw std::invalid_argument("model config: the parameter count does not fit in 64 bits");
}

Checked operator*(Checked a, Checked b) {
    int64_t out;
    if (__builtin_mul_overflow(a.value, b.value, &out)) overflow();
    return out;
}

Checked operator+(Checked a, Checked b) {
    int64_t out;
    if (__builtin_add_overflow(a.value, b.value, &out)) overflow();
    return out;
}

}  // namespace

ParamCount count_parameters(const LMConfig& c) {
    if (c.n_heads < 1)
        throw std::invalid_argument(fmt::format("model config: n_heads {} must be at least 1", c.n_heads));
    const Checked d = c.d_model, L = c.n_layers, V = c.vocab, d_ff = c.d_ff, kv = Checked(c.n_kv_heads) * c.head_dim();
    const Checked embeddings = V * d + (c.pos == PosEncoding::Learned ? Checked(c.max_len) * d : 0), head = d * V;
    Checked attention = 0, ffn = 0, norms = 0;
    if (c.model == ModelKind::Gpt) {
        attention = L * ((d * (d + 2 * kv) + d + 2 * kv) + (d * d + d));  // qkv and proj, with biases
        ffn = L * ((d * d_ff + d_ff) + (d_ff * d + d));                   // fc and proj, with biases
        norms = (2 * L + 1) * 2 * d;                                      // ln1, ln2 per layer; ln_f
    } else {
        attention = L * (2 * d * d + 2 * d * kv);  // wq, wo: d×d; wk, wv: d×kv (§5: GQA shrinks these)
        ffn = L * 3 * d * d_ff;                    // w_gate, w_up, w_down
        norms = (2 * L + 1) * d;                   // attn_norm, mlp_norm per layer; norm
    }
    // ParamCount::total() adds the parts in plain int64: the sum must fit too.
    [[maybe_unused]] const Checked total = embeddings + attention + ffn + norms + head;
    return {embeddings.value, attention.value, ffn.value, norms.value, head.value};
}

LMConfig llama3_8b() {
    LMConfig c;
    c.vocab = 128256;
    c.max_len = 8192;
    c.d_model = 4096;
    c.n_layers = 32;
    c.n_heads = 32;
    c.n_kv_heads = 8;
    c.d_ff = 14336;
    c.rope_base = 500000.0;
    return c;
}

}  // namespace nn
