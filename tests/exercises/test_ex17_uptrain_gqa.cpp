// Exercise 17 · uptraining MHA -> GQA (§5.4): pooled weights against the
// reference (diagnosing strided groups, sums, sums over √g and picked
// heads), any layout of w, the exceptions, and the converted ModernLM: the
// whole config kept, every parameter copied or pooled, its own trainable
// numbers that start without gradients and train without touching the old
// model, one layer / one head / one KV head, a model that already shares K/V
// heads, and unchanged logits when the heads of each group already agreed.
#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "exercises/ex17_uptrain_gqa.h"
#include "grading_checks.h"
#include "reference/ex17_uptrain_gqa.h"
#include "tensor_checks.h"

namespace ref = ex17_reference;

namespace {

// The wrong turn: new head j = mean of old heads j, j + H_new, j + 2·H_new, …
ag::Tensor strided_pool(const ag::Tensor& w, int64_t dh, int64_t new_heads) {
    const int64_t g = w.size(0) / dh / new_heads;
    return ag::mean(w.reshape({g, new_heads, dh, w.size(1)}), {0}).reshape({new_heads * dh, w.size(1)});
}

// got = pool_kv_heads(w, dh, new_heads)? FAILs naming the wrong turn.
void diagnose_pooling(const ag::Tensor& got, const ag::Tensor& w, int64_t dh, int64_t new_heads) {
    const ag::Tensor want = ref::pool_kv_heads(w, dh, new_heads);
    if (got.shape() != want.shape())
        FAIL("expected a pooled weight of shape " << ag::shape_str(want.shape()) << " (" << new_heads << " heads of "
                                                  << dh << " rows), got " << ag::shape_str(got.shape()));
    if (grading::same_tensor(got, want, 1e-12)) return;
    const int64_t g = w.size(0) / dh / new_heads;
    if (grading::same_tensor(got, strided_pool(w, dh, new_heads), 1e-12))
        FAIL(
            "you pooled strided groups (heads j, j + H_new, …): query head h reads K/V head floor(h / g), so new "
            "head j is the mean of the CONSECUTIVE heads j·g … j·g+g-1");
    if (grading::same_tensor(got, want * static_cast<double>(g), 1e-12))
        FAIL("you summed the heads of each group: divide by the group size g = " << g << " (a mean)");
    if (g > 1 && grading::same_tensor(got, want * std::sqrt(static_cast<double>(g)), 1e-12))
        FAIL("you divided each group's sum by √g = " << std::sqrt(static_cast<double>(g))
                                                     << ": the mean of the g = " << g << " heads divides by g");
    if (grading::same_tensor(got, w.reshape({new_heads, g, dh, w.size(1)}).narrow(1, 0, 1).reshape(want.shape()),
                             1e-12))
        FAIL("you kept the first head of each group: new head j is the MEAN of heads j·g … j·g+g-1");
    FAIL("the pooled weight differs from the reference: " << grading::tensor_diff(got, want));
}

// ModernLMs whose every option differs from LMConfig::modern_lm()'s, so that
// a conversion that rebuilds the config from defaults shows.
// MHA: 6 query heads and 6 K/V heads of head_dim 8, three layers.
nn::LMConfig mha_config() {
    nn::LMConfig cfg = nn::LMConfig::modern_lm();
    cfg.vocab = 23;
    cfg.max_len = 20;
    cfg.d_model = 48;
    cfg.n_layers = 3;
    cfg.n_heads = 6;
    cfg.n_kv_heads = 6;
    cfg.d_ff = 40;
    cfg.rope_pairing = ag::RopePairing::Interleaved;
    cfg.rope_base = 500.0;
    cfg.window = 5;
    return cfg;
}
// Already GQA: 8 query heads of head_dim 6 share 4 K/V heads (wk [24, 48]).
nn::LMConfig gqa_config() {
    nn::LMConfig cfg = mha_config();
    cfg.n_heads = 8;
    cfg.n_kv_heads = 4;
    return cfg;
}
// The smallest: one layer, one head that is its own K/V head.
nn::LMConfig one_head_config() {
    nn::LMConfig cfg = mha_config();
    cfg.d_model = 8;
    cfg.n_layers = 1;
    cfg.n_heads = 1;
    cfg.n_kv_heads = 1;
    return cfg;
}

std::string heads_of(const nn::LMConfig& cfg) {
    return std::to_string(cfg.n_layers) + " layers, " + std::to_string(cfg.n_heads) + " query heads, " +
           std::to_string(cfg.n_kv_heads) + " K/V heads of head_dim " + std::to_string(cfg.head_dim());
}

ag::Tensor some_ids(uint64_t seed, int64_t vocab) {
    ag::Generator gen(seed);
    std::vector<double> ids;
    for (int i = 0; i < 2 * 12; ++i) ids.push_back(static_cast<double>(gen.randint(vocab)));
    return ag::Tensor::from({2, 12}, ids);
}

ag::Tensor logits(const nn::LanguageModel& model, const ag::Tensor& ids) {
    ag::NoGradGuard no_grad;
    return model.forward(ids);
}

bool is_kv(const std::string& name) {
    return name.find(".attn.wk.weight") != std::string::npos || name.find(".attn.wv.weight") != std::string::npos;
}

std::vector<ag::Tensor> clones(const nn::LanguageModel& model) {
    std::vector<ag::Tensor> out;
    for (const ag::Tensor& p : model.parameters()) out.push_back(p.detach().clone());
    return out;
}

// Every parameter of `model` still holds the numbers saved in `before`.
void check_unchanged(const nn::LanguageModel& model, const std::vector<ag::Tensor>& before, const char* what) {
    const auto params = model.named_parameters();
    for (size_t i = 0; i < params.size(); ++i)
        if (!grading::same_tensor(params[i].second, before[i], 0.0))
            FAIL(what << ": " << params[i].first << " changed (" << grading::tensor_diff(params[i].second, before[i])
                      << ")");
}

// Adds `delta` to every number of every parameter (an optimizer step, as far
// as storage is concerned).
void nudge(const nn::LanguageModel& model, double delta) {
    ag::NoGradGuard no_grad;
    for (ag::Tensor p : model.parameters())
        for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] += delta;
}

