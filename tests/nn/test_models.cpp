// The lecture's models: parameter names and counts (module and formula),
// GQA as MHA with copied K/V heads, and cached decoding equal to the full
// forward pass for every position encoding, with and without windows.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "catch.h"

#include "nn/autoencoder.h"
#include "nn/language_model.h"
#include "nn/param_count.h"

using ag::Tensor;
using nn::LMConfig;
using nn::ModelKind;
using nn::PosEncoding;

namespace {

// [B, T] random token ids, seeded.
Tensor random_ids(int64_t B, int64_t T, int64_t vocab, uint64_t seed) {
    ag::Generator gen(seed);
    std::vector<double> ids;
    for (int64_t i = 0; i < B * T; ++i) ids.push_back(static_cast<double>(gen.randint(vocab)));
    return Tensor::from({B, T}, ids);
}

std::vector<std::string> names(const nn::Module& m) {
    std::vector<std::string> out;
    for (const auto& [name, _] : m.named_parameters()) out.push_back(name);
    return out;
}

}  // namespace

TEST_CASE("GPT has lecture 2's 111,360 parameters with docs/models.md's names", "[nn][models]") {
    const nn::LanguageModel gpt(LMConfig::gpt(), 0);
    CHECK(gpt.num_parameters() == 111360);
    CHECK(nn::count_parameters(LMConfig::gpt()).total() == 111360);
    const std::vector<std::string> expected_first = {
        "tok_emb.weight",           "pos_emb.weight",         "layers.0.ln1.weight",       "layers.0.ln1.bias",
        "layers.0.attn.qkv.weight", "layers.0.attn.qkv.bias", "layers.0.attn.proj.weight", "layers.0.attn.proj.bias",
        "layers.0.ln2.weight",      "layers.0.ln2.bias",      "layers.0.mlp.fc.weight",    "layers.0.mlp.fc.bias",
        "layers.0.mlp.proj.weight", "layers.0.mlp.proj.bias"};
    const auto got = names(gpt);
    REQUIRE(got.size() == 2 + 2 * 12 + 3);
    CHECK(std::vector<std::string>(got.begin(), got.begin() + 14) == expected_first);
    CHECK(got[got.size() - 3] == "ln_f.weight");
    CHECK(got.back() == "head.weight");
    // Layer 1's names too (the list above is layer 0's), each found and of its shape.
    const std::map<std::string, ag::Shape> shapes = {
        {"layers.1.attn.qkv.weight", {192, 64}}, {"layers.1.mlp.fc.weight", {256, 64}}, {"pos_emb.weight", {40, 64}}};
    const auto params = gpt.named_parameters();
    for (const auto& want : shapes) {
        INFO(want.first);
        const auto found =
            std::find_if(params.begin(), params.end(), [&](const auto& p) { return p.first == want.first; });
        REQUIRE(found != params.end());
        CHECK(found->second.shape() == want.second);
    }
}

TEST_CASE("ModernLM has 99,648 parameters with docs/models.md's names", "[nn][models]") {
    const nn::LanguageModel lm(LMConfig::modern_lm(), 0);
    CHECK(lm.num_parameters() == 99648);
    CHECK(nn::count_parameters(LMConfig::modern_lm()).total() == 99648);
    const std::vector<std::string> expected = {"tok_emb.weight",           "layers.0.attn_norm.weight",
                                               "layers.0.attn.wq.weight",  "layers.0.attn.wk.weight",
                                               "layers.0.attn.wv.weight",  "layers.0.attn.wo.weight",
                                               "layers.0.mlp_norm.weight", "layers.0.mlp.w_gate.weight",
                                               "layers.0.mlp.w_up.weight", "layers.0.mlp.w_down.weight"};
    const auto got = names(lm);
    CHECK(std::vector<std::string>(got.begin(), got.begin() + 10) == expected);
    CHECK(got[got.size() - 2] == "norm.weight");
    CHECK(got.back() == "head.weight");
    for (const auto& [name, t] : lm.named_parameters()) {
        INFO(name);
        if (name == "layers.0.attn.wk.weight") CHECK(t.shape() == ag::Shape{32, 64});
        if (name == "layers.0.mlp.w_down.weight") CHECK(t.shape() == ag::Shape{64, 172});
    }
}

