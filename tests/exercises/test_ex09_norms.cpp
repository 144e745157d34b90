// Exercise 9 · RMSNorm vs LayerNorm (§3.2): the lecture's example, the
// reference, and the usual slips (the unbiased variance, eps outside the
// square root).
#include "exercises/ex09_norms.h"
#include "grading_checks.h"
#include "reference/ex09_norms.h"

namespace ref = ex09_reference;

namespace {

bool same(const std::vector<double>& a, const std::vector<double>& b, double tol = 1e-12) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!grading::close(a[i], b[i], tol)) return false;
    return true;
}

}  // namespace

TEST_CASE("ex09 the lecture's x = [1, 2, 3, 4]") {
    const std::vector<double> x{1, 2, 3, 4};
    const std::vector<double> rms = ex09::rms_norm(x, 0.0), ln = ex09::layer_norm(x, 0.0);
    INFO("RMSNorm: rms = sqrt(7.5) = 2.7386, x / rms = [0.365, 0.730, 1.095, 1.461]; got " << grading::str(rms));
    REQUIRE(rms.size() == 4);
    for (int i = 0; i < 4; ++i) CHECK_CLOSE(rms[i], (i + 1) / std::sqrt(7.5), 1e-12);
    INFO("LayerNorm: mean 2.5, std 1.118: [-1.342, -0.447, 0.447, 1.342]; got " << grading::str(ln));
    REQUIRE(ln.size() == 4);
    for (int i = 0; i < 4; ++i) CHECK_CLOSE(ln[i], (i + 1 - 2.5) / std::sqrt(1.25), 1e-12);
}

TEST_CASE("ex09 both equal the reference on random vectors") {
    grading::Random rng(12);
    for (int n = 0; n < 300; ++n) {
        std::vector<double> x(static_cast<size_t>(rng.integer(2, 64)));
        const double shift = rng.uniform(-3, 3);
        for (double& v : x) v = rng.normal() + shift;
        const double eps = n % 3 == 0 ? 0.0 : rng.uniform(1e-6, 1.0);
        INFO("x = " << grading::str(x) << ", eps = " << eps);
        const std::vector<double> rms = ex09::rms_norm(x, eps), ln = ex09::layer_norm(x, eps);
        const std::vector<double> want_rms = ref::rms_norm(x, eps), want_ln = ref::layer_norm(x, eps);
        INFO("RMSNorm expected " << grading::str(want_rms) << "\n got " << grading::str(rms));
        CHECK(same(rms, want_rms));
        INFO("LayerNorm expected " << grading::str(want_ln) << "\n got " << grading::str(ln));
        // The unbiased variance (divide by n - 1) scales every output by sqrt((n-1)/n).
        const double n_x = static_cast<double>(x.size());
        if (eps == 0.0 && grading::close(ln.at(0), want_ln[0] * std::sqrt((n_x - 1.0) / n_x)))
            FAIL("you used the unbiased variance (÷ n-1); LayerNorm uses the biased one (÷ n)");
        CHECK(same(ln, want_ln));
    }
}

TEST_CASE("ex09 RMSNorm equals LayerNorm when the mean is zero") {
    grading::Random rng(13);
    for (int n = 0; n < 50; ++n) {
        std::vector<double> x(16);
        double mean = 0;
        for (double& v : x) mean += (v = rng.normal()) / 16;
        for (double& v : x) v -= mean;
        CHECK(same(ex09::rms_norm(x, 1e-5), ex09::layer_norm(x, 1e-5), 1e-9));
    }
}
