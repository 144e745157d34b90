#include "nn/param_count.h"

namespace nn {

ParamCount count_parameters(const LMConfig& c) {
    const int64_t d = c.d_model, L = c.n_layers, kv = c.n_kv_heads * c.head_dim();
    ParamCount n;
    n.embeddings = c.vocab * d + (c.pos == PosEncoding::Learned ? c.max_len * d : 0);
    n.head = d * c.vocab;
    if (c.model == ModelKind::Gpt) {
        n.attention = L * ((d * (d + 2 * kv) + d + 2 * kv) + (d * d + d));  // qkv and proj, with biases
        n.ffn = L * ((d * c.d_ff + c.d_ff) + (c.d_ff * d + d));             // fc and proj, with biases
        n.norms = (2 * L + 1) * 2 * d;                                      // ln1, ln2 per layer; ln_f
    } else {
        n.attention = L * (2 * d * d + 2 * d * kv);  // wq, wo: d×d; wk, wv: d×kv (§5: GQA shrinks these)
        n.ffn = L * 3 * d * c.d_ff;                  // w_gate, w_up, w_down
        n.norms = (2 * L + 1) * d;                   // attn_norm, mlp_norm per layer; norm
    }
    return n;
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
