// Exercise 1 · RoPE by hand (§4.4): the student's rotate() and rope_score()
// against the reference and the lecture's numbers, for every integer
// position (negative turns too, keys after the query too). Diagnoses the
// usual wrong turns: rotating clockwise, treating a negative m as no turn or
// as |m|, a rotation that changes lengths, and scores that are not
// (R_t q)·(R_j k): only one vector rotated, both by t - j (the §4.3 slide),
// the positions swapped, the key turned back, a factor cos((t - j)θ) or
// 1/√2 on the score; a wrong score behind a wrong rotate() names the
// rotation (a float angle too, a position past 2^24 rounded to float, and
// a θ kept from an earlier call).
#include <functional>
#include <iomanip>
#include <string>
#include <vector>

#include "exercises/ex01_rope_by_hand.h"
#include "grading_checks.h"
#include "reference/ex01_rope_by_hand.h"

namespace ref = ex01_reference;
using ex01::Vec2;

namespace {

// Every θ the tests gave the student's functions so far, in the order of
// the calls: a result that is R_m x for an earlier call's θ has kept
// something of that call.
std::vector<double>& thetas_given() {
    static std::vector<double> thetas;
    return thetas;
}
Vec2 student_rotate(const Vec2& x, int64_t m, double theta) {
    thetas_given().push_back(theta);
    return ex01::rotate(x, m, theta);
}
double student_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    thetas_given().push_back(theta);
    return ex01::rope_score(q, t, k, j, theta);
}
// An earlier call's θ (not `theta`) for which `matches` holds, or NaN.
double earlier_theta(double theta, const std::function<bool(double)>& matches) {
    for (const double earlier : thetas_given())
        if (earlier != theta && matches(earlier)) return earlier;
    return NAN;
}

double dot(const Vec2& a, const Vec2& b) { return a[0] * b[0] + a[1] * b[1]; }
double norm(const Vec2& a) { return std::sqrt(dot(a, a)); }
bool same(const Vec2& a, const Vec2& b, double tol = 1e-9) {
    return grading::close(a[0], b[0], tol) && grading::close(a[1], b[1], tol);
}

// What rotate(x, m, θ) returns under a wrong idea of R_m, and what that
// idea is; diagnosed only where it differs from R_m x.
struct WrongRotation {
    std::function<Vec2(const Vec2&, int64_t, double)> rotate;
    const char* diagnosis;
};

const std::vector<WrongRotation>& wrong_rotations() {
    static const std::vector<WrongRotation> all = {
        {[](const Vec2& x, int64_t m, double th) { return ref::rotate(x, -m, th); },
         "you rotated clockwise: R_m = [[cos mθ, -sin mθ], [sin mθ, cos mθ]] turns [1, 0] towards [0, 1] "
         "for m > 0"},
        {[](const Vec2& x, int64_t m, double th) { return ref::rotate(x, m < 0 ? -m : m, th); },
         "for m < 0 you turned by |m|θ: R_m turns by mθ, so a negative m turns clockwise (R_{-m} = R_mᵀ)"},
    };
    return all;
}

// The same for rope_score(q, t, k, j, θ).
struct WrongScore {
    std::function<double(const Vec2&, int64_t, const Vec2&, int64_t, double)> score;
    const char* diagnosis;
};

const std::vector<WrongScore>& wrong_scores() {
    static const std::vector<WrongScore> all = {
        {[](const Vec2& q, int64_t, const Vec2& k, int64_t, double) { return dot(q, k); },
         "your score is q·k, as if nothing were rotated: turning both vectors by the same angle cancels in the "
         "dot product (R_mᵀR_m = I, the §4.3 slide); q turns by its own position t and k by its own j"},
        {[](const Vec2& q, int64_t t, const Vec2& k, int64_t, double th) { return dot(ref::rotate(q, t, th), k); },
         "your score is (R_t q)·k: the key is rotated too, by its own position j"},
        {[](const Vec2& q, int64_t, const Vec2& k, int64_t j, double th) { return dot(q, ref::rotate(k, j, th)); },
         "your score is q·(R_j k): the query is rotated too, by its own position t"},
        {[](const Vec2& q, int64_t t, const Vec2& k, int64_t j, double th) {
             return dot(ref::rotate(q, j, th), ref::rotate(k, t, th));
         },
         "your score is (R_j q)·(R_t k), the relative angle with the wrong sign: the score is "
         "q·R_{j-t}k = (R_{t-j}q)·k (the query turns by t, the key by j), and it depends on t - j, not |t - j|"},
        {[](const Vec2& q, int64_t t, const Vec2& k, int64_t j, double th) {
             return std::cos(static_cast<double>(t - j) * th) * dot(q, k);
         },
         "your score is cos((t - j)θ)·(q·k): a rotation also mixes the two components (the sin terms), it is "
         "not a scale factor on q·k"},
        {[](const Vec2& q, int64_t t, const Vec2& k, int64_t j, double th) {
             return dot(ref::rotate(q, t, th), ref::rotate(k, -j, th));
         },
         "your score is (R_t q)·(R_{-j} k), the key turned back by jθ: each vector turns forward by its own "
         "position; the transpose in R_jᵀR_t = R_{t-j} comes from the dot product itself"},
        {[](const Vec2& q, int64_t t, const Vec2& k, int64_t j, double th) {
             return ref::rope_score(q, t, k, j, th) / std::sqrt(2.0);
         },
         "your score is (R_t q)·(R_j k) / √2: the score asked for here is the plain dot product q̃_t·k̃_j, "
         "without the 1/√d_k of the attention layer"},
    };
    return all;
}

