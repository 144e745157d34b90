// Exercise 2 · RoPE's range of speeds (§4.5): θ_i = base^(-2i/d) and the
// periods, against the reference and the lecture's numbers.
#include "exercises/ex02_rope_frequencies.h"
#include "grading_checks.h"
#include "reference/ex02_rope_frequencies.h"

namespace ref = ex02_reference;

TEST_CASE("ex02 the lecture's numbers for d = 128") {
    const std::vector<double> thetas = ex02::rope_thetas(128, 10000.0);
    REQUIRE(thetas.size() == 64);
    UNSCOPED_INFO("the fastest pair turns 1 radian per position (i = 0 gives base^0)");
    CHECK_CLOSE(thetas.front(), 1.0, 1e-12);
    CHECK_CLOSE(ex02::period(thetas.front()), 2 * M_PI, 1e-12);
    UNSCOPED_INFO("the slowest pair: 10000^(-126/128) ≈ 1.15e-4, one turn in ≈ 54,410 positions");
    CHECK_CLOSE(thetas.back(), 1.1547819846894583e-4, 1e-9);
    CHECK(std::round(ex02::period(thetas.back())) == 54410);
    const std::vector<double> llama = ex02::rope_thetas(128, 500000.0);
    UNSCOPED_INFO("base 500,000 (Llama 3): the slowest period is ≈ 2.56 million positions");
    CHECK(std::fabs(ex02::period(llama.back()) - 2.56e6) < 0.01e6);
}

TEST_CASE("ex02 rope_thetas and period equal the reference") {
    grading::Random rng(3);
    for (int n = 0; n < 100; ++n) {
        const int64_t d = 2 * rng.integer(1, 128);
        const double base = rng.uniform(2.0, 1e6);
        INFO("d = " << d << ", base = " << base);
        const std::vector<double> got = ex02::rope_thetas(d, base), want = ref::rope_thetas(d, base);
        REQUIRE(got.size() == want.size());
        if (!got.empty() && grading::close(got[0], std::pow(base, -2.0 / static_cast<double>(d)), 1e-9))
            FAIL("your first θ is base^(-2/d): i starts at 0, so θ_0 = 1");
        if (got.size() > 1 && grading::close(got[1], std::pow(base, -1.0 / static_cast<double>(d)), 1e-9))
            FAIL("your θ_1 is base^(-1/d): the exponent is -2i/d (pairs, not dimensions)");
        for (size_t i = 0; i < got.size(); ++i) {
            INFO("θ_" << i);
            CHECK_CLOSE(got[i], want[i], 1e-12);
        }
        const double theta = rng.uniform(1e-7, 3.0);
        CHECK_CLOSE(ex02::period(theta), ref::period(theta), 1e-12);
    }
}
