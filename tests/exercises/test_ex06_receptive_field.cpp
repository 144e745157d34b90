// Exercise 6 · the receptive field of stacked windows (§6.3): the lecture's
// numbers, the edges (one layer, W = 1, W = 2), the reference, and a
// measurement on real windowed models. Diagnoses the usual wrong turns: W
// per layer, one layer short, only the top layer's window, the position
// itself counted, whole windows of W added, windows multiplied, W/2 per
// layer, a layer too many, two steps per layer, one off per junction, one
// position per extra layer, 32-bit overflow.
#include <functional>
#include <vector>

#include "autograd/autograd.h"
#include "exercises/ex06_receptive_field.h"
#include "grading_checks.h"
#include "nn/language_model.h"
#include "reference/ex06_receptive_field.h"

namespace ref = ex06_reference;

namespace {

// What receptive_field(L, W) returns under a wrong idea, and what it is.
struct WrongField {
    std::function<int64_t(int64_t L, int64_t W)> field;
    const char* diagnosis;
};

// base^exponent, or -1 when it does not fit in 62 bits.
int64_t power(int64_t base, int64_t exponent) {
    int64_t p = 1;
    for (int64_t i = 0; i < exponent; ++i) {
        if (p > (int64_t{1} << 62) / base) return -1;
        p *= base;
    }
    return p;
}

const std::vector<WrongField>& wrong_fields() {
    static const std::vector<WrongField> all = {
        {[](int64_t L, int64_t W) { return L * W; },
         "each layer reaches W - 1 positions further back, not W: the window of W counts the position itself"},
        {[](int64_t L, int64_t W) { return (L - 1) * (W - 1); },
         "one layer short: every one of the L layers, the first included, reaches W - 1 further back"},
        {[](int64_t, int64_t W) { return W - 1; },
         "that is one layer's window: the layers relay, each one reads positions of the layer below that "
         "already mixed in W - 1 earlier ones, so the reach adds up over the L layers"},
        {[](int64_t L, int64_t W) { return L * (W - 1) + 1; },
         "that counts the position itself: the question is how many tokens BACK, and t itself is 0 back"},
        {[](int64_t L, int64_t W) { return L * W - 1; },
         "L·W - 1 counts every layer's whole window of W: consecutive windows share the position they pass on, "
         "so each layer adds W - 1"},
        {[](int64_t L, int64_t W) { return power(W, L) < 0 ? -2 : power(W, L) - 1; },
         "the reach grows by W - 1 per layer (added, not multiplied: a window is not a dilated convolution)"},
        {[](int64_t L, int64_t W) { return L * (W / 2); },
         "you reach W/2 back per layer, half of a two-sided Longformer width: here a window of W is causal, "
         "position t reads t - W + 1 … t, so W - 1 back"},
        {[](int64_t L, int64_t W) { return (L + 1) * (W - 1); },
         "one layer too many: the embeddings are per position, only the L windowed layers move information, "
         "W - 1 each"},
        {[](int64_t L, int64_t W) { return 2 * L * (W - 1); },
         "you count two steps per layer: the feed-forward sublayer works on each position alone, only the "
         "attention moves information, W - 1 positions per layer"},
        {[](int64_t L, int64_t W) { return L * (W - 1) - (L - 1); },
         "you took one position off per junction of two layers: the position a layer passes on is already not "
         "counted in W - 1, so each layer adds the full W - 1"},
        {[](int64_t L, int64_t W) { return (W - 1) + (L - 1); },
         "every layer above the first reaches W - 1 further back too, not one position: position t - W + 1 of "
         "the layer below already holds what reached it from W - 1 further back"},
    };
    return all;
}

// receptive_field(L, W) against L(W - 1); FAILs with the diagnosis of a
// known wrong idea when the answer is that idea's.
void check_field(int64_t layers, int64_t window) {
    const int64_t got = ex06::receptive_field(layers, window), want = ref::receptive_field(layers, window);
    INFO("receptive_field(" << layers << " layers, W = " << window << "): expected L(W - 1) = " << want << ", got "
                            << got);
    if (got == want) return;
    if (want > INT32_MAX && got == static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(want))))
        FAIL("the reach overflowed 32 bits (" << want << " > 2^31 - 1): compute L(W - 1) in int64_t");
    for (const WrongField& wrong : wrong_fields()) {
        const int64_t wrong_field = wrong.field(layers, window);
        if (wrong_field != want && got == wrong_field) FAIL(wrong.diagnosis);
    }
    if (got > layers * window)
        FAIL("more than L·W = " << layers * window << " positions back: each layer adds W - 1, the reach grows "
                                << "linearly with the layers");
    FAIL("each of the L layers reaches W - 1 positions further back than the one below");
}

}  // namespace

TEST_CASE("ex06 the lecture's numbers") {
    const int64_t mistral = ex06::receptive_field(32, 4096);
    {
        INFO("Mistral 7B: 32 layers, W = 4096: 32 × 4095 = 131,040 tokens back");
        check_field(32, 4096);
        CHECK(mistral == 131040);
    }
    {
        INFO("2 layers, W = 4: the §6.5 model reaches 6 back, so a subject 9 tokens back is out of sight");
        check_field(2, 4);
    }
    {
        INFO("W = 1 sees only itself: nothing flows between positions");
        check_field(5, 1);
    }
}

TEST_CASE("ex06 the edges: one layer, W = 1, W = 2") {
    for (int64_t W = 1; W <= 10; ++W) {
        INFO("one layer reads t - W + 1 … t: W - 1 back");
        check_field(1, W);
    }
    for (int64_t L = 1; L <= 10; ++L) {
        INFO("W = 1: every layer reads only its own position");
        check_field(L, 1);
    }
    for (int64_t L = 1; L <= 10; ++L) {
        INFO("W = 2: every layer reads one position back");
        check_field(L, 2);
    }
}

TEST_CASE("ex06 equals the reference") {
    grading::Random rng(7);
    for (int n = 0; n < 200; ++n) check_field(rng.integer(1, 100), rng.integer(1, 10000));
    INFO("128 layers with a window of 2^25 tokens reach 128 × (2^25 - 1) = 4,294,967,168 back, more than 2^31");
    check_field(128, int64_t{1} << 25);
}

namespace {

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

}  // namespace

TEST_CASE("ex06 the formula matches what real windowed models do") {
    for (int64_t layers : {1, 2, 3})
        for (int64_t window : {1, 2, 3, 4}) {
            const int64_t reach = measured_reach(layers, window);
            INFO("an untrained ModernLM with " << layers << " layers and W = " << window
                                               << ": changing token 1 moves outputs up to position " << 1 + reach
                                               << ", " << reach << " back");
            check_field(layers, window);
            CHECK(ex06::receptive_field(layers, window) == reach);
        }
}
