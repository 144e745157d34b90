#include "nn/config.h"

#include <stdexcept>

#include <fmt/format.h>

#include "nn/json.h"

namespace nn {

LMConfig LMConfig::gpt() {
    LMConfig c;
    c.model = "gpt";
    c.n_kv_heads = c.n_heads;
    c.d_ff = 4 * c.d_model;
    c.pos = PosEncoding::Learned;
    return c;
}

LMConfig LMConfig::modern_lm() { return LMConfig{}; }

void LMConfig::validate() const {
    const auto bad = [](const std::string& what) { throw std::invalid_argument("model config: " + what); };
    if (model != "gpt" && model != "modern_lm") bad(fmt::format("model '{}' is neither gpt nor modern_lm", model));
    if (vocab < 1 || max_len < 1 || d_model < 1 || n_layers < 1 || n_heads < 1 || n_kv_heads < 1 || d_ff < 1)
        bad("every size must be at least 1");
    if (d_model % n_heads != 0) bad(fmt::format("d_model {} is not a multiple of n_heads {}", d_model, n_heads));
    if (n_heads % n_kv_heads != 0)
        bad(fmt::format("n_heads {} is not a multiple of n_kv_heads {} (§5: query heads come in groups)", n_heads,
                        n_kv_heads));
    if (pos == PosEncoding::Rope && head_dim() % 2 != 0)
        bad(fmt::format("RoPE rotates pairs: head_dim {} must be even", head_dim()));
    if (rope_base <= 0) bad(fmt::format("rope_base {} must be positive", rope_base));
    if (window < 0) bad(fmt::format("window {} must be >= 0 (0 = full attention)", window));
    if (model == "gpt" && (pos != PosEncoding::Learned || n_kv_heads != n_heads || window != 0))
        bad("gpt is lecture 2's model: learned positions, n_kv_heads = n_heads, no window");
}

std::string LMConfig::to_json() const {
    json::Object o = {{"model", model},
                      {"vocab", vocab},
                      {"max_len", max_len},
                      {"d_model", d_model},
                      {"n_layers", n_layers},
                      {"n_heads", n_heads},
                      {"n_kv_heads", n_kv_heads},
                      {"d_ff", d_ff},
                      {"pos", to_string(pos)},
                      {"rope_pairing", to_string(rope_pairing)},
                      {"rope_base", rope_base},
                      {"window", window}};
    return json::dump(json::Value(std::move(o)));
}

// Every key must be present: a checkpoint's config that lacks one was
// written by something else, and guessing a default could rebuild the
// wrong model.
LMConfig LMConfig::from_json(const std::string& text) {
    const json::Value v = json::parse(text);
    LMConfig c;
    c.model = v.at("model").as_string();
    c.vocab = v.at("vocab").as_int();
    c.max_len = v.at("max_len").as_int();
    c.d_model = v.at("d_model").as_int();
    c.n_layers = v.at("n_layers").as_int();
    c.n_heads = v.at("n_heads").as_int();
    c.n_kv_heads = v.at("n_kv_heads").as_int();
    c.d_ff = v.at("d_ff").as_int();
    c.pos = pos_encoding_from_string(v.at("pos").as_string());
    c.rope_pairing = rope_pairing_from_string(v.at("rope_pairing").as_string());
    c.rope_base = v.at("rope_base").as_number();
    c.window = v.at("window").as_int();
    if (v.size() != 12) throw std::invalid_argument("model config: unexpected keys in " + text);
    c.validate();
    return c;
}

std::string to_string(PosEncoding p) {
    switch (p) {
        case PosEncoding::None: return "none";
        case PosEncoding::Learned: return "learned";
        case PosEncoding::Sinusoidal: return "sinusoidal";
        case PosEncoding::Rope: return "rope";
    }
    return "?";
}

PosEncoding pos_encoding_from_string(const std::string& s) {
    for (PosEncoding p : {PosEncoding::None, PosEncoding::Learned, PosEncoding::Sinusoidal, PosEncoding::Rope})
        if (to_string(p) == s) return p;
    throw std::invalid_argument(fmt::format("position encoding '{}': expected none, learned, sinusoidal or rope", s));
}

std::string to_string(ag::RopePairing p) { return p == ag::RopePairing::Half ? "half" : "interleaved"; }

ag::RopePairing rope_pairing_from_string(const std::string& s) {
    if (s == "half") return ag::RopePairing::Half;
    if (s == "interleaved") return ag::RopePairing::Interleaved;
    throw std::invalid_argument(fmt::format("RoPE pairing '{}': expected half or interleaved", s));
}

}  // namespace nn
