// §4 RoPE: the op against the full block-diagonal rotation matrix R_{Θ,m},
// the two pairings as one rotation up to a permutation of dims, the
// properties the lecture relies on (scores depend only on t - j, norms are
// kept, position 0 is the identity, Rᵀ undoes R), gradients, and errors.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/ranges.h>

#include "engine/helpers.h"

using ag::RopePairing;
using ag::Shape;
using ag::Tensor;
using Catch::Contains;
using In = std::vector<Tensor>;
using Positions = std::vector<int64_t>;

namespace {

const char* name_of(RopePairing p) { return p == RopePairing::Half ? "Half" : "Interleaved"; }

// R_{Θ,m} [dh, dh], row-major, built entry by entry: pair i = (a, b) is
// (i, i + dh/2) for Half and (2i, 2i+1) for Interleaved, and
//   [R_aa R_ab; R_ba R_bb] = [cos mθ_i  -sin mθ_i; sin mθ_i  cos mθ_i],  θ_i = base^(-2i/dh).
std::vector<double> rotation_matrix(int64_t m, int64_t dh, double base, RopePairing pairing) {
    std::vector<double> R(static_cast<size_t>(dh * dh), 0.0);
    const auto at = [&](int64_t r, int64_t c) -> double& { return R[static_cast<size_t>(r * dh + c)]; };
    for (int64_t i = 0; i < dh / 2; ++i) {
        const double angle =
            static_cast<double>(m) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(dh));
        const int64_t a = pairing == RopePairing::Half ? i : 2 * i;
        const int64_t b = pairing == RopePairing::Half ? i + dh / 2 : 2 * i + 1;
        at(a, a) = std::cos(angle);
        at(a, b) = -std::sin(angle);
        at(b, a) = std::sin(angle);
        at(b, b) = std::cos(angle);
    }
    return R;
}

// y = R_{Θ, positions[t]} x for every head vector of x [..., T, H, dh]: the dense O(dh²) way.
Tensor rotate_by_matrix(const Tensor& x, const Positions& positions, double base, RopePairing pairing) {
    const int64_t T = x.size(-3), H = x.size(-2), dh = x.size(-1);
    const std::vector<double> xv = x.to_vector();
    std::vector<double> y(xv.size(), 0.0);
    for (int64_t r = 0; r < x.numel() / dh; ++r) {
        const std::vector<double> R = rotation_matrix(positions[static_cast<size_t>((r / H) % T)], dh, base, pairing);
        for (int64_t i = 0; i < dh; ++i) {
            double sum = 0.0;
            for (int64_t j = 0; j < dh; ++j)
                sum += R[static_cast<size_t>(i * dh + j)] * xv[static_cast<size_t>(r * dh + j)];
            y[static_cast<size_t>(r * dh + i)] = sum;
        }
    }
    return Tensor::from(x.shape(), y);
}

const RopePairing kPairings[] = {RopePairing::Half, RopePairing::Interleaved};

}  // namespace

TEST_CASE("rope equals multiplying every head vector by the rotation matrix R_{Θ,m}", "[rope]") {
    ag::Generator gen(21);
    struct Case {
        Shape shape;
        Positions positions;
        double base;
    };
    const std::vector<Case> cases = {
        {{5, 3, 8}, {0, 1, 7, -3, 1000}, 10000.0},
        {{2, 5, 3, 8}, {4, 0, 2, 39, 123456}, 10000.0},
        {{2, 5, 3, 8}, {4, 0, 2, 39, 123456}, 100.0},
        {{2, 2, 4, 1, 6}, {3, 1, 4, 1}, 10000.0},
        {{1, 3, 2, 64}, {0, 39, 12345}, 10000.0},
        {{3, 2, 1, 2}, {5, -7}, 10000.0},
        {{0, 3, 8}, {}, 10000.0},
        {{2, 0, 8}, {3, 4}, 10000.0},  // no rows: T or H is 0
    };
    for (const Case& c : cases) {
        for (const RopePairing pairing : kPairings) {
            const std::string name = fmt::format("{} x {} positions {} base {}", name_of(pairing),
                                                 ag::shape_str(c.shape), test::positions_str(c.positions), c.base);
            const Tensor x = test::rand_t(c.shape, gen, -2, 2, false);
            test::check_close(name, ag::rope(x, c.positions, c.base, pairing),
                              rotate_by_matrix(x, c.positions, c.base, pairing), 1e-15);
        }
    }
    // the default is Half with base 10000
    const Tensor x = test::rand_t({2, 3, 2, 8}, gen);
    test::check_close("default arguments", ag::rope(x, {1, 2, 30}),
                      rotate_by_matrix(x, {1, 2, 30}, 10000.0, RopePairing::Half), 1e-15);
}