// rotate(x, m, θ) against R_m x (within tol); FAILs with the diagnosis of a
// known wrong idea when the answer is that idea's.
void check_rotate(const Vec2& x, int64_t m, double theta, double tol = 1e-9) {
    const Vec2 got = student_rotate(x, m, theta), want = ref::rotate(x, m, theta);
    INFO(std::setprecision(12) << "rotate(x = " << grading::str(x) << ", m = " << m << ", θ = " << theta
                               << "): expected R_m x = " << grading::str(want) << ", got " << grading::str(got));
    if (same(got, want, tol)) return;
    if (same(got, x)) {
        FAIL((m < 0 ? "x came back unturned: a negative m turns by mθ < 0 (clockwise, R_{-m} = R_mᵀ)"
                    : "x came back unturned: R_m turns x by the angle mθ"));
    }
    for (const WrongRotation& wrong : wrong_rotations())
        if (same(got, wrong.rotate(x, m, theta))) FAIL(wrong.diagnosis);
    // A float holds every integer only up to 2^24 = 16777216: past it the
    // position itself is rounded, and the turn is off by whole radians.
    const auto m_as_float = static_cast<int64_t>(static_cast<float>(m));
    if (m_as_float != m && same(got, ref::rotate(x, m_as_float, theta), tol))
        FAIL("the position went through a float: a float holds the integers exactly only up to 2^24 = 16777216, so m = "
             << m << " became " << m_as_float << " and the turn is " << m - m_as_float << "·θ short; convert m to "
             << "double (exact up to 2^53): static_cast<double>(m) * θ");
    const double stale =
        earlier_theta(theta, [&](double earlier) { return same(got, ref::rotate(x, m, earlier), tol); });
    if (!std::isnan(stale))
        FAIL("θ changed between calls, and your rotate() still turned by m·θ for θ = "
             << stale << ", the θ of an earlier call, not this call's θ = " << theta
             << ": something keeps θ (or cos θ, sin θ) from one call to the next; do not cache it across calls, "
             << "rotate() depends on its arguments only");
    if (same(got, want, 1e-5))
        FAIL(
            "R_m x is right to only about 6 digits: compute the angle mθ, its cos and its sin in double (a float "
            "angle loses the fraction of a turn at large m)");
    if (!grading::close(norm(got), norm(x), 1e-9))
        FAIL("|R_m x| must equal |x| = " << norm(x) << " (a rotation keeps the length), got " << norm(got));
    FAIL("rotate() is not R_m x = [x0 cos mθ - x1 sin mθ, x0 sin mθ + x1 cos mθ]");
}

// rope_score against (R_t q)·(R_j k) (within tol), with diagnoses as above.
void check_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta, double tol = 1e-9) {
    const double got = student_score(q, t, k, j, theta), want = ref::rope_score(q, t, k, j, theta);
    INFO(std::setprecision(12) << "rope_score(q = " << grading::str(q) << ", t = " << t << ", k = " << grading::str(k)
                               << ", j = " << j << ", θ = " << theta << "): expected (R_t q)·(R_j k) = " << want
                               << ", got " << got);
    if (grading::close(got, want, tol)) return;
    // A wrong score often comes from a wrong rotate(): name that first.
    if (!same(student_rotate(q, t, theta), ref::rotate(q, t, theta), tol)) {
        INFO("the score is wrong, and so is your R_t q:");
        check_rotate(q, t, theta, tol);
    }
    if (!same(student_rotate(k, j, theta), ref::rotate(k, j, theta), tol)) {
        INFO("the score is wrong, and so is your R_j k:");
        check_rotate(k, j, theta, tol);
    }
    for (const WrongScore& wrong : wrong_scores())
        if (grading::close(got, wrong.score(q, t, k, j, theta), 1e-9)) FAIL(wrong.diagnosis);
    const double stale = earlier_theta(
        theta, [&](double earlier) { return grading::close(got, ref::rope_score(q, t, k, j, earlier), tol); });
    if (!std::isnan(stale))
        FAIL("θ changed between calls, and your rope_score() still used θ = "
             << stale << " of an earlier call, "
             << "not this call's θ = " << theta << ": something keeps θ from one call to the next; do not cache "
             << "it across calls, the score depends on its arguments only");
    if (j > t)
        FAIL(
            "the score is the dot product of R_t q and R_j k; here the key comes after the query, so the relative "
            "angle (t - j)θ is negative");
    FAIL("the score is the dot product of R_t q and R_j k");
}