namespace {
// A tree with parameters at every level, before and after a child.
struct Leaf : nn::Module {
    Leaf() { register_parameter("w", ag::Tensor::zeros({1})); }
};
struct Branch : nn::Module {
    Branch() {
        register_parameter("a", ag::Tensor::zeros({1}));
        register_module("left", std::make_shared<Leaf>());
        register_module("right", std::make_shared<Leaf>());
        register_parameter("z", ag::Tensor::zeros({1}));
    }
};
}  // namespace

TEST_CASE("parameters() lists named_parameters()' tensors in the same order", "[nn][models]") {
    Branch tree;
    const nn::LanguageModel gpt(nn::LMConfig::gpt(), 0), modern(nn::LMConfig::modern_lm(), 0);
    for (const nn::Module* m : {static_cast<const nn::Module*>(&tree), static_cast<const nn::Module*>(&gpt),
                                static_cast<const nn::Module*>(&modern)}) {
        const auto named = m->named_parameters();
        const auto plain = m->parameters();
        REQUIRE(plain.size() == named.size());
        for (size_t i = 0; i < named.size(); ++i) {
            INFO(named[i].first);
            CHECK(plain[i].impl() == named[i].second.impl());  // the same tensor, not a copy
        }
        ag::Tensor frozen = named[1].second;
        frozen.requires_grad_(false);
        const auto trainable = m->trainable_parameters();
        REQUIRE(trainable.size() == named.size() - 1);
        CHECK(trainable[0].impl() == named[0].second.impl());
        CHECK(trainable[1].impl() == named[2].second.impl());
    }
}

TEST_CASE("the parameter formula matches the module for every option", "[nn][models]") {
    for (const char* model : {"gpt", "modern_lm"})
        for (int64_t kv : {1, 2, 4})
            for (PosEncoding pos :
                 {PosEncoding::None, PosEncoding::Learned, PosEncoding::Sinusoidal, PosEncoding::Rope}) {
                LMConfig c = std::string(model) == "gpt" ? LMConfig::gpt() : LMConfig::modern_lm();
                if (c.model == ModelKind::Gpt && (kv != 4 || pos != PosEncoding::Learned)) continue;
                c.n_kv_heads = kv;
                c.pos = pos;
                c.n_layers = 3;
                const nn::LanguageModel m(c, 1);
                INFO(model << " kv=" << kv << " pos=" << nn::to_string(pos));
                CHECK(m.num_parameters() == nn::count_parameters(c).total());
            }
}

TEST_CASE("Llama-3 8B: 8.03B parameters, FFN 70.2%, attention 16.7%, embeddings and head 13.1%", "[nn][models]") {
    const nn::ParamCount n = nn::count_parameters(nn::llama3_8b());
    const double total = static_cast<double>(n.total());
    CHECK(n.total() == 8030261248);
    CHECK(static_cast<double>(n.ffn) / total == Approx(0.702).margin(0.0005));
    CHECK(static_cast<double>(n.attention) / total == Approx(0.167).margin(0.0005));
    CHECK(static_cast<double>(n.embeddings + n.head) / total == Approx(0.131).margin(0.0005));
}

TEST_CASE("the same seed builds the same model and another seed a different one", "[nn][models]") {
    const nn::LanguageModel a(LMConfig::modern_lm(), 7), b(LMConfig::modern_lm(), 7), c(LMConfig::modern_lm(), 8);
    const Tensor ids = random_ids(2, 9, 68, 3);
    CHECK(ag::max_abs_diff(a.forward(ids), b.forward(ids)) == 0.0);
    CHECK(ag::max_abs_diff(a.forward(ids), c.forward(ids)) > 1e-3);
}

