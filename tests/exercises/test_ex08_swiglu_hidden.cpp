// Exercise 8 · SwiGLU's hidden size (§3.2, exercise 8): the lecture's sizes,
// the edges of "rounded up to a multiple" (8d/3 already a multiple, a
// multiple larger than 8d/3, multiple 1), then for many d and multiples
// the three properties that define the answer — a multiple, at least the
// GELU MLP's 8d² weights, the smallest such — and the reference. Diagnoses
// rounding down or to the nearest multiple, truncating 8d/3 before
// rounding, a step added to an exact multiple, d_ff = 4d/3 and counting
// biases.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "exercises/ex08_swiglu_hidden.h"
#include "grading_checks.h"
#include "reference/ex08_swiglu_hidden.h"

namespace ref = ex08_reference;

namespace {

// §3.2: 3·d·d_ff = 2·d·4d, so d_ff = 8d/3; with the multiple m, the
// smallest multiple of m that is >= 8d/3 (integers: 3·d_ff >= 8d).
std::string why(int64_t d, int64_t m) {
    std::ostringstream out;
    out << "d = " << d << ", multiple " << m << ": 8d/3 = " << 8.0 * static_cast<double>(d) / 3.0
        << " (a GELU MLP's 2·d·4d weights spread over SwiGLU's three d × d_ff matrices), rounded UP to a multiple of "
        << m << " is " << ref::swiglu_hidden(d, m);
    return out.str();
}

// The smallest multiple of m that is >= a / b (positive integers).
int64_t up_to_multiple(int64_t a, int64_t b, int64_t m) { return (a + b * m - 1) / (b * m) * m; }

// The wrong turns that explain `got` for (d, m), "" when none does (all of
// them when several give the same number); with named_only, only the named
// slips, not the broken property.
std::string diagnosis(int64_t d, int64_t m, int64_t got, bool named_only = false) {
    const int64_t want = ref::swiglu_hidden(d, m);
    if (got == want) return "";
    std::string slips;
    const auto slip = [&](bool explains, const std::string& message) {
        if (explains) slips += (slips.empty() ? "" : "; or ") + message;
    };
    if (d < (int64_t{1} << 28))
        slip(got == up_to_multiple(8 * d * d, 3, m),
             "your d_ff is 8d²/3: each SwiGLU matrix is d × d_ff and holds d·d_ff weights, so 3·d·d_ff = 2·d·4d "
             "gives d_ff = 8d/3");
    slip(got == up_to_multiple(4 * d, 3, m),
         "you divided the GELU MLP's hidden 4d by 3: match the WEIGHTS, 3·d·d_ff = 2·d·4d, so d_ff = 8d/3");
    slip(m > 1 && got == want + m && (8 * d) % (3 * m) == 0,
         "8d/3 is already a multiple of " + std::to_string(m) + " here: rounding up leaves it as it is");
    slip(got == up_to_multiple((8 * d) / 3, 1, m),
         "you truncated 8d/3 to the integer " + std::to_string((8 * d) / 3) +
             " before rounding up, which already rounds down: round 8d/3 itself up (3·d_ff >= 8d)");
    // With biases: 2·d·4d + 4d + d = 3·d·d_ff + 2·d_ff + d.
    slip(got == up_to_multiple(8 * d * d + 4 * d, 3 * d + 2, m),
         "you counted biases: the statement compares the matrices' weights, 3·d·d_ff = 2·d·4d "
         "(the lecture's models have no biases, §3.2)");
    const int64_t ceil_8d_3 = (8 * d + 2) / 3;
    slip((m & (m - 1)) != 0 && got == ((ceil_8d_3 + m - 1) & ~(m - 1)),
         "(x + m - 1) & ~(m - 1) rounds up to a multiple of m only when m is a power of two; " + std::to_string(m) +
             " is not: round up with division, ceil(x / m)·m");
    if (!slips.empty() || named_only) return slips;
    if (got % m != 0) return "your d_ff is not a multiple of " + std::to_string(m);
    if (3 * got < 8 * d)
        return "your d_ff is below 8d/3, so SwiGLU has fewer weights than the GELU MLP (3·d·d_ff < 8d²): round UP";
    if (got > want)
        return "a smaller multiple of " + std::to_string(m) + " already has 3·d·d_ff >= 8d²: take the SMALLEST one";
    return "";
}

void check_hidden(int64_t d, int64_t m) {
    const int64_t got = ex08::swiglu_hidden(d, m);
    INFO(why(d, m) << "; got " << got);
    const std::string wrong = diagnosis(d, m, got);
    if (!wrong.empty()) FAIL(wrong);
    CHECK(got == ref::swiglu_hidden(d, m));
}

}  // namespace

