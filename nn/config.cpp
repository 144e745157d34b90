#include "nn/config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nn/json_strict.h"
#include "nn/param_count.h"

namespace nn {

LMConfig LMConfig::gpt() {
    LMConfig c;
    c.model = ModelKind::Gpt;
    c.n_kv_heads = c.n_heads;
    c.d_ff = 4 * c.d_model;
    c.pos = PosEncoding::Learned;
    return c;
}

LMConfig LMConfig::modern_lm() { return LMConfig{}; }

void LMConfig::validate() const {
    const auto bad = [](const std::string& what) { throw std::invalid_argument("model config: " + what); };
    const auto in_range = [&](const char* name, int64_t value, int64_t low, int64_t high, const char* note = "") {
        if (value < low || value > high)
            bad(fmt::format("{} {} is out of range ({} to {}{})", name, value, low, high, note));
    };
    in_range("vocab", vocab, 1, 1'000'000);
    in_range("max_len", max_len, 1, 1'000'000);
    in_range("d_model", d_model, 1, 65'536);
    in_range("n_layers", n_layers, 1, 1'024);
    in_range("n_heads", n_heads, 1, d_model);
    in_range("n_kv_heads", n_kv_heads, 1, n_heads);
    in_range("d_ff", d_ff, 1, 1'048'576);
    in_range("window", window, 0, 1'000'000, "; 0 = full attention");
    if (d_model % n_heads != 0) bad(fmt::format("d_model {} is not a multiple of n_heads {}", d_model, n_heads));
    if (n_heads % n_kv_heads != 0)
        bad(fmt::format("n_heads {} is not a multiple of n_kv_heads {} (§5: query heads come in groups)", n_heads,
                        n_kv_heads));
    if (pos == PosEncoding::Rope && head_dim() % 2 != 0)
        bad(fmt::format("RoPE rotates pairs: head_dim {} must be even", head_dim()));
    if (init != Init::PyTorch && init != Init::Gpt2)
        bad(fmt::format("init {} is neither pytorch nor gpt2", static_cast<int>(init)));
    if (!std::isfinite(rope_base) || rope_base <= 0)
        bad(fmt::format("rope_base {} must be a finite number > 0", rope_base));
    if (model == ModelKind::Gpt && (pos != PosEncoding::Learned || n_kv_heads != n_heads || window != 0))
        bad("gpt is lecture 2's model: learned positions, n_kv_heads = n_heads, no window");
    // Last: the count needs consistent sizes, and is computed, not built.
    const int64_t parameters = count_parameters(*this).total();
    if (parameters > kMaxParameters)
        bad(fmt::format("{} parameters is more than the limit of {} ({} MB of F64 weights)", parameters, kMaxParameters,
                        kMaxParameters * 8 / 1'000'000));
}

namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("model config: " + what); }

// Every field of LMConfig with its JSON name, in order: to_json and
// from_json both walk this one list. The structured binding names every
// data member, so a field added to LMConfig stops this compiling until it
// is listed here too.
template <class Config, class Visit>
void fields(Config& c, Visit&& visit) {
    auto& [model, vocab, max_len, d_model, n_layers, n_heads, n_kv_heads, d_ff, pos, rope_pairing, rope_base, window,
           init] = c;
    visit("model", model);
    visit("vocab", vocab);
    visit("max_len", max_len);
    visit("d_model", d_model);
    visit("n_layers", n_layers);
    visit("n_heads", n_heads);
    visit("n_kv_heads", n_kv_heads);
    visit("d_ff", d_ff);
    visit("pos", pos);
    visit("rope_pairing", rope_pairing);
    visit("rope_base", rope_base);
    visit("window", window);
    visit("init", init);
}

// The one key a config may lack: written only when not the default (config.h).
constexpr const char* kOptionalKey = "init";

struct Writer {
    Json& j;
    template <class T>
    void operator()(const char* key, const T& value) const {
        j[key] = value;
    }
    void operator()(const char* key, ModelKind m) const { j[key] = to_string(m); }
    void operator()(const char* key, PosEncoding p) const { j[key] = to_string(p); }
    void operator()(const char* key, ag::RopePairing p) const { j[key] = to_string(p); }
    void operator()(const char* key, Init i) const {
        if (i != Init::PyTorch) j[key] = to_string(i);
    }
};

// Each field from its JSON value, of exactly its type: a size that is not
// a whole number, or a string where a number belongs, is refused rather
// than converted.
void read(const Json& v, const char* key, std::string& out) {
    if (!v.is_string()) bad(fmt::format("'{}' is {}, not a string", key, v.dump()));
    out = v.get<std::string>();
}
void read(const Json& v, const char* key, int64_t& out) {
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}))
        bad(fmt::format("'{}' is {}, not a whole number", key, v.dump()));
    out = v.get<int64_t>();
}
void read(const Json& v, const char* key, double& out) {
    if (!v.is_number()) bad(fmt::format("'{}' is {}, not a number", key, v.dump()));
    out = v.get<double>();
}
void read(const Json& v, const char* key, ModelKind& out) {
    std::string s;
    read(v, key, s);
    out = model_kind_from_string(s);
}
void read(const Json& v, const char* key, PosEncoding& out) {
    std::string s;
    read(v, key, s);
    out = pos_encoding_from_string(s);
}
void read(const Json& v, const char* key, ag::RopePairing& out) {
    std::string s;
    read(v, key, s);
    out = rope_pairing_from_string(s);
}
void read(const Json& v, const char* key, Init& out) {
    std::string s;
    read(v, key, s);
    out = init_from_string(s);
}

}  // namespace

