// Exercise 6 · the receptive field of stacked windows (§6.3): the lecture's
// numbers, the reference, and a measurement on real windowed models.
#include "autograd/autograd.h"
#include "exercises/ex06_receptive_field.h"
#include "grading_checks.h"
#include "nn/language_model.h"
#include "reference/ex06_receptive_field.h"

namespace ref = ex06_reference;

TEST_CASE("ex06 the lecture's numbers") {
    UNSCOPED_INFO("Mistral 7B: 32 layers, W = 4096");
    CHECK(ex06::receptive_field(32, 4096) == 131040);
    UNSCOPED_INFO("2 layers, W = 4: the §6.5 model");
    CHECK(ex06::receptive_field(2, 4) == 6);
    UNSCOPED_INFO("W = 1 sees only itself: nothing flows between positions");
    CHECK(ex06::receptive_field(5, 1) == 0);
}

TEST_CASE("ex06 equals the reference") {
    grading::Random rng(7);
    for (int n = 0; n < 200; ++n) {
        const int64_t L = rng.integer(1, 100), W = rng.integer(1, 10000);
        INFO(L << " layers, W = " << W);
        const int64_t got = ex06::receptive_field(L, W);
        if (got == L * W) FAIL("each layer reaches W - 1 positions back (W counts the position itself)");
        CHECK(got == ref::receptive_field(L, W));
    }
}

// Change the input token at position 1 of an untrained windowed ModernLM
// and return the furthest position whose output moved (minus 1).
int64_t measured_reach(int64_t layers, int64_t window) {
    nn::LMConfig cfg = nn::LMConfig::modern_lm();
    cfg.d_model = 16;
    cfg.n_heads = 2;
    cfg.n_kv_heads = 1;
    cfg.d_ff = 16;
    cfg.n_layers = layers;
    cfg.window = window;
    const nn::LanguageModel model(cfg, 1);
    const ag::NoGradGuard no_grad;
    std::vector<double> ids(30);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<double>(3 + i % 20);
    const ag::Tensor a = model.hidden(ag::Tensor::from({1, 30}, ids));
    ids[1] = 60;
    const ag::Tensor b = model.hidden(ag::Tensor::from({1, 30}, ids));
    int64_t furthest = 1;
    for (int64_t t = 0; t < 30; ++t)
        for (int64_t c = 0; c < 16; ++c)
            if (a.at({0, t, c}) != b.at({0, t, c})) furthest = std::max(furthest, t);
    return furthest - 1;
}

TEST_CASE("ex06 the formula matches what real windowed models do") {
    for (int64_t layers : {1, 2, 3})
        for (int64_t window : {2, 3, 4}) {
            INFO(layers << " layers, W = " << window << ": changing token 1 moves outputs up to position "
                        << 1 + measured_reach(layers, window));
            CHECK(ex06::receptive_field(layers, window) == measured_reach(layers, window));
        }
}