TEST_CASE("GQA equals MHA with each K/V head copied g times, exactly", "[nn][models][gqa]") {
    LMConfig gqa_cfg = LMConfig::modern_lm();  // 4 query heads, 2 KV heads: g = 2
    LMConfig mha_cfg = gqa_cfg;
    mha_cfg.n_kv_heads = 4;
    const nn::LanguageModel gqa(gqa_cfg, 11);
    nn::LanguageModel mha(mha_cfg, 12);
    // Copy every parameter; K/V head j of the MHA model is KV head j / g.
    const int64_t dh = gqa_cfg.head_dim(), g = gqa_cfg.n_heads / gqa_cfg.n_kv_heads;
    const auto src = gqa.named_parameters();
    auto dst = mha.named_parameters();
    for (size_t i = 0; i < src.size(); ++i) {
        Tensor to = dst[i].second;
        const Tensor& from = src[i].second;
        if (from.shape() == to.shape()) {
            std::copy_n(from.data(), from.numel(), to.data());
            continue;
        }
        const int64_t d = from.size(1);  // wk / wv: rows are heads' blocks of dh
        for (int64_t head = 0; head < mha_cfg.n_kv_heads; ++head)
            std::copy_n(from.data() + (head / g) * dh * d, dh * d, to.data() + head * dh * d);
    }
    const Tensor ids = random_ids(3, 12, 68, 5);
    CHECK(ag::max_abs_diff(gqa.forward(ids), mha.forward(ids)) == 0.0);
}

// Cached decoding, one token at a time, must give the logits of the full
// forward pass at every position.
static double decode_error(const LMConfig& cfg, nn::CacheKind kind, int64_t T) {
    const nn::LanguageModel m(cfg, 21);
    const Tensor ids = random_ids(2, T, cfg.vocab, 9);
    const Tensor full = m.forward(ids);
    auto caches = m.new_caches(kind);
    double worst = 0.0;
    for (int64_t t = 0; t < T; ++t) {
        const Tensor step = m.forward_cached(ids.narrow(1, t, 1).contiguous(), {t}, caches);
        worst = std::max(worst, ag::max_abs_diff(step, full.narrow(1, t, 1)));
    }
    return worst;
}

TEST_CASE("cached decoding equals the full forward pass", "[nn][models][cache]") {
    for (PosEncoding pos : {PosEncoding::Rope, PosEncoding::Learned, PosEncoding::None, PosEncoding::Sinusoidal})
        for (int64_t window : {0, 1, 3, 6}) {
            LMConfig c = LMConfig::modern_lm();
            c.pos = pos;
            c.window = window;
            const int64_t T = pos == PosEncoding::Learned ? c.max_len : 60;  // well past W
            INFO("pos=" << nn::to_string(pos) << " window=" << window << " T=" << T);
            CHECK(decode_error(c, nn::CacheKind::Plain, T) < 1e-12);
            if (window > 0) CHECK(decode_error(c, nn::CacheKind::Rolling, T) < 1e-12);
        }
    CHECK(decode_error(LMConfig::gpt(), nn::CacheKind::Plain, 40) < 1e-12);
}

TEST_CASE("a rolling buffer keeps W-1 slots, position p in slot p mod (W-1)", "[nn][models][cache]") {
    LMConfig c = LMConfig::modern_lm();
    c.window = 6;
    const nn::LanguageModel m(c, 4);
    auto caches = m.new_caches(nn::CacheKind::Rolling);
    const Tensor ids = random_ids(1, 13, c.vocab, 2);
    for (int64_t t = 0; t < 13; ++t) m.forward_cached(ids.narrow(1, t, 1).contiguous(), {t}, caches);
    REQUIRE(caches[0].slots() == 5);
    for (int64_t s = 0; s < 5; ++s) {
        const int64_t p = caches[0].positions[static_cast<size_t>(s)];
        INFO("slot " << s << " holds position " << p);
        CHECK(p % 5 == s);
        CHECK(p >= 13 - 5);
    }
    CHECK(caches[0].k.shape() == ag::Shape{1, 5, 2, 16});
    CHECK_THROWS_WITH(nn::LanguageModel(LMConfig::modern_lm(), 0).new_caches(nn::CacheKind::Rolling),
                      Catch::Contains("window"));
}