// The converted model against mha: the config with only n_kv_heads changed,
// each parameter a trainable copy with its own storage, wk and wv pooled.
void check_conversion(const nn::LanguageModel& mha, const nn::LanguageModel& gqa, int64_t kv) {
    nn::LMConfig want_cfg = mha.config();
    want_cfg.n_kv_heads = kv;
    {
        INFO("the new config is the old model's with only n_kv_heads = "
             << kv << " (every other option kept)\n  expected " << want_cfg.to_json() << "\n  got      "
             << gqa.config().to_json());
        REQUIRE(gqa.config().to_json() == want_cfg.to_json());
    }
    const auto from = mha.named_parameters(), to = gqa.named_parameters();
    REQUIRE(from.size() == to.size());
    // The tensor a layer computes with must be the one it registered (the
    // one named_parameters() and an optimizer see).
    for (size_t l = 0; l < gqa.layers.size(); ++l) {
        const auto block = std::dynamic_pointer_cast<nn::ModernBlock>(gqa.layers[l]);
        if (!block) continue;
        const auto& attn = block->attn;
        for (const auto& [proj, linear] : {std::pair{"wk", attn->wk}, std::pair{"wv", attn->wv}}) {
            const std::string name = "layers." + std::to_string(l) + ".attn." + proj + ".weight";
            for (const auto& [n, p] : to)
                if (n == name && p.impl() != linear->weight.impl())
                    FAIL(name << ": the layer computes with a different tensor than the parameter it registered "
                              << "(a new tensor assigned to attn->" << proj
                              << "->weight): named_parameters() and an optimizer still see the old one; copy the "
                                 "numbers into the registered parameter instead");
        }
    }
    for (size_t i = 0; i < to.size(); ++i) {
        const std::string& name = to[i].first;
        const ag::Tensor& p = to[i].second;
        INFO("parameter " << name << " " << ag::shape_str(p.shape()));
        if (p.impl()->storage == from[i].second.impl()->storage)
            FAIL(
                "the new model shares this tensor's numbers with the old one: copy them, so that uptraining one "
                "leaves the other alone");
        if (!p.requires_grad())
            FAIL(
                "this parameter does not require grad: every parameter of the converted model is trainable (it is "
                "about to be uptrained), whatever the old model's flags were");
        if (is_kv(name)) {
            const nn::LMConfig& cfg = mha.config();
            INFO("the old weight holds its " << cfg.n_kv_heads << " K/V heads of head_dim = d_model / n_heads = "
                                             << cfg.head_dim() << " rows each");
            diagnose_pooling(p, from[i].second, cfg.head_dim(), kv);
        } else if (!grading::same_tensor(p, from[i].second, 0.0)) {
            FAIL("not an exact copy of the old model's: " << grading::tensor_diff(p, from[i].second));
        }
    }
}

