// Exercise 8 · SwiGLU's hidden size (§3.2): the lecture's sizes and the
// reference.
#include "exercises/ex08_swiglu_hidden.h"
#include "grading_checks.h"
#include "reference/ex08_swiglu_hidden.h"

namespace ref = ex08_reference;

TEST_CASE("ex08 the lecture's sizes") {
    UNSCOPED_INFO("d = 4096: 8·4096/3 = 10,922.7, rounded up to a multiple of 256: Llama 2 7B's 11,008");
    CHECK(ex08::swiglu_hidden(4096, 256) == 11008);
    UNSCOPED_INFO("d = 64: 8·64/3 = 170.7, rounded up to a multiple of 4: ModernLM's 172");
    CHECK(ex08::swiglu_hidden(64, 4) == 172);
    UNSCOPED_INFO("d = 3: 8 exactly, already a multiple of 4 and of 8");
    CHECK(ex08::swiglu_hidden(3, 4) == 8);
    CHECK(ex08::swiglu_hidden(3, 8) == 8);
}

TEST_CASE("ex08 equals the reference: the smallest multiple with at least a GELU MLP's weights") {
    grading::Random rng(11);
    for (int n = 0; n < 500; ++n) {
        const int64_t d = rng.integer(1, 20000), m = n % 5 == 0 ? 1 : rng.integer(1, 512);
        const int64_t got = ex08::swiglu_hidden(d, m), want = ref::swiglu_hidden(d, m);
        INFO("d = " << d << ", multiple " << m << ": expected " << want << ", got " << got);
        if (got == want - m) FAIL("you rounded down: round UP, so SwiGLU has at least the GELU MLP's weights");
        CHECK(got == want);
        CHECK(got % m == 0);
        CHECK(3 * got >= 8 * d);
    }
}
