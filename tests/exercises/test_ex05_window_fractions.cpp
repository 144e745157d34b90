// Exercise 5 · what a sliding window saves (§6.2): the lecture's shares,
// counts against explicit masks (windows longer than the sequence too),
// the edges W = 1, W = T, T = 1, and the reference on long sequences.
// Diagnoses the usual wrong turns: the causal half without (or with half)
// the diagonal, every query seeing W keys, a window of W ± 1, a window
// longer than the sequence not clipped, shares of the causal pairs instead
// of T², chunks of TW or 2TW - W² scores, percentages, W/2 + 1 keys (the
// Longformer ½w + 1), a two-sided window, W >= T clipped to T - 1, 32-bit
// counts.
#include <functional>
#include <iomanip>
#include <string>
#include <vector>

#include "exercises/ex05_window_fractions.h"
#include "grading_checks.h"
#include "reference/ex05_window_fractions.h"

namespace ref = ex05_reference;

namespace {

// Ones in the T × T mask t - W < j <= t (W >= T: the causal mask).
int64_t mask_ones(int64_t T, int64_t W) {
    int64_t ones = 0;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j <= t; ++j) ones += t - W < j;
    return ones;
}

// Query t sees min(t + 1, W) keys: Σ_t = T·w - w(w-1)/2 with w = min(W, T),
// the closed form of mask_ones for the long sequences of the reference test.
double window_pairs(int64_t T, int64_t W) {
    const double w = static_cast<double>(std::min(W, T)), t = static_cast<double>(T);
    return t * w - w * (w - 1) / 2;
}

double squared(int64_t T) { return static_cast<double>(T) * static_cast<double>(T); }

// The student's three shares for T = 1000, W = 100 (no count near 2^31).
bool right_on_short_sequence() {
    const ex05::Fractions got = ex05::window_fractions(1000, 100);
    const ref::Fractions want = ref::window_fractions(1000, 100);
    return grading::close(got.causal, want.causal) && grading::close(got.window, want.window) &&
           grading::close(got.chunked, want.chunked);
}

// A share, a wrong idea of it, and what the idea is.
struct WrongShare {
    std::function<double(int64_t T, int64_t W)> share;
    const char* diagnosis;
};

// got against want; FAILs with the first wrong idea that gives got (where
// it differs from want).
void check_share(const char* field, double got, double want, int64_t T, int64_t W,
                 const std::vector<WrongShare>& wrongs) {
    INFO(std::setprecision(15) << field << " for T = " << T << ", W = " << W << ": expected " << want << " of T², got "
                               << got);
    if (grading::close(got, want, 1e-12)) return;
    if (want > 0 && grading::close(got, 100 * want, 1e-12))
        FAIL("that is a percentage: return the share itself (0.5 for half of T², not 50)");
    for (const WrongShare& wrong : wrongs) {
        const double wrong_share = wrong.share(T, W);
        if (!grading::close(wrong_share, want, 1e-12) && grading::close(got, wrong_share, 1e-12)) FAIL(wrong.diagnosis);
    }
    if (got == 0 && want > 0) FAIL("0: an integer count divided by the integer T² truncates to 0; divide as doubles");
    if (squared(T) > INT32_MAX && right_on_short_sequence())
        FAIL("right for short sequences but not for T = " << T << ", where T² = " << T * T
                                                          << " is more than 2^31: count in int64_t, a 32-bit int "
                                                             "overflows");
    FAIL("count the pairs exactly, then divide by T²");
}

const std::vector<WrongShare>& wrong_causal() {
    static const std::vector<WrongShare> all = {
        {[](int64_t, int64_t) { return 0.5; },
         "exactly half misses half of the diagonal: j <= t has T(T+1)/2 pairs, each query sees itself"},
        {[](int64_t T, int64_t) { return static_cast<double>(T) * static_cast<double>(T - 1) / 2 / squared(T); },
         "T(T-1)/2 leaves out the diagonal: j <= t includes j = t, each query sees itself"},
    };
    return all;
}

const std::vector<WrongShare>& wrong_window() {
    static const std::vector<WrongShare> all = {
        {[](int64_t T, int64_t W) { return static_cast<double>(T) * static_cast<double>(W) / squared(T); },
         "you gave every query W keys: query t sees min(t + 1, W), the first W - 1 queries see fewer"},
        {[](int64_t T, int64_t W) {
             return (static_cast<double>(T) * static_cast<double>(W) -
                     static_cast<double>(W) * static_cast<double>(W - 1) / 2) /
                    squared(T);
         },
         "for W > T your count is not clipped: a window longer than the sequence is the causal mask (query t "
         "sees its t + 1 keys), so take w = min(W, T)"},
        {[](int64_t T, int64_t W) {
             const double w = static_cast<double>(std::min(W, T));
             return (static_cast<double>(T) * w - w * (w + 1) / 2) / squared(T);
         },
         "TW - W(W+1)/2 counts min(t, W) keys for query t, leaving the query itself out: the window "
         "t - W < j <= t holds min(t + 1, W) keys"},
        {[](int64_t T, int64_t W) { return window_pairs(T, std::min(W, std::max<int64_t>(T - 1, 1))) / squared(T); },
         "a window of W >= T is the whole causal triangle: the last query sees all T keys, itself included, so "
         "clip W to T (not T - 1)"},
        {[](int64_t T, int64_t W) { return window_pairs(T, W / 2 + 1) / squared(T); },
         "you gave each query W/2 + 1 keys, the ½w + 1 of the two-sided Longformer width w (§6.1): here W is the "
         "number of keys a query sees, itself included"},
        {[](int64_t T, int64_t W) {
             const double w = static_cast<double>(std::min(W, T));
             return (static_cast<double>(T) * (2 * w - 1) - w * (w - 1)) / squared(T);
         },
         "you counted the pairs with |t - j| < W, on both sides of the diagonal: the window is causal, "
         "t - W < j <= t, only keys at or before the query"},
        {[](int64_t T, int64_t W) { return window_pairs(T, W - 1) / squared(T); },
         "you counted a window of W - 1 keys: a window of W sees W tokens, itself included (t - W < j <= t)"},
        {[](int64_t T, int64_t W) { return window_pairs(T, W + 1) / squared(T); },
         "you counted a window of W + 1 keys: a window of W sees W tokens, itself included (t - W < j <= t)"},
        {[](int64_t T, int64_t W) {
             return window_pairs(T, W) / (static_cast<double>(T) * static_cast<double>(T + 1) / 2);
         },
         "that is the share of the causal pairs: divide by all T² pairs"},
    };
    return all;
}