// mha with the K/V heads of each group of n_kv_heads / kv made equal (each
// head a copy of its group's first), so that pooling changes nothing.
void equalize_groups(const nn::LanguageModel& mha, int64_t kv) {
    const int64_t dh = mha.config().head_dim(), heads = mha.config().n_kv_heads, g = heads / kv;
    ag::NoGradGuard no_grad;
    for (const auto& [name, p] : mha.named_parameters())
        if (is_kv(name)) {
            ag::Tensor w = p;  // [heads·dh, d]: head h is rows h·dh … h·dh+dh-1
            const int64_t block = dh * w.size(1);
            for (int64_t h = 0; h < heads; ++h)
                if (h % g != 0) std::copy_n(w.data() + (h / g) * g * block, block, w.data() + h * block);
        }
}

}  // namespace

TEST_CASE("ex17 pool_kv_heads: shapes and the means of consecutive groups") {
    ag::Generator gen(17);
    for (int64_t old_heads : {1, 2, 3, 4, 6, 8, 12})
        for (int64_t new_heads = 1; new_heads <= old_heads; ++new_heads) {
            if (old_heads % new_heads) continue;
            for (int64_t dh : {1, 2, 4, 8}) {
                const int64_t d = 1 + (dh + old_heads) % 7;
                const ag::Tensor w = ag::Tensor::randn({old_heads * dh, d}, gen), before = w.clone();
                INFO(old_heads << " heads -> " << new_heads << ", head_dim " << dh << ", d " << d << " (w "
                               << ag::shape_str(w.shape()) << ")");
                const ag::Tensor got = ex17::pool_kv_heads(w, dh, new_heads);
                {
                    INFO("expected shape [" << new_heads * dh << ", " << d << "], got " << ag::shape_str(got.shape()));
                    REQUIRE(got.shape() == ag::Shape{new_heads * dh, d});
                }
                {
                    INFO("pool_kv_heads must leave w unchanged");
                    REQUIRE(grading::same_tensor(w, before, 0.0));
                }
                diagnose_pooling(got, w, dh, new_heads);
                if (new_heads == old_heads) {
                    INFO("with as many new heads as old ones, every group is one head: w itself");
                    CHECK(grading::same_tensor(got, w, 1e-12));
                }
                if (new_heads == 1) {
                    INFO("one new head (MQA) is the mean of all the heads");
                    CHECK(grading::same_tensor(got, ag::mean(w.reshape({old_heads, dh, d}), {0}), 1e-12));
                }
            }
        }
}

TEST_CASE("ex17 pool_kv_heads reads w in any layout") {
    // w is any tensor of shape [H_old·dh, d], e.g. a view: strided_copy holds
    // the same numbers with a NaN after each one, which a flat read of
    // w.data() picks up.
    grading::Random rng(20);
    for (const auto& [old_heads, new_heads] : std::vector<std::pair<int64_t, int64_t>>{{4, 2}, {6, 3}, {4, 1}}) {
        const int64_t dh = 4, d = 6;
        const ag::Tensor w = grading::random_tensor(rng, {old_heads * dh, d});
        INFO(old_heads << " heads -> " << new_heads << ", w " << ag::shape_str(w.shape())
                       << " given as a view that is not contiguous (every other number of its storage)");
        const ag::Tensor got = ex17::pool_kv_heads(grading::strided_copy(w), dh, new_heads);
        const ag::Tensor want = ref::pool_kv_heads(w, dh, new_heads);
        if (got.shape() == want.shape() && std::isnan(ag::max_abs_diff(got, want)))
            FAIL(
                "your pooled weight holds NaN: you read w.data() as if w were contiguous; call w.contiguous() "
                "first (or use engine ops, which handle any layout)");
        diagnose_pooling(got, w, dh, new_heads);
    }
}

TEST_CASE("ex17 heads already equal in each group stay as they are") {
    ag::Generator gen(18);
    for (int64_t g : {2, 3, 4}) {
        const int64_t new_heads = 2, dh = 4, d = 5;
        // each of the 2 heads repeated g times in a row: heads 0 … g-1 equal, then g … 2g-1
        const ag::Tensor heads = ag::Tensor::randn({new_heads, 1, dh, d}, gen);
        std::vector<ag::Tensor> copies(static_cast<size_t>(g), heads);
        const ag::Tensor w = ag::cat(copies, 1).reshape({new_heads * g * dh, d});
        INFO("group size " << g << ": the mean of g equal heads is that head");
        const ag::Tensor got = ex17::pool_kv_heads(w, dh, new_heads);
        diagnose_pooling(got, w, dh, new_heads);
        CHECK(grading::same_tensor(got, heads.reshape({new_heads * dh, d}), 1e-12));
    }
}