TEST_CASE("Half and Interleaved are the same rotation after permuting the dims", "[rope]") {
    // dims of the interleaved layout 2i, 2i+1 are dims i, i + dh/2 of the half layout
    ag::Generator gen(22);
    for (const int64_t dh : {2, 8, 16}) {
        std::vector<double> perm(static_cast<size_t>(dh));  // half-layout dim j <- interleaved dim perm[j]
        for (int64_t i = 0; i < dh / 2; ++i) {
            perm[static_cast<size_t>(i)] = static_cast<double>(2 * i);
            perm[static_cast<size_t>(i + dh / 2)] = static_cast<double>(2 * i + 1);
        }
        const Tensor to_half = Tensor::from({dh}, perm);
        const Tensor x_inter = test::rand_t({2, 5, 3, dh}, gen, -1, 1, false);
        const Tensor x_half = ag::index_select(x_inter, 3, to_half);
        const Positions pos{0, 3, 11, 250, 7};
        const Tensor y_inter = ag::rope(x_inter, pos, 10000.0, RopePairing::Interleaved);
        const Tensor y_half = ag::rope(x_half, pos, 10000.0, RopePairing::Half);
        const double diff = ag::max_abs_diff(y_half, ag::index_select(y_inter, 3, to_half));
        INFO("dh " << dh << ": max |Half(P x) - P Interleaved(x)| = " << diff);
        CHECK(diff == 0.0);
        // and the two pairings do differ without the permutation (for dh = 2 they coincide)
        if (dh > 2) CHECK(ag::max_abs_diff(y_inter, ag::rope(x_inter, pos, 10000.0, RopePairing::Half)) > 1e-3);
    }
}

TEST_CASE("rope scores depend only on t - j", "[rope]") {
    ag::Generator gen(23);
    const int64_t dh = 16;
    const Tensor q = test::rand_t({1, 1, 1, dh}, gen, -1, 1, false);
    const Tensor k = test::rand_t({1, 1, 1, dh}, gen, -1, 1, false);
    for (const RopePairing pairing : kPairings) {
        // (R_t q)·(R_j k)
        const auto score = [&](int64_t t, int64_t j) {
            return ag::sum(ag::rope(q, {t}, 10000.0, pairing) * ag::rope(k, {j}, 10000.0, pairing)).item();
        };
        for (const auto& [t, j] :
             std::vector<std::pair<int64_t, int64_t>>{{5, 2}, {2, 5}, {17, 3}, {40, 40}, {0, 39}}) {
            const double s0 = score(t, j), s100 = score(t + 100, j + 100), s1000 = score(t + 1000, j + 1000);
            INFO(name_of(pairing) << ": score at (" << t << ", " << j << ") = " << fmt::format("{:.17g}", s0)
                                  << ", at +100 " << fmt::format("{:.17g}", s100) << ", at +1000 "
                                  << fmt::format("{:.17g}", s1000));
            CHECK(std::fabs(s0 - s100) < 1e-12);
            CHECK(std::fabs(s0 - s1000) < 1e-12);
        }
        // ... and it does depend on t - j
        INFO(name_of(pairing) << ": score(5, 2) = " << score(5, 2) << ", score(5, 3) = " << score(5, 3));
        CHECK(std::fabs(score(5, 2) - score(5, 3)) > 1e-3);

        // the matrix identity R_jᵀ R_t = R_{t-j}, with R read off the op: rope of the
        // basis vector e_i is column i of R, so rope of the identity rows is Rᵀ
        std::vector<double> eye(static_cast<size_t>(dh * dh), 0.0);
        for (int64_t i = 0; i < dh; ++i) eye[static_cast<size_t>(i * dh + i)] = 1.0;
        const Tensor basis = Tensor::from({dh, 1, 1, dh}, eye);
        const auto Rt = [&](int64_t m) { return ag::rope(basis, {m}, 10000.0, pairing).reshape({dh, dh}); };  // R_mᵀ
        for (const auto& [t, j] : std::vector<std::pair<int64_t, int64_t>>{{5, 2}, {105, 102}, {1005, 1002}}) {
            const Tensor lhs = ag::matmul(Rt(j), Rt(t).t());  // R_jᵀ R_t
            const double err = ag::max_abs_diff(lhs, Rt(t - j).t());
            INFO(name_of(pairing) << ": max |R_jᵀ R_t - R_{t-j}| at t = " << t << ", j = " << j << ": " << err);
            CHECK(err < 1e-13);
        }
    }
}