void to_json(nlohmann::ordered_json& j, const LMConfig& c) {
    j = Json::object();
    fields(c, Writer{j});
}

// Every key must be present (but `init`, absent when it is the default): a
// checkpoint's config that lacks one was written by something else, and
// guessing a default could rebuild the wrong model.
void from_json(const nlohmann::ordered_json& j, LMConfig& c) {
    if (!j.is_object()) bad(fmt::format("expected a JSON object, found {}", j.type_name()));
    LMConfig out;
    std::vector<std::string> known;
    fields(out, [&](const char* key, auto& field) {
        known.emplace_back(key);
        const auto it = j.find(key);
        if (it != j.end())
            read(*it, key, field);
        else if (std::string(key) != kOptionalKey)
            bad(fmt::format("missing key '{}'", key));
    });
    for (const auto& item : j.items())
        if (std::find(known.begin(), known.end(), item.key()) == known.end())
            bad(fmt::format("unexpected key '{}'", item.key()));
    out.validate();
    c = std::move(out);
}

std::string LMConfig::to_json() const { return Json(*this).dump(); }

LMConfig LMConfig::from_json(const std::string& text) {
    Json j;
    try {
        j = parse_strict_json(text);  // a repeated key too: which of its values was meant?
    } catch (const std::invalid_argument& e) {
        bad(fmt::format("not JSON ({})", e.what()));
    }
    return j.get<LMConfig>();
}

std::string to_string(ModelKind m) { return m == ModelKind::Gpt ? "gpt" : "modern_lm"; }

ModelKind model_kind_from_string(const std::string& s) {
    if (s == "gpt") return ModelKind::Gpt;
    if (s == "modern_lm") return ModelKind::ModernLM;
    throw std::invalid_argument(fmt::format("model '{}' is neither gpt nor modern_lm", s));
}

std::string to_string(PosEncoding p) {
    switch (p) {
        case PosEncoding::None:
            return "none";
        case PosEncoding::Learned:
            return "learned";
        case PosEncoding::Sinusoidal:
            return "sinusoidal";
        case PosEncoding::Rope:
            return "rope";
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

std::string to_string(Init i) { return i == Init::PyTorch ? "pytorch" : "gpt2"; }

Init init_from_string(const std::string& s) {
    if (s == "pytorch") return Init::PyTorch;
    if (s == "gpt2") return Init::Gpt2;
    throw std::invalid_argument(fmt::format("init '{}': expected pytorch or gpt2", s));
}

std::string describe(const LMConfig& c) {
    std::string positions = to_string(c.pos);
    if (c.pos == PosEncoding::Rope) positions += " " + to_string(c.rope_pairing);
    const std::string attention = c.window > 0 ? fmt::format("window {}", c.window) : "full attention";
    return fmt::format("d {}, {} layers, {} query / {} KV heads, {} positions, {}{}", c.d_model, c.n_layers, c.n_heads,
                       c.n_kv_heads, positions, attention, c.init == Init::PyTorch ? "" : ", gpt2 init");
}

}  // namespace nn