// Issue 13 (bounded work): the plain cache grew by concatenation, a new
// buffer and a copy of every stored key and value at each step (T²/2 rows
// for T tokens). It is written in place and its room doubles when full: over
// 40 steps its buffer is replaced 7 times (room 1, 2, 4, ..., 64), each time
// at the step that finds it full.
TEST_CASE("the plain KV cache is written in place, not regrown at every step", "[nn][models][cache]") {
    const nn::LanguageModel m(LMConfig::modern_lm(), 5);
    auto caches = m.new_caches();
    const Tensor ids = random_ids(1, 40, 68, 6);
    int replaced = 0;
    const ag::Storage* storage = nullptr;
    for (int64_t t = 0; t < 40; ++t) {
        const int64_t room = caches[0].k.defined() ? caches[0].k.size(1) : 0;
        m.forward_cached(ids.narrow(1, t, 1), {t}, caches);
        REQUIRE(caches[0].slots() == t + 1);
        if (caches[0].k.impl()->storage.get() == storage) continue;
        INFO("step " << t << ": a new buffer, with room for " << room << " before");
        CHECK(t == room);
        storage = caches[0].k.impl()->storage.get();
        ++replaced;
    }
    CHECK(replaced == 7);
    CHECK(caches[0].k.shape() == ag::Shape{1, 64, 2, 16});
}

// Both caches are written in place, at slots computed from the positions.
TEST_CASE("cached decoding refuses a negative position and a batch of another size", "[nn][models][cache]") {
    LMConfig c = LMConfig::modern_lm();
    c.window = 6;
    const nn::LanguageModel m(c, 4);
    for (nn::CacheKind kind : {nn::CacheKind::Plain, nn::CacheKind::Rolling}) {
        auto caches = m.new_caches(kind);
        CHECK_THROWS_WITH(m.forward_cached(random_ids(1, 1, c.vocab, 1), {-1}, caches),
                          Catch::Contains("position -1 is negative"));
        m.forward_cached(random_ids(1, 1, c.vocab, 1), {0}, caches);
        CHECK_THROWS_WITH(m.forward_cached(random_ids(2, 1, c.vocab, 1), {1}, caches),
                          Catch::Contains("[2,1,") && Catch::Contains("KV cache of batch size 1"));
    }
}

TEST_CASE("bad configs and inputs are refused with clear messages", "[nn][models]") {
    LMConfig c = LMConfig::modern_lm();
    c.n_kv_heads = 3;
    CHECK_THROWS_WITH(nn::LanguageModel(c, 0), Catch::Contains("n_kv_heads 3"));
    const nn::LanguageModel gpt(LMConfig::gpt(), 0);
    CHECK_THROWS_WITH(gpt.forward(random_ids(1, 41, 68, 0)), Catch::Contains("position 40"));
    CHECK_THROWS_WITH(gpt.forward(Tensor::from({3}, {1, 2, 3})), Catch::Contains("[B, T]"));
}

TEST_CASE("autoencoder: shapes, loss, a stack of encoders", "[nn][autoencoder]") {
    ag::Generator gen(3);
    auto a1 = std::make_shared<nn::Autoencoder>(64, 32, gen);
    auto a2 = std::make_shared<nn::Autoencoder>(32, 16, gen);
    const Tensor x = Tensor::uniform({10, 64}, gen, 0, 1);
    CHECK(a1->reconstruct(x).shape() == x.shape());
    CHECK(nn::encode_stack({a1, a2}, x).shape() == ag::Shape{10, 16});
    const Tensor loss = a1->loss(x);
    const Tensor r = a1->reconstruct(x);
    CHECK(loss.item() == Approx(ag::mean((r - x) * (r - x)).item()).epsilon(1e-14));
    std::vector<std::string> expected = {"enc.weight", "enc.bias", "dec.weight", "dec.bias"};
    CHECK(names(*a1) == expected);
}