TEST_CASE("ex08 the lecture's sizes: Llama 2 7B's 11,008 and ModernLM's 172") {
    check_hidden(4096, 256);  // 10,922.7 -> 11,008
    check_hidden(64, 4);      // 170.7 -> 172
    check_hidden(4096, 1);    // no rounding beyond the integer: 10,923
}

TEST_CASE("ex08 the edges of rounding up: exact multiples stay, a large multiple, d = 1") {
    check_hidden(3, 4);     // 8 exactly, already a multiple of 4 ...
    check_hidden(3, 8);     // ... and of 8
    check_hidden(6, 16);    // 16 exactly
    check_hidden(48, 128);  // 128 exactly
    check_hidden(1, 1);     // 2.67 -> 3
    check_hidden(1, 256);   // a multiple larger than 8d/3: one multiple
    check_hidden(100, 1000);
}

TEST_CASE("ex08 many d and multiples: a multiple, at least 8d² weights, the smallest such") {
    grading::Random rng(11);
    for (int n = 0; n < 500; ++n) {
        const int64_t d = n % 7 == 0 ? 3 * rng.integer(1, 5000) : rng.integer(1, 20000);
        const int64_t m = n % 5 == 0 ? 1 : n % 5 == 1 ? int64_t{1} << rng.integer(1, 9) : rng.integer(1, 512);
        const int64_t got = ex08::swiglu_hidden(d, m);
        INFO(why(d, m) << "; got " << got);
        const std::string wrong = diagnosis(d, m, got);
        if (!wrong.empty()) FAIL(wrong);
        INFO("a multiple of " << m);
        REQUIRE(got % m == 0);
        INFO("SwiGLU's 3·d·d_ff weights at least the GELU MLP's 8d²");
        REQUIRE(3 * got >= 8 * d);
        INFO("the smallest such multiple: d_ff - multiple must be below 8d/3");
        REQUIRE(3 * (got - m) < 8 * d);
        REQUIRE(got == ref::swiglu_hidden(d, m));
    }
}

// "In integer arithmetic": d is an int64_t; at large d a float (24 bits)
// rounds the fraction of 8d/3 away, and 8·d no longer fits in 32 bits. The
// sizes stay where 3·d·d_ff fits in 64 bits and a walk up the multiples
// ends quickly.
TEST_CASE("ex08 large d: exact in 64-bit integers") {
    const int64_t big[][2] = {{int64_t{1} << 22, 1},
                              {(int64_t{1} << 22) + 1, 1},
                              {(int64_t{1} << 24) + 2, 7},
                              {(int64_t{1} << 28) + 1, 256},
                              {1000000007, 1024}};
    for (const auto& dm : big) {
        const int64_t d = dm[0], m = dm[1];
        const int64_t got = ex08::swiglu_hidden(d, m), want = ref::swiglu_hidden(d, m);
        INFO(why(d, m) << "; got " << got);
        if (got != want) {
            const double dd = static_cast<double>(d), dm_ = static_cast<double>(m);
            const float fd = static_cast<float>(d), fm = static_cast<float>(m);
            if (got == static_cast<int64_t>(std::ceil(8.0f * fd / 3.0f / fm)) * m ||
                got == static_cast<int64_t>(std::ceil(8.0f * fd / (3.0f * fm))) * m ||
                got == static_cast<int64_t>(std::ceil(8.0 * dd / (3.0 * dm_))) * m)
                FAIL(
                    "your result is what floating point gives: at this d it rounds away the fraction of 8d/3; "
                    "compute in integers, as the statement asks (3·d_ff >= 8d)");
            if (got <= 0 || got < want / 2 || got > 2 * want)
                FAIL("far off at this d: did something overflow? 8·d = " << 8 * d
                                                                         << " needs 64 bits: keep the arithmetic in "
                                                                            "int64_t");
            const std::string wrong = diagnosis(d, m, got);
            if (!wrong.empty()) FAIL(wrong);
        }
        CHECK(got == want);
    }
}