TEST_CASE("rope keeps the norm of every head vector", "[rope]") {
    ag::Generator gen(24);
    const int64_t dh = 16;
    const Tensor x = test::rand_t({2, 5, 3, dh}, gen, -3, 3, false);
    const Positions pos{0, 1, 39, 1000, 123456};
    for (const RopePairing pairing : kPairings) {
        const std::vector<double> xv = x.to_vector(), yv = ag::rope(x, pos, 10000.0, pairing).to_vector();
        double worst = 0.0;
        for (size_t r = 0; r < xv.size() / dh; ++r) {
            double nx = 0.0, ny = 0.0;
            for (size_t i = r * dh; i < (r + 1) * dh; ++i) {
                nx += xv[i] * xv[i];
                ny += yv[i] * yv[i];
            }
            worst = std::max(worst, std::fabs(std::sqrt(ny) - std::sqrt(nx)) / std::sqrt(nx));
        }
        INFO(name_of(pairing) << ": worst relative change of a head vector's norm = " << worst);
        CHECK(worst < 1e-15);
    }
}

TEST_CASE("rope at position 0 is the identity, and Rᵀ (the backward) undoes R", "[rope]") {
    ag::Generator gen(25);
    const Positions pos{3, -2, 0, 1000, 17}, neg{-3, 2, 0, -1000, -17};
    for (const RopePairing pairing : kPairings) {
        const std::string name = name_of(pairing);
        Tensor x = test::rand_t({2, 5, 3, 8}, gen);
        // cos 0 = 1, sin 0 = 0: exactly x
        const double at0 = ag::max_abs_diff(ag::rope(x, {0, 0, 0, 0, 0}, 10000.0, pairing), x);
        INFO(name << ": max |rope(x, 0) - x| = " << at0);
        CHECK(at0 == 0.0);
        // rotating by p, then by -p
        test::check_close(name + ": rope(rope(x, p), -p)",
                          ag::rope(ag::rope(x, pos, 10000.0, pairing), neg, 10000.0, pairing), x, 1e-15);
        // the backward applies Rᵀ: fed y = R x as the upstream gradient it returns x
        const Tensor y = ag::rope(x, pos, 10000.0, pairing);
        y.backward(y.detach());
        test::check_close(name + ": backward of R x", x.grad(), x, 1e-15);
        // which is the rotation by -p
        const Tensor g = test::rand_t(x.shape(), gen, -1, 1, false);
        x.zero_grad();
        ag::rope(x, pos, 10000.0, pairing).backward(g);
        test::check_close(name + ": backward(g) vs rope(g, -p)", x.grad(), ag::rope(g, neg, 10000.0, pairing), 1e-15);
    }
}

TEST_CASE("gradcheck: rope", "[rope][gradcheck]") {
    ag::Generator gen(26);
    const Positions pos{3, 0, 17, -4, 1000};
    for (const RopePairing pairing : kPairings) {
        for (const double base : {10000.0, 50.0}) {
            const std::string name =
                fmt::format("{} base {} positions {}", name_of(pairing), base, test::positions_str(pos));
            const auto check = [](const std::string& what, const ag::TensorFunction& f, const In& in) {
                const ag::GradcheckResult r = ag::gradcheck(f, in);
                INFO(what << ": ok=" << r.ok << ", max_abs_error=" << r.max_abs_error
                          << ", max_rel_error=" << r.max_rel_error << ", message: " << r.message);
                CHECK(r.ok);
                CHECK(r.max_abs_error < 1e-6);
            };
            check(name + ", x [2,5,3,8]", [&](const In& x) { return ag::rope(x[0], pos, base, pairing); },
                  {test::rand_t({2, 5, 3, 8}, gen)});
            check(name + ", x transposed from [2,3,5,8]",
                  [&](const In& x) { return ag::rope(ag::transpose(x[0], 1, 2), pos, base, pairing); },
                  {test::rand_t({2, 3, 5, 8}, gen)});
        }
    }
}

TEST_CASE("errors: rope", "[rope][errors]") {
    const Tensor x = Tensor::zeros({2, 3, 4, 8});
    CHECK_INVALID(ag::rope(Tensor::zeros({2, 3, 4, 7}), {0, 1, 2}),
                  Contains("rope") && Contains("[2,3,4,7]") && Contains("odd"));
    CHECK_INVALID(ag::rope(x, {0, 1}), Contains("rope") && Contains("[2,3,4,8]") && Contains("2 positions for T = 3"));
    CHECK_INVALID(ag::rope(x, {0, 1, 2, 3}), Contains("rope") && Contains("4 positions for T = 3"));
    CHECK_INVALID(ag::rope(x, {0, 1, 2}, 0.0), Contains("rope") && Contains("base 0"));
    CHECK_INVALID(ag::rope(x, {0, 1, 2}, -10.0), Contains("rope") && Contains("base -10"));
    CHECK_INVALID(ag::rope(x, {0, 1, 2}, std::numeric_limits<double>::quiet_NaN()),
                  Contains("rope") && Contains("base nan"));
    CHECK_INVALID(ag::rope(x, {0, 1, 2}, std::numeric_limits<double>::infinity()),
                  Contains("rope") && Contains("base inf"));
    CHECK_INVALID(ag::rope(Tensor::zeros({4, 8}), {0, 1, 2, 3}), Contains("rope") && Contains("[4,8]"));
}
