// Exercise 5 · what a sliding window saves (§6.2): the lecture's shares,
// counts against explicit masks, and the reference.
#include "exercises/ex05_window_fractions.h"
#include "grading_checks.h"
#include "reference/ex05_window_fractions.h"

namespace ref = ex05_reference;

TEST_CASE("ex05 the lecture's T = 32,768 and W = 4096") {
    const ex05::Fractions f = ex05::window_fractions(32768, 4096);
    UNSCOPED_INFO("causal: T(T+1)/2 of T², about 50%");
    CHECK_CLOSE(f.causal, 0.5000152587890625, 1e-12);
    UNSCOPED_INFO("window: (TW - W(W-1)/2) / T², about 11.7%");
    CHECK_CLOSE(f.window, 0.11718940734863281, 1e-12);
    UNSCOPED_INFO("chunks: 2TW / T² = 2W/T = 25%");
    CHECK_CLOSE(f.chunked, 0.25, 1e-12);
}

// Ones in the T × T mask t - W < j <= t (W = T: the causal mask).
int64_t mask_ones(int64_t T, int64_t W) {
    int64_t ones = 0;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j <= t; ++j) ones += t - W < j;
    return ones;
}

TEST_CASE("ex05 the shares count the mask's ones exactly") {
    for (int64_t T = 1; T <= 24; ++T)
        for (int64_t W = 1; W <= T; ++W) {
            const ex05::Fractions f = ex05::window_fractions(T, W);
            const double all = static_cast<double>(T * T);
            INFO("T = " << T << ", W = " << W << ": the mask t - W < j <= t has " << mask_ones(T, W) << " ones");
            CHECK_CLOSE(f.causal, static_cast<double>(mask_ones(T, T)) / all, 1e-12);
            for (int64_t off : {W - 1, W + 1})
                if (off >= 1 && off <= T && mask_ones(T, off) != mask_ones(T, W) &&
                    grading::close(f.window, static_cast<double>(mask_ones(T, off)) / all, 1e-12))
                    FAIL("off by one: you counted a window of " << off << "; a window of W sees W tokens, itself included");
            CHECK_CLOSE(f.window, static_cast<double>(mask_ones(T, W)) / all, 1e-12);
        }
}

TEST_CASE("ex05 equals the reference") {
    grading::Random rng(6);
    for (int n = 0; n < 300; ++n) {
        const int64_t T = rng.integer(1, 1 << 20), W = rng.integer(1, T);
        INFO("T = " << T << ", W = " << W);
        const ex05::Fractions got = ex05::window_fractions(T, W);
        const ref::Fractions want = ref::window_fractions(T, W);
        CHECK_CLOSE(got.causal, want.causal, 1e-12);
        CHECK_CLOSE(got.window, want.window, 1e-12);
        CHECK_CLOSE(got.chunked, want.chunked, 1e-12);
    }
}