TEST_CASE("autoencoder options: tanh units, a pixel decoder with cross-entropy", "[nn][autoencoder]") {
    ag::Generator gen(4), same(4);
    const nn::Autoencoder sigmoid_ae(12, 5, gen);
    const nn::Autoencoder tanh_ae(nn::AutoencoderOptions(12, 5).unit(nn::Unit::Tanh), same);
    // the same draws, only h differs
    CHECK(ag::max_abs_diff(sigmoid_ae.enc->weight, tanh_ae.enc->weight) == 0.0);
    ag::Generator data(5);
    const Tensor x = Tensor::uniform({7, 12}, data, 0, 1);
    const Tensor a = tanh_ae.enc->forward(x);
    CHECK(ag::max_abs_diff(tanh_ae.encode(x), ag::tanh(a)) == 0.0);
    CHECK(ag::max_abs_diff(sigmoid_ae.encode(x), ag::sigmoid(a)) == 0.0);
    const Tensor z = tanh_ae.encode(x);
    CHECK(ag::max_abs_diff(tanh_ae.decode(z), ag::tanh(tanh_ae.dec->forward(z))) == 0.0);
    CHECK(tanh_ae.loss(x).item() == Approx(ag::mse_loss(tanh_ae.reconstruct(x), x).item()).epsilon(1e-14));

    ag::Generator g2(4);
    const nn::Autoencoder pixels(
        nn::AutoencoderOptions(12, 5).unit(nn::Unit::Tanh).reconstruction(nn::Reconstruction::PixelCrossEntropy), g2);
    const Tensor r = pixels.reconstruct(x);  // σ of the decoder, whatever h is
    CHECK(ag::max_abs_diff(r, ag::sigmoid(pixels.dec->forward(pixels.encode(x)))) == 0.0);
    // the loss is -[x log x' + (1-x) log(1-x')] averaged, from the logits
    const Tensor by_hand = ag::mean(-(x * ag::log(r) + (1.0 - x) * ag::log(1.0 - r)));
    CHECK(pixels.loss(x).item() == Approx(by_hand.item()).epsilon(1e-12));
    pixels.loss(x).backward();
    CHECK(pixels.enc->weight.grad().defined());
    CHECK(pixels.dec->weight.grad().defined());
}