const std::vector<WrongShare>& wrong_chunked() {
    static const std::vector<WrongShare> all = {
        {[](int64_t T, int64_t W) { return static_cast<double>(T) * static_cast<double>(W) / squared(T); },
         "the chunks compute a W × 2W block for every W queries (their own chunk and the one before): 2TW "
         "scores, not TW"},
        {[](int64_t T, int64_t W) {
             return 2.0 * static_cast<double>(T) * static_cast<double>(W) /
                    (static_cast<double>(T) * static_cast<double>(T + 1) / 2);
         },
         "that is 2TW as a share of the causal pairs: divide by all T² pairs"},
        {[](int64_t T, int64_t W) {
             return (2.0 * static_cast<double>(T) * static_cast<double>(W) -
                     static_cast<double>(W) * static_cast<double>(W)) /
                    squared(T);
         },
         "2TW - W² gives the first chunk only its own W × W block: the header counts 2TW, a W × 2W block for "
         "every chunk (the first chunk's left half is masked)"},
    };
    return all;
}

// window_fractions(T, W) against the exact counts (`window_count` pairs in
// the window); chunked only where W <= T (2TW, as the header defines it).
void check_fractions(int64_t T, int64_t W, double window_count) {
    const ex05::Fractions got = ex05::window_fractions(T, W);
    const double all = squared(T);
    check_share("causal", got.causal, static_cast<double>(T) * static_cast<double>(T + 1) / 2 / all, T, W,
                wrong_causal());
    check_share("window", got.window, window_count / all, T, W, wrong_window());
    if (W <= T)
        check_share("chunked", got.chunked, 2.0 * static_cast<double>(T) * static_cast<double>(W) / all, T, W,
                    wrong_chunked());
}

}  // namespace

TEST_CASE("ex05 the lecture's T = 32,768 and W = 4096") {
    const ex05::Fractions f = ex05::window_fractions(32768, 4096);
    check_fractions(32768, 4096, window_pairs(32768, 4096));
    {
        INFO("(a) causal: T(T+1)/2 of T², about 50%");
        CHECK_CLOSE(f.causal, 0.5000152587890625, 1e-12);
    }
    {
        INFO("(b) window: (TW - W(W-1)/2) / T², about 11.7%");
        CHECK_CLOSE(f.window, 0.11718940734863281, 1e-12);
    }
    {
        INFO("(c) chunks: 2TW / T² = 2W/T = 25%");
        CHECK_CLOSE(f.chunked, 0.25, 1e-12);
    }
}

TEST_CASE("ex05 the shares count the mask's ones exactly, also for W > T") {
    for (int64_t T = 1; T <= 24; ++T)
        for (int64_t W = 1; W <= T + 4; ++W) {
            INFO("the mask t - W < j <= t of T = " << T << ", W = " << W << " has " << mask_ones(T, W) << " ones"
                                                   << (W >= T ? " (W >= T: the whole causal triangle)" : ""));
            check_fractions(T, W, static_cast<double>(mask_ones(T, W)));
        }
}

TEST_CASE("ex05 the edges: W = 1, W = T, T = 1") {
    for (const int64_t T : {1, 2, 5, 1000}) {
        const ex05::Fractions one = ex05::window_fractions(T, 1), full = ex05::window_fractions(T, T);
        {
            INFO("W = 1, T = " << T << ": each query sees only itself, T of T² pairs = 1/T; got " << one.window);
            CHECK_CLOSE(one.window, 1.0 / static_cast<double>(T), 1e-12);
        }
        {
            INFO("W = T = " << T << ": the window is the causal mask; got window " << full.window << ", causal "
                            << full.causal);
            CHECK_CLOSE(full.window, full.causal, 1e-12);
        }
    }
    const ex05::Fractions single = ex05::window_fractions(1, 1);
    INFO("T = W = 1: one pair, the query and itself: causal = window = 1, chunked 2TW/T² = 2");
    CHECK_CLOSE(single.causal, 1.0, 1e-12);
    CHECK_CLOSE(single.window, 1.0, 1e-12);
    CHECK_CLOSE(single.chunked, 2.0, 1e-12);
}

TEST_CASE("ex05 equals the exact counts on long sequences") {
    grading::Random rng(6);
    for (int n = 0; n < 300; ++n) {
        const int64_t T = rng.integer(1, 1 << 20), W = n % 5 ? rng.integer(1, T) : T + rng.integer(1, 5000);
        check_fractions(T, W, window_pairs(T, W));
        const ex05::Fractions got = ex05::window_fractions(T, W);
        const ref::Fractions want = ref::window_fractions(T, W);
        INFO("T = " << T << ", W = " << W << ": the reference's causal " << want.causal << ", window " << want.window);
        CHECK_CLOSE(got.causal, want.causal, 1e-12);
        CHECK_CLOSE(got.window, want.window, 1e-12);
    }
}