TEST_CASE("ex17 pool_kv_heads rejects groups of unequal size") {
    ag::Generator gen(19);
    const ag::Tensor w = ag::Tensor::randn({4 * 3, 5}, gen);  // 4 heads of 3
    const auto rejects = [&](int64_t head_dim, int64_t new_heads, const char* why) {
        INFO("w [12, 5], head_dim " << head_dim << ", new_heads " << new_heads << ": " << why
                                    << ", so std::invalid_argument");
        CHECK_THROWS_AS(ex17::pool_kv_heads(w, head_dim, new_heads), std::invalid_argument);
    };
    rejects(3, 3, "4 heads of 3 do not split into 3 groups of equal size");
    rejects(3, 8, "4 heads cannot make 8");
    rejects(3, 0, "0 new heads");
    rejects(3, -2, "a negative number of heads (though 4 % -2 == 0 in C++)");
    rejects(5, 1, "12 rows are not heads of 5");
    rejects(24, 1, "12 rows are not heads of 24");
    INFO("but 4 heads of 3 in 2 groups of 2 are fine");
    CHECK(ex17::pool_kv_heads(w, 3, 2).shape() == ag::Shape{6, 5});
}

TEST_CASE("ex17 convert_to_gqa: the config, every parameter copied, wk and wv pooled") {
    struct Case {
        nn::LMConfig cfg;
        std::vector<int64_t> kvs;
    };
    // MHA 6 -> 3, 2, 1 and 6 (nothing to pool); a model that is already GQA
    // (head_dim = d_model / n_heads, not d_model / n_kv_heads); one head.
    for (const Case& c : {Case{mha_config(), {3, 2, 1, 6}}, Case{gqa_config(), {2, 1}}, Case{one_head_config(), {1}}}) {
        const nn::LanguageModel mha(c.cfg, 3);
        const std::vector<ag::Tensor> before = clones(mha);
        for (int64_t kv : c.kvs) {
            INFO(heads_of(c.cfg) << " -> " << kv << " K/V heads");
            const std::unique_ptr<nn::LanguageModel> gqa = ex17::convert_to_gqa(mha, kv);
            REQUIRE(gqa);
            check_conversion(mha, *gqa, kv);
            check_unchanged(mha, before, "convert_to_gqa must leave the old model unchanged");
        }
    }
}

TEST_CASE("ex17 convert_to_gqa rejects K/V heads that do not split into equal groups") {
    const nn::LanguageModel mha(mha_config(), 3), gqa(gqa_config(), 3);
    const auto rejects = [](const nn::LanguageModel& model, int64_t kv, const char* why) {
        INFO(heads_of(model.config()) << " -> " << kv << ": " << why << ", so std::invalid_argument");
        CHECK_THROWS_AS(ex17::convert_to_gqa(model, kv), std::invalid_argument);
    };
    rejects(mha, 4, "6 K/V heads do not split into 4 groups");
    rejects(mha, 12, "6 K/V heads cannot make 12");
    rejects(mha, 0, "0 K/V heads");
    rejects(mha, -3, "a negative number of K/V heads");
    rejects(gqa, 8, "4 K/V heads cannot be pooled into 8 (though 8 query heads could share 8)");
}