TEST_CASE("a frozen body trains only the head (linear probe)", "[nn][models]") {
    nn::LanguageModel lm(LMConfig::gpt(), 0);
    ag::Generator gen(1);
    nn::ClassifierHead head(64, 2, gen);
    lm.requires_grad_(false);
    CHECK(lm.num_trainable_parameters() == 0);
    CHECK(head.num_trainable_parameters() == 130);  // exercise 10: 64·2 + 2
    const Tensor ids = random_ids(4, 7, 68, 1);
    const Tensor logits = head.forward(lm.hidden(ids), {6, 3, 0, 5});
    ag::cross_entropy(logits, Tensor::from({4}, {0, 1, 1, 0})).backward();
    CHECK(head.weight.grad().defined());
    for (const Tensor& p : lm.parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("a config in words names its shape, positions and attention", "[nn][models]") {
    CHECK(nn::describe(nn::LMConfig::gpt()) ==
          "d 64, 2 layers, 4 query / 4 KV heads, learned positions, full attention");
    nn::LMConfig c = nn::LMConfig::modern_lm();
    c.window = 4;
    c.rope_pairing = ag::RopePairing::Interleaved;
    CHECK(nn::describe(c) == "d 64, 2 layers, 4 query / 2 KV heads, rope interleaved positions, window 4");
}

TEST_CASE("a model config round-trips through JSON and bad configs are refused", "[nn][models]") {
    LMConfig c = LMConfig::modern_lm();
    c.n_kv_heads = 1;
    c.pos = PosEncoding::Sinusoidal;
    c.rope_pairing = ag::RopePairing::Interleaved;
    c.window = 4;
    const LMConfig back = LMConfig::from_json(c.to_json());
    CHECK(back.to_json() == c.to_json());
    CHECK(back.n_kv_heads == 1);
    CHECK(back.pos == PosEncoding::Sinusoidal);
    CHECK(back.rope_pairing == ag::RopePairing::Interleaved);
    CHECK(back.window == 4);
    CHECK_THROWS_WITH(LMConfig::from_json("{\"model\": \"gpt\"}"), Catch::Contains("missing key 'vocab'"));
    std::string bad = c.to_json();
    bad.replace(bad.find("\"sinusoidal\""), 12, "\"absolute\"");
    CHECK_THROWS_WITH(LMConfig::from_json(bad), Catch::Contains("absolute"));

    // The text older checkpoints hold (numbers written without ".0") still reads.
    const std::string old =
        R"({"model":"modern_lm","vocab":68,"max_len":40,"d_model":64,"n_layers":2,"n_heads":4,)"
        R"("n_kv_heads":2,"d_ff":172,"pos":"rope","rope_pairing":"half","rope_base":10000,"window":0})";
    CHECK(LMConfig::from_json(old).to_json() == LMConfig::modern_lm().to_json());
    // Every key in the order of the struct, each of its own type.
    CHECK(LMConfig::modern_lm().to_json().rfind(R"({"model":"modern_lm","vocab":68,"max_len":40,)", 0) == 0);
    const auto with = [&](const std::string& from, const std::string& to) {
        std::string text = old;
        text.replace(text.find(from), from.size(), to);
        return text;
    };
    CHECK_THROWS_WITH(LMConfig::from_json(with("\"vocab\":68", "\"vocab\":68.5")),
                      Catch::Contains("'vocab' is 68.5, not a whole number"));
    CHECK_THROWS_WITH(LMConfig::from_json(with("\"vocab\":68", "\"vocab\":\"68\"")),
                      Catch::Contains("'vocab' is \"68\", not a whole number"));
    CHECK_THROWS_WITH(LMConfig::from_json(with("\"window\":0", "\"window\":0,\"extra\":1")),
                      Catch::Contains("unexpected key 'extra'"));
    CHECK_THROWS_WITH(LMConfig::from_json(with("\"rope_base\":10000", "\"rope_base\":null")),
                      Catch::Contains("'rope_base' is null, not a number"));
    CHECK_THROWS_WITH(LMConfig::from_json("{\"model\": "), Catch::Contains("model config: not JSON (parse error"));
    CHECK_THROWS_WITH(LMConfig::from_json("[1]"), Catch::Contains("expected a JSON object, found array"));
    CHECK_THROWS_AS(LMConfig::from_json(with("\"n_heads\":4", "\"n_heads\":3")), std::invalid_argument);
}

TEST_CASE("packed sequences give the padded batch's logits on the real rows", "[nn][models][packed]") {
    for (const LMConfig& c : {LMConfig::gpt(), LMConfig::modern_lm()}) {
        const nn::LanguageModel m(c, 5);
        const std::vector<int64_t> lengths = {7, 3, 5};
        const Tensor padded_ids = random_ids(3, 7, 68, 8);
        const Tensor padded = m.forward(padded_ids);  // [3, 7, V]
        std::vector<double> rows;
        std::vector<int64_t> starts = {0};
        for (size_t b = 0; b < lengths.size(); ++b) {
            for (int64_t t = 0; t < lengths[b]; ++t) rows.push_back(padded_ids.at({static_cast<int64_t>(b), t}));
            starts.push_back(starts.back() + lengths[b]);
        }
        const Tensor packed = m.forward(Tensor::from({starts.back()}, rows), nn::Packing::from_starts(starts));
        for (size_t b = 0; b < lengths.size(); ++b) {
            INFO(nn::to_string(c.model) << " sequence " << b);
            const Tensor real =
                padded.narrow(0, static_cast<int64_t>(b), 1).narrow(1, 0, lengths[b]).reshape({lengths[b], 68});
            CHECK(ag::max_abs_diff(real, packed.narrow(0, starts[b], lengths[b])) < 1e-12);
        }
    }
}

TEST_CASE("hidden_at gives the chosen rows of the full forward, values and gradients", "[nn][models][packed]") {
    LMConfig windowed = LMConfig::modern_lm();
    windowed.window = 3;
    LMConfig one_layer = LMConfig::gpt();
    one_layer.n_layers = 1;
    for (const LMConfig& c : {LMConfig::gpt(), LMConfig::modern_lm(), windowed, one_layer}) {
        INFO(nn::to_string(c.model) << ", " << c.n_layers << " layers, window " << c.window);
        nn::LanguageModel m(c, 11);
        const nn::Packing packing = nn::Packing::from_starts({0, 7, 7, 10, 15});  // an empty sequence too
        const Tensor ids = random_ids(1, 15, 68, 12).reshape({15});
        const nn::RowSelection rows = nn::RowSelection::of(packing, {6, 0, 9, 14, 3, 9});  // any order, repeats
        const Tensor index = Tensor::from({6}, {6, 0, 9, 14, 3, 9});
        ag::Generator gen(13);
        const Tensor weights = Tensor::randn({6, c.d_model}, gen);

        const auto gradients = [&](const Tensor& hidden) {
            m.zero_grad();
            (hidden * weights).sum().backward();
            std::vector<Tensor> grads;
            for (const Tensor& p : m.parameters()) grads.push_back(p.grad().defined() ? p.grad().clone() : Tensor());
            return grads;
        };
        const Tensor full = ag::index_select(m.hidden(ids, packing), 0, index);
        const std::vector<Tensor> full_grads = gradients(full);
        const Tensor chosen = m.hidden_at(ids, packing, rows);
        REQUIRE(chosen.shape() == ag::Shape{6, c.d_model});
        CHECK(ag::max_abs_diff(chosen, full) < 1e-12);
        const std::vector<Tensor> chosen_grads = gradients(chosen);
        const auto params = m.named_parameters();
        for (size_t i = 0; i < params.size(); ++i) {
            INFO(params[i].first);
            REQUIRE(chosen_grads[i].defined() == full_grads[i].defined());
            if (full_grads[i].defined()) CHECK(ag::max_abs_diff(chosen_grads[i], full_grads[i]) < 1e-12);
        }
    }
    const nn::LanguageModel m(LMConfig::modern_lm(), 0);
    CHECK_THROWS_WITH(nn::RowSelection::of(nn::Packing::uniform(1, 4), {4}),
                      Catch::Contains("row 4 is outside the 4 packed rows"));
    CHECK_THROWS_WITH(m.hidden_at(Tensor::zeros({4}), nn::Packing::uniform(1, 4),
                                  nn::RowSelection::of(nn::Packing::uniform(1, 5), {4})),
                      Catch::Contains("rows chosen among 5 packed rows, for a packing of 4"));
}

TEST_CASE("cached decoding turns q and k by rope_positions when given", "[nn][models][cache]") {
    // RoPE scores depend only on position differences (§4.5): turning every
    // token by p + 5 instead of p changes no logit; turning only the last
    // one does.
    const nn::LanguageModel m(LMConfig::modern_lm(), 2);
    const Tensor ids = random_ids(1, 6, 68, 3);
    const auto decode = [&](const std::function<int64_t(int64_t)>& turn) {
        std::vector<nn::KVCache> caches = m.new_caches();
        std::vector<Tensor> logits;
        for (int64_t p = 0; p < 6; ++p) logits.push_back(m.forward_cached(ids.narrow(1, p, 1), {p}, caches, {turn(p)}));
        return ag::cat(logits, 1);
    };
    const Tensor own = decode([](int64_t p) { return p; });
    CHECK(ag::max_abs_diff(own, m.forward(ids)) < 1e-12);
    CHECK(ag::max_abs_diff(decode([](int64_t p) { return p + 5; }), own) < 1e-12);
    CHECK(ag::max_abs_diff(decode([](int64_t p) { return p == 5 ? 2 : p; }), own) > 1e-6);
    std::vector<nn::KVCache> caches = m.new_caches();
    CHECK_THROWS_WITH(m.forward_cached(ids.narrow(1, 0, 2), {0, 1}, caches, {0}),
                      Catch::Contains("1 rope positions for 2 positions"));
}

// A config is read from a file a user can hand the project: every size is
// checked against its range, and the parameter count against the limit,
// before anything is allocated (n_layers 1,000,000 grew to 12 GB first).
TEST_CASE("a config out of range or too big to build is refused before building, in one line", "[nn][models]") {
    const auto refused = [](void (*change)(LMConfig&)) {
        LMConfig c = LMConfig::modern_lm();
        change(c);
        try {
            c.validate();
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    CHECK(refused([](LMConfig& c) { c.n_layers = 1'000'000; }) ==
          "model config: n_layers 1000000 is out of range (1 to 1024)");
    CHECK(refused([](LMConfig& c) { c.d_model = int64_t{1} << 62; }) ==
          "model config: d_model 4611686018427387904 is out of range (1 to 65536)");
    CHECK(refused([](LMConfig& c) { c.vocab = 0; }) == "model config: vocab 0 is out of range (1 to 1000000)");
    CHECK(refused([](LMConfig& c) { c.d_ff = -5; }) == "model config: d_ff -5 is out of range (1 to 1048576)");
    CHECK(refused([](LMConfig& c) { c.max_len = 2'000'000; }) ==
          "model config: max_len 2000000 is out of range (1 to 1000000)");
    CHECK(refused([](LMConfig& c) { c.window = 2'000'000; }) ==
          "model config: window 2000000 is out of range (0 to 1000000; 0 = full attention)");
    CHECK(refused([](LMConfig& c) { c.rope_base = std::nan(""); }) ==
          "model config: rope_base nan must be a finite number > 0");
    CHECK(refused([](LMConfig& c) { c.rope_base = HUGE_VAL; }) ==
          "model config: rope_base inf must be a finite number > 0");
    // Each size in range, together far too many parameters.
    CHECK(refused([](LMConfig& c) {
              c.d_model = 4096;
              c.n_layers = 1000;
              c.d_ff = 16384;
          }) == "model config: 251666993152 parameters is more than the limit of 100000000 (800 MB of F64 weights)");
    // Llama-3 8B can be counted (lesson 05) but not built here.
    CHECK(nn::count_parameters(nn::llama3_8b()).total() == 8'030'261'248);
    CHECK_THROWS_WITH(nn::llama3_8b().validate(), Catch::Contains("more than the limit"));

    // From a checkpoint's metadata: refused as it is read.
    std::string text = LMConfig::modern_lm().to_json();
    text.replace(text.find("\"n_layers\":2"), 12, "\"n_layers\":1000000");
    CHECK_THROWS_WITH(LMConfig::from_json(text), "model config: n_layers 1000000 is out of range (1 to 1024)");

    // The formula itself never overflows, whatever it is given.
    LMConfig huge = LMConfig::modern_lm();
    huge.d_model = int64_t{1} << 40;
    huge.n_heads = 1;
    huge.n_kv_heads = 1;
    CHECK_THROWS_WITH(nn::count_parameters(huge), "model config: the parameter count does not fit in 64 bits");
    LMConfig no_heads = LMConfig::modern_lm();
    no_heads.n_heads = 0;
    CHECK_THROWS_WITH(nn::count_parameters(no_heads), "model config: n_heads 0 must be at least 1");
}
