// Exercise 17 · uptraining MHA -> GQA (§5.4): pooled weights against the
// reference (diagnosing strided groups and sums), the exceptions, and the
// converted ModernLM: config, copies, pooled projections, own numbers, and
// unchanged logits when the heads of each group already agreed.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "exercises/ex17_uptrain_gqa.h"
#include "grading_checks.h"
#include "reference/ex17_uptrain_gqa.h"

namespace ref = ex17_reference;

namespace {

// The wrong turn: new head j = mean of old heads j, j + H_new, j + 2·H_new, …
ag::Tensor strided_pool(const ag::Tensor& w, int64_t dh, int64_t new_heads) {
    const int64_t g = w.size(0) / dh / new_heads;
    return ag::mean(w.reshape({g, new_heads, dh, w.size(1)}), {0}).reshape({new_heads * dh, w.size(1)});
}

bool same(const ag::Tensor& a, const ag::Tensor& b, double tol = 1e-12) {
    return a.shape() == b.shape() && ag::max_abs_diff(a, b) <= tol;
}

void diagnose_pooling(const ag::Tensor& got, const ag::Tensor& w, int64_t dh, int64_t new_heads) {
    const ag::Tensor want = ref::pool_kv_heads(w, dh, new_heads);
    if (got.shape() != want.shape())
        FAIL("expected a pooled weight of shape " << ag::shape_str(want.shape()) << ", got " << ag::shape_str(got.shape()));
    if (same(got, want)) return;
    const int64_t g = w.size(0) / dh / new_heads;
    if (same(got, strided_pool(w, dh, new_heads)))
        FAIL("you pooled strided groups (heads j, j + H_new, …): query head h reads K/V head floor(h / g), so new "
             "head j is the mean of the CONSECUTIVE heads j·g … j·g+g-1");
    if (same(got, want * static_cast<double>(g)))
        FAIL("you summed the heads of each group: divide by the group size g = " << g << " (a mean)");
    if (same(got, w.reshape({new_heads, g, dh, w.size(1)}).narrow(1, 0, 1).reshape(want.shape())))
        FAIL("you kept the first head of each group: new head j is the MEAN of heads j·g … j·g+g-1");
    FAIL("the pooled weight differs from the reference by up to " << ag::max_abs_diff(got, want));
}

// A ModernLM with MHA: 4 query heads, 4 K/V heads of 16 dimensions.
nn::LMConfig mha_config() {
    nn::LMConfig cfg = nn::LMConfig::modern_lm();
    cfg.n_kv_heads = 4;
    return cfg;
}

ag::Tensor some_ids(uint64_t seed) {
    ag::Generator gen(seed);
    std::vector<double> ids;
    for (int i = 0; i < 2 * 12; ++i) ids.push_back(static_cast<double>(gen.randint(68)));
    return ag::Tensor::from({2, 12}, ids);
}

ag::Tensor logits(const nn::LanguageModel& model, const ag::Tensor& ids) {
    ag::NoGradGuard no_grad;
    return model.forward(ids);
}

bool is_kv(const std::string& name) {
    return name.find(".attn.wk.weight") != std::string::npos || name.find(".attn.wv.weight") != std::string::npos;
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
                    REQUIRE(same(w, before, 0.0));
                }
                diagnose_pooling(got, w, dh, new_heads);
                if (new_heads == old_heads) {
                    INFO("with as many new heads as old ones, every group is one head: w itself");
                    CHECK(same(got, w));
                }
                if (new_heads == 1) {
                    INFO("one new head (MQA) is the mean of all the heads");
                    CHECK(same(got, ag::mean(w.reshape({old_heads, dh, d}), {0})));
                }
            }
        }
}

TEST_CASE("ex17 pool_kv_heads: heads already equal in each group stay as they are") {
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
        CHECK(same(got, heads.reshape({new_heads * dh, d})));
    }
}

TEST_CASE("ex17 pool_kv_heads rejects groups of unequal size") {
    ag::Generator gen(19);
    const ag::Tensor w = ag::Tensor::randn({4 * 3, 5}, gen);   // 4 heads of 3
    const auto rejects = [&](int64_t head_dim, int64_t new_heads, const char* why) {
        INFO(why);
        CHECK_THROWS_AS(ex17::pool_kv_heads(w, head_dim, new_heads), std::invalid_argument);
    };
    rejects(3, 3, "4 heads of 3 do not split into 3 groups of equal size");
    rejects(3, 0, "0 new heads");
    rejects(5, 1, "12 rows are not heads of 5");
    INFO("but 4 heads of 3 in 2 groups of 2 are fine");
    CHECK(ex17::pool_kv_heads(w, 3, 2).shape() == ag::Shape{6, 5});
}