TEST_CASE("ex17 the converted model is ready to uptrain: trainable, no gradients, its own numbers") {
    // The MHA model as it may come out of training: gradients still on its
    // parameters, its embedding frozen (as by a probe).
    const nn::LanguageModel mha(mha_config(), 11);
    const ag::Tensor ids = some_ids(12, mha.config().vocab);
    ag::mean(ag::pow(mha.forward(ids), 2.0)).backward();
    mha.tok_emb->requires_grad_(false);
    const std::vector<ag::Tensor> before = clones(mha);
    std::vector<ag::Tensor> mha_grads;
    for (const ag::Tensor& p : mha.parameters()) mha_grads.push_back(p.grad());

    const std::unique_ptr<nn::LanguageModel> gqa = ex17::convert_to_gqa(mha, 2);
    REQUIRE(gqa);
    INFO("6 K/V heads -> 2, from a model with gradients on its parameters and a frozen tok_emb");
    check_conversion(mha, *gqa, 2);
    const auto from = mha.named_parameters(), to = gqa->named_parameters();
    for (size_t i = 0; i < to.size(); ++i) {
        INFO("parameter " << to[i].first);
        const ag::Tensor g = to[i].second.grad();
        if (g.defined() && ag::max_abs_diff(g, ag::Tensor::zeros(g.shape())) > 0.0)
            FAIL(
                "the converted model starts with a gradient on this parameter: it is a new model, its first "
                "uptraining step must see only its own gradients (copy the numbers, not .grad())");
        if (from[i].second.grad().impl() != mha_grads[i].impl() ||
            (mha_grads[i].defined() && !grading::same_tensor(from[i].second.grad(), mha_grads[i], 0.0)))
            FAIL("convert_to_gqa changed the old model's gradient on this parameter");
    }
    {
        INFO("the old model's requires_grad flags stay as they were");
        CHECK(!mha.tok_emb->weight.requires_grad());
    }

    // One step of uptraining on the new model: a gradient reaches every one
    // of its parameters, none reaches the old model, and the old model's
    // numbers do not move; then the other way round.
    ag::mean(ag::pow(gqa->forward(ids), 2.0)).backward();
    for (const auto& [name, p] : gqa->named_parameters()) {
        INFO("parameter " << name << " of the converted model after a backward through it");
        if (!p.grad().defined()) FAIL("no gradient reached it: the converted model's parameters must be trainable");
    }
    for (size_t i = 0; i < from.size(); ++i)
        if (from[i].second.grad().impl() != mha_grads[i].impl())
            FAIL("a backward through the converted model reached the old model's "
                 << from[i].first << ": the new model must own its numbers");
    const std::vector<ag::Tensor> converted = clones(*gqa);
    nudge(*gqa, 0.25);
    check_unchanged(mha, before, "changing the converted model's numbers changed the old model's");
    nudge(mha, -0.5);
    {
        std::vector<ag::Tensor> nudged;
        for (const ag::Tensor& t : converted) nudged.push_back(t + 0.25);
        check_unchanged(*gqa, nudged, "changing the old model's numbers changed the converted model's");
    }
}

TEST_CASE("ex17 a model whose K/V heads agree within each group keeps its logits") {
    // Make the K/V heads of each group equal (for 6 -> 2: heads 0 = 1 = 2 and
    // 3 = 4 = 5): pooling them changes nothing, so the GQA model computes the
    // very same function (§5.2: query head h reads K/V head floor(h / g)).
    for (const auto& [cfg, kv] : std::vector<std::pair<nn::LMConfig, int64_t>>{
             {mha_config(), 3}, {mha_config(), 2}, {mha_config(), 1}, {gqa_config(), 2}}) {
        const ag::Tensor ids = some_ids(5, cfg.vocab);
        const nn::LanguageModel mha(cfg, 4);
        equalize_groups(mha, kv);
        INFO(heads_of(cfg) << ", equal in groups of " << cfg.n_kv_heads / kv << ", pooled to " << kv);
        const std::unique_ptr<nn::LanguageModel> gqa = ex17::convert_to_gqa(mha, kv);
        REQUIRE(gqa);
        const ag::Tensor want = logits(mha, ids), got = logits(*gqa, ids);
        if (!grading::same_tensor(got, want, 1e-10)) check_conversion(mha, *gqa, kv);
        INFO("max |logits after - logits before| = " << ag::max_abs_diff(got, want));
        CHECK(grading::same_tensor(got, want, 1e-10));
    }
}

TEST_CASE("ex17 a converted random model equals the reference's conversion") {
    for (uint64_t seed : {7, 8}) {
        const nn::LanguageModel mha(mha_config(), seed);
        const ag::Tensor ids = some_ids(6, mha.config().vocab);
        const std::unique_ptr<nn::LanguageModel> gqa = ex17::convert_to_gqa(mha, 2);
        REQUIRE(gqa);
        const ag::Tensor got = logits(*gqa, ids), want = logits(*ref::convert_to_gqa(mha, 2), ids);
        INFO("seed " << seed << ", 6 K/V heads -> 2: logits " << grading::tensor_diff(got, want));
        CHECK(grading::same_tensor(got, want, 1e-10));
        INFO("the heads of a trained-from-scratch model differ, so pooling changes its function (§5.4's 'large loss')");
        CHECK(!grading::same_tensor(got, logits(mha, ids), 1e-6));
    }
}