Vec2 random_vec(grading::Random& rng) { return {rng.normal(), rng.normal()}; }

}  // namespace

TEST_CASE("ex01 the lecture's numbers: 0.5403 at (1, 0) and at (5, 4)") {
    const Vec2 q{1, 0}, k{1, 0};
    {
        INFO("q = k = [1, 0], θ = 1, (t, j) = (1, 0): R_1 q = [cos 1, sin 1], R_0 k = k, the score is cos 1 ≈ 0.5403");
        check_score(q, 1, k, 0, 1.0);
    }
    {
        INFO("(t, j) = (5, 4): R_4ᵀR_5 = R_1, so the same 0.5403 as at (1, 0)");
        check_score(q, 5, k, 4, 1.0);
    }
    for (int64_t t = 0; t < 20; ++t)
        for (int64_t j = 0; j < 20; ++j) {
            INFO("q = k = [1, 0], θ = 1: the score is cos(t - j)");
            check_score(q, t, k, j, 1.0);
        }
}

TEST_CASE("ex01 rotate() is R_m x, counter-clockwise, for every integer m") {
    {
        const Vec2 got = student_rotate({1, 0}, 1, M_PI / 2);
        INFO("a quarter turn counter-clockwise takes [1, 0] to [0, 1]");
        check_rotate({1, 0}, 1, M_PI / 2);
        CHECK(same(got, {0, 1}, 1e-12));
    }
    // m = 0 is no turn, m < 0 turns clockwise, and large m as well.
    for (const int64_t m : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{-7}, int64_t{3000}, int64_t{-3000}})
        check_rotate({0.6, -0.8}, m, 0.3);
    grading::Random rng(1);
    for (int n = 0; n < 200; ++n) check_rotate(random_vec(rng), rng.integer(-60, 60), rng.uniform(0.01, 2.0));
}

TEST_CASE("ex01 positions past 2^24: a long document's last tokens") {
    // Any integer m (§4.7: RoPE has no max_len). A float holds the integers
    // exactly only up to 2^24 = 16777216, a double up to 2^53: at m =
    // 16777217 a position rounded to float turns 1 rad short with θ = 1.
    // (An angle mθ near 10^7 is itself good to only ~1e-9 rad in double,
    // however it is computed: the tolerance here is 1e-7.)
    const int64_t far = (int64_t{1} << 24) + 1;
    {
        INFO("rotate([1, 0], m = 2^24 + 1 = " << far << ", θ = 1) = [cos m, sin m]");
        check_rotate({1, 0}, far, 1.0, 1e-7);
    }
    check_rotate({0.6, -0.8}, far + 2, 0.5, 1e-7);
    {
        INFO("q = k = [1, 0], θ = 1, (t, j) = (2^24 + 1, 2^24): one position apart, the lecture's cos 1 ≈ 0.5403");
        check_score({1, 0}, far, {1, 0}, far - 1, 1.0, 1e-7);
    }
}

TEST_CASE("ex01 rope_score() is (R_t q)·(R_j k) and depends only on t - j") {
    grading::Random rng(2);
    for (int n = 0; n < 200; ++n) {
        const Vec2 q = random_vec(rng), k = random_vec(rng);
        const int64_t t = rng.integer(0, 2000), j = rng.integer(0, t), shift = rng.integer(1, 1000);
        const double theta = rng.uniform(0.01, 2.0);
        check_score(q, t, k, j, theta);
        const double got = student_score(q, t, k, j, theta), shifted = student_score(q, t + shift, k, j + shift, theta);
        INFO("q = " << grading::str(q) << ", k = " << grading::str(k) << ", θ = " << theta << ": the score at (" << t
                    << ", " << j << ") is " << got << " but at (" << t + shift << ", " << j + shift << ") " << shifted
                    << "; shifting both positions must not change it (R_jᵀR_t = R_{t-j})");
        CHECK(grading::close(shifted, got, 1e-9));
    }
}

TEST_CASE("ex01 rope_score() for a key after the query (j > t) and at equal positions") {
    // Nothing in (R_t q)·(R_j k) needs j <= t (an encoder's query also looks
    // at later keys): the score depends on t - j, which is then negative.
    grading::Random rng(3);
    for (int n = 0; n < 100; ++n) {
        const Vec2 q = random_vec(rng), k = random_vec(rng);
        const int64_t t = rng.integer(0, 500), j = t + rng.integer(1, 500);
        check_score(q, t, k, j, rng.uniform(0.01, 2.0));
    }
    for (int n = 0; n < 20; ++n) {
        const Vec2 q = random_vec(rng), k = random_vec(rng);
        const int64_t t = rng.integer(0, 500);
        INFO("at t = j the rotations cancel: the score is q·k");
        check_score(q, t, k, t, rng.uniform(0.01, 2.0));
    }
}