TEST_CASE("ex17 convert_to_gqa: the config, every parameter copied, wk and wv pooled") {
    const nn::LanguageModel mha(mha_config(), 3);
    std::vector<ag::Tensor> before;
    for (const auto& [name, p] : mha.named_parameters()) before.push_back(p.clone());
    for (int64_t kv : {2, 1, 4}) {
        INFO("4 K/V heads -> " << kv);
        const std::unique_ptr<nn::LanguageModel> gqa = ex17::convert_to_gqa(mha, kv);
        REQUIRE(gqa);
        nn::LMConfig want_cfg = mha_config();
        want_cfg.n_kv_heads = kv;
        {
            INFO("the new config is the old one with n_kv_heads = " << kv << "; got " << gqa->config().to_json());
            REQUIRE(gqa->config().to_json() == want_cfg.to_json());
        }

        const auto from = mha.named_parameters(), to = gqa->named_parameters();
        REQUIRE(from.size() == to.size());
        for (size_t i = 0; i < to.size(); ++i) {
            const std::string& name = to[i].first;
            const ag::Tensor& p = to[i].second;
            INFO("parameter " << name << " " << ag::shape_str(p.shape()));
            if (p.impl()->storage == from[i].second.impl()->storage)
                FAIL("the new model shares this tensor with the old one: copy the numbers, so that uptraining one "
                     "leaves the other alone");
            CHECK(p.requires_grad());
            if (is_kv(name)) {
                diagnose_pooling(p, from[i].second, 16, kv);
                CHECK(same(p, ref::pool_kv_heads(from[i].second, 16, kv)));
            } else {
                INFO("an exact copy of the old model's");
                CHECK(same(p, from[i].second, 0.0));
            }
        }
        INFO("convert_to_gqa must leave the old model unchanged");
        for (size_t i = 0; i < before.size(); ++i) CHECK(same(from[i].second, before[i], 0.0));
    }
    INFO("4 K/V heads do not split into 3 groups: std::invalid_argument");
    CHECK_THROWS_AS(ex17::convert_to_gqa(mha, 3), std::invalid_argument);
}

TEST_CASE("ex17 a model whose K/V heads agree within each group keeps its logits") {
    // Make the MHA model's K/V heads 0 = 1 and 2 = 3 (consecutive pairs), or
    // all four equal: pooling them changes nothing, so the GQA model
    // computes the very same function (§5.2: query head h reads floor(h / g)).
    const ag::Tensor ids = some_ids(5);
    for (int64_t kv : {2, 1}) {
        const nn::LanguageModel mha(mha_config(), 4);
        {
            ag::NoGradGuard no_grad;
            for (const auto& [name, p] : mha.named_parameters())
                if (is_kv(name)) {
                    ag::Tensor w = p;   // [4·16, 64]: head h is rows 16h … 16h+15
                    const int64_t row = w.size(1) * 16, g = 4 / kv;
                    for (int64_t h = 0; h < 4; ++h)
                        if (h % g != 0) std::copy_n(w.data() + (h / g) * g * row, row, w.data() + h * row);
                }
        }
        INFO("4 K/V heads, equal in groups of " << 4 / kv << ", pooled to " << kv);
        const std::unique_ptr<nn::LanguageModel> gqa = ex17::convert_to_gqa(mha, kv);
        REQUIRE(gqa);
        const ag::Tensor want = logits(mha, ids), got = logits(*gqa, ids);
        if (!same(got, want, 1e-10)) {
            const auto from = mha.named_parameters(), to = gqa->named_parameters();
            for (size_t i = 0; i < std::min(from.size(), to.size()); ++i)
                if (is_kv(to[i].first)) {
                    INFO("parameter " << to[i].first);
                    diagnose_pooling(to[i].second, from[i].second, 16, kv);
                }
        }
        INFO("max |logits after - logits before| = " << ag::max_abs_diff(got, want));
        CHECK(same(got, want, 1e-10));
    }
}

TEST_CASE("ex17 a converted random model equals the reference's conversion") {
    const ag::Tensor ids = some_ids(6);
    for (uint64_t seed : {7, 8}) {
        const nn::LanguageModel mha(mha_config(), seed);
        const std::unique_ptr<nn::LanguageModel> gqa = ex17::convert_to_gqa(mha, 2);
        REQUIRE(gqa);
        const ag::Tensor got = logits(*gqa, ids), want = logits(*ref::convert_to_gqa(mha, 2), ids);
        INFO("seed " << seed << ": max |logits - reference's| = " << ag::max_abs_diff(got, want));
        CHECK(same(got, want, 1e-10));
        INFO("the heads of a trained-from-scratch model differ, so pooling changes its function (§5.4's 'large loss')");
        CHECK(!same(got, logits(mha, ids), 1e-6));
    }
}
