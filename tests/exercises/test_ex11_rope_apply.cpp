// Exercise 11 · RoPE on a whole sequence, as an autograd op (§4.6): the
// O(d) op against the full block-diagonal matrix R_{Θ,m}, the §4.6 matrix
// version, the reference and ag::rope, for both pairings; x and dy that
// arrive as views (not contiguous) and stay unchanged; one recorded op whose
// backward is Rᵀ dy with the positions of the call; O(T·d) memory; ag::rope
// never run, in the forward or the backward; a gradient check. Diagnoses the
// other pairing, positions from 1, the row index used as the position,
// clockwise turns, θ_i = base^(-(i-1)/d), an exponent computed in integer
// arithmetic, a backward that turns forward, and positions kept by reference.
#include <algorithm>
#include <cmath>
#include <utility>

#include "exercises/ex11_rope_apply.h"
#include "reference/ex11_rope_apply.h"
#include "tensor_checks.h"

namespace ref = ex11_reference;
using ag::RopePairing;
using ag::Tensor;
using Positions = std::vector<int64_t>;

namespace {

const char* name_of(RopePairing p) { return p == RopePairing::Half ? "Half" : "Interleaved"; }
RopePairing other(RopePairing p) { return p == RopePairing::Half ? RopePairing::Interleaved : RopePairing::Half; }

Positions shifted(const Positions& positions, int64_t by, int64_t sign = 1) {
    Positions out;
    for (const int64_t m : positions) out.push_back(sign * m + by);
    return out;
}

Positions from_zero(int64_t T) {
    Positions p;
    for (int64_t t = 0; t < T; ++t) p.push_back(t);
    return p;
}

// Random positions: increasing from an offset (a chunk of a long text) or
// scattered (tokens of a cache in any order).
Positions random_positions(grading::Random& rng, int64_t T) {
    Positions p;
    const int64_t start = rng.integer(0, 3000);
    const bool scattered = rng.integer(0, 1) == 1;
    for (int64_t t = 0; t < T; ++t) p.push_back(scattered ? rng.integer(0, 5000) : start + t);
    return p;
}

// One input: x [T, d] with its positions, base and pairing.
struct Case {
    Tensor x;
    Positions positions;
    double base;
    RopePairing pairing;
};

// Case n of a test: the pairings alternate, every third base is random.
Case random_case(grading::Random& rng, int n, int64_t T_max, int64_t pairs_max) {
    const int64_t T = rng.integer(1, T_max), d = 2 * rng.integer(1, pairs_max);
    const double base = n % 3 ? 10000.0 : rng.uniform(2.0, 1e6);
    return {grading::random_tensor(rng, {T, d}), random_positions(rng, T), base,
            n % 2 ? RopePairing::Interleaved : RopePairing::Half};
}

std::string describe(const Case& c) {
    return std::string(name_of(c.pairing)) + " pairing, x " + ag::shape_str(c.x.shape()) + ", base " +
           std::to_string(c.base) + ", positions " + grading::str(c.positions);
}

// R_{Θ,m} as a dense d×d tensor, built block by block as on the slides
// (§4.2): block i rotates the plane of dims (a, b) by m·θ_i,
//   rows a, b / columns a, b:  [cos -sin; sin cos],  θ_i = base^(-2(i-1)/d),
// with (a, b) = (i, i + d/2) for Half and (2i, 2i+1) for Interleaved.
Tensor rotation_matrix(int64_t m, int64_t d, double base, RopePairing pairing) {
    Tensor R = Tensor::zeros({d, d});
    double* r = R.data();
    for (int64_t i = 0; i < d / 2; ++i) {
        const int64_t a = pairing == RopePairing::Half ? i : 2 * i,
                      b = pairing == RopePairing::Half ? i + d / 2 : a + 1;
        const double angle =
            static_cast<double>(m) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
        r[a * d + a] = std::cos(angle);
        r[b * d + b] = std::cos(angle);
        r[a * d + b] = -std::sin(angle);
        r[b * d + a] = std::sin(angle);
    }
    return R;
}

// The O(d²) way: y[t] = R_{Θ,positions[t]} x[t] for every row.
Tensor by_full_matrix(const Tensor& x, const Positions& positions, double base, RopePairing pairing) {
    std::vector<Tensor> rows;
    for (int64_t t = 0; t < x.size(0); ++t)
        rows.push_back(ag::matmul(rotation_matrix(positions[static_cast<size_t>(t)], x.size(1), base, pairing),
                                  x.narrow(0, t, 1).reshape({-1, 1}))
                           .reshape({-1}));
    return ag::stack(rows, 0);
}

// The slides' §4.6 matrix version (Half pairing): with C [T, d] whose row t
// is m·θ_1 … m·θ_{d/2}, m·θ_1 … m·θ_{d/2} (m = positions[t]),
//   y = x ⊙ cos C + rotate_half(x) ⊙ sin C,   rotate_half(x) = [-x_{d/2:}, x_{:d/2}].
Tensor by_matrix_version(const Tensor& x, const Positions& positions, double base) {
    const int64_t T = x.size(0), d = x.size(1), h = d / 2;
    std::vector<double> cosC, sinC;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < d; ++j) {
            const double angle = static_cast<double>(positions[static_cast<size_t>(t)]) *
                                 std::pow(base, -2.0 * static_cast<double>(j % h) / static_cast<double>(d));
            cosC.push_back(std::cos(angle));
            sinC.push_back(std::sin(angle));
        }
    const Tensor rotated_half = ag::cat({ag::neg(x.narrow(1, h, h)), x.narrow(1, 0, h)}, 1);
    return x * Tensor::from({T, d}, cosC) + rotated_half * Tensor::from({T, d}, sinC);
}

// ag::rope on [T, 1 head, d].
Tensor engine_rope(const Tensor& x, const Positions& positions, double base, RopePairing pairing) {
    return ag::rope(x.reshape({x.size(0), 1, x.size(1)}), positions, base, pairing).reshape(x.shape());
}

// When `got` is not R x: is it one of the usual wrong turns? FAIL naming it.
void diagnose(const Tensor& got, const Case& c) {
    const auto is = [&](const Tensor& wrong) { return grading::same_tensor(got, wrong, 1e-9); };
    if (is(ref::rope_apply(c.x, c.positions, c.base, other(c.pairing))))
        FAIL("you used the other pairing: "
             << name_of(c.pairing) << " pairs "
             << (c.pairing == RopePairing::Half ? "dim i with i + d/2" : "dim 2i with 2i+1"));
    if (is(ref::rope_apply(c.x, shifted(c.positions, 1), c.base, c.pairing)))
        FAIL("you turned by (m+1)·θ_i: positions start at 0 (the first token is not rotated)");
    if (is(ref::rope_apply(c.x, shifted(c.positions, 0, -1), c.base, c.pairing)))
        FAIL("you turned clockwise: pair (a, b) -> (a cos - b sin, a sin + b cos) with the angle +m·θ_i");
    if (is(ref::rope_apply(c.x, c.positions, std::sqrt(c.base), c.pairing)))
        FAIL("you used θ_i = base^(-(i-1)/d); it is base^(-2(i-1)/d), i = 1 … d/2 (exercise 2)");
    if (c.x.size(1) > 2 && is(ref::rope_apply(c.x, c.positions, 1.0, c.pairing)))
        FAIL(
            "every pair turned by m·1: θ_i = 1 for all i. Was -2(i-1)/d computed in integer arithmetic (it is 0)? "
            "θ_i = base^(-2(i-1)/d) needs a division of doubles");
    if (c.positions != from_zero(c.x.size(0)) && is(ref::rope_apply(c.x, from_zero(c.x.size(0)), c.base, c.pairing)))
        FAIL("you turned row t by t·θ_i; the angle is m·θ_i with m = positions[t], the token's own position");
    if (is(c.x)) FAIL("you returned x unrotated");
}

// got must equal want (R x, however computed); if not, say which slip it is.
void check_rotation(const Tensor& got, const Tensor& want, const Case& c) {
    if (!grading::same_tensor(got, want, 1e-9)) diagnose(got, c);
    CHECK_TENSOR(got, want, 1e-9);
}

// dx, what the backward returned for the incoming gradient dy, must be
// Rᵀ dy: the rotation by -m·θ_i. If not, say which slip it is.
void check_backward(const Tensor& dx, const Tensor& dy, const Case& c) {
    if (!dx.defined()) FAIL("no gradient reached x: the backward must return {dx}");
    const Tensor want = ref::rope_apply(dy, shifted(c.positions, 0, -1), c.base, c.pairing);
    if (!grading::same_tensor(dx, want, 1e-9)) {
        if (grading::same_tensor(dx, ref::rope_apply(dy, c.positions, c.base, c.pairing), 1e-9))
            FAIL(
                "your backward turned dy by +m·θ_i like the forward; y = R x gives dx = Rᵀ dy, and Rᵀ is "
                "the rotation by -m·θ_i");
        if (grading::same_tensor(dx, dy, 1e-12)) FAIL("your backward passed dy through unrotated: dx = Rᵀ dy");
    }
    INFO("dx = R_{Θ,m}ᵀ dy, the rotation by -m·θ_i");
    CHECK_TENSOR(dx, want, 1e-9);
}

}  // namespace

TEST_CASE("ex11 rope_apply equals the full block-diagonal matrix R_{Θ,m}, the reference and ag::rope") {
    grading::Random rng(1101);
    for (int n = 0; n < 200; ++n) {
        const Case c = random_case(rng, n, 20, 32);
        INFO(describe(c));
        const Tensor x_before = c.x.clone();
        const Tensor got = ex11::rope_apply(c.x, c.positions, c.base, c.pairing);
        // y = R x is a new tensor: x stays as it was.
        grading::require_unchanged(c.x, x_before, "x");
        check_rotation(got, by_full_matrix(c.x, c.positions, c.base, c.pairing), c);
        CHECK_TENSOR(got, ref::rope_apply(c.x, c.positions, c.base, c.pairing), 1e-9);
        CHECK_TENSOR(got, engine_rope(c.x, c.positions, c.base, c.pairing), 1e-9);
        if (c.pairing == RopePairing::Half) {
            INFO("the §4.6 matrix version x ⊙ cos C + rotate_half(x) ⊙ sin C pairs i with i + d/2");
            CHECK_TENSOR(got, by_matrix_version(c.x, c.positions, c.base), 1e-9);
        }
    }
}

TEST_CASE("ex11 rope_apply at the edges: one token, one pair (d = 2)") {
    grading::Random rng(1102);
    for (const RopePairing pairing : {RopePairing::Half, RopePairing::Interleaved})
        for (const int64_t T : {1, 3})
            for (const int64_t d : {2, 4}) {
                // d = 2: one pair, turned by m·θ_1 = m radians, whichever the pairing.
                const Case c{grading::random_tensor(rng, {T, d}), random_positions(rng, T), 10000.0, pairing};
                {
                    INFO(describe(c));
                    check_rotation(ex11::rope_apply(c.x, c.positions, c.base, c.pairing),
                                   by_full_matrix(c.x, c.positions, c.base, c.pairing), c);
                }
                const Case start{c.x, from_zero(T), c.base, pairing};
                INFO("rope_apply(x, base, pairing): " << describe(start));
                check_rotation(ex11::rope_apply(c.x, c.base, c.pairing),
                               by_full_matrix(c.x, start.positions, c.base, c.pairing), start);
            }
}

TEST_CASE("ex11 rope_apply without positions turns row t by t·θ_i, from 0") {
    grading::Random rng(1103);
    for (int n = 0; n < 60; ++n) {
        Case c = random_case(rng, n, 40, 16);
        c.positions = from_zero(c.x.size(0));
        INFO(describe(c));
        const Tensor got = ex11::rope_apply(c.x, c.base, c.pairing);
        check_rotation(got, ref::rope_apply(c.x, c.positions, c.base, c.pairing), c);
        CHECK_TENSOR(got, engine_rope(c.x, c.positions, c.base, c.pairing), 1e-9);
        INFO("the first token sits at position 0: the angle is 0 and it comes back unchanged");
        CHECK_TENSOR(got.narrow(0, 0, 1), c.x.narrow(0, 0, 1), 1e-12);
    }
}

TEST_CASE("ex11 rope_apply is one recorded op whose backward is the rotation by -m·θ_i") {
    grading::Random rng(1104);
    for (int n = 0; n < 40; ++n) {
        const Case c = random_case(rng, n, 8, 10);
        INFO(describe(c));
        const Tensor x = grading::leaf(c.x), dy = grading::random_tensor(rng, c.x.shape());
        // The backward runs after rope_apply has returned, when the caller's
        // positions may have changed (a decoding loop reuses its vector).
        Positions positions = c.positions;
        const Tensor y = ex11::rope_apply(x, positions, c.base, c.pairing);
        grading::require_one_op(y, "rope_apply", "{x}", {x});
        positions = shifted(positions, 7);
        const Tensor dy_before = dy.clone();
        y.backward(dy);
        grading::require_unchanged(dy, dy_before, "the incoming gradient dy");
        const Tensor with_new_positions = ref::rope_apply(dy, shifted(positions, 0, -1), c.base, c.pairing);
        if (x.grad().defined() && grading::same_tensor(x.grad(), with_new_positions, 1e-9))
            FAIL(
                "your backward turned dy back by the positions the caller's vector held when backward ran, not "
                "those rope_apply was called with: the closure must keep its own copy of the positions (capture "
                "by value, not by reference)");
        check_backward(x.grad(), dy, c);
    }
}

// §4.6: R_{Θ,m} is block-diagonal, so applying it pair by pair costs O(d)
// per token; a dense d×d matrix per token costs O(d²) numbers and work.
// Counted as the tensor memory a forward and backward need at once: with
// T = 8, d = 128, all T matrices at once; with T = 2, d = 512, even one
// matrix at a time (2 MB against a budget of 262 KB).
TEST_CASE("ex11 rope_apply needs O(T·d) memory, not a d×d matrix per token") {
    grading::Random rng(1108);
    for (const auto& [T, d] : std::vector<std::pair<int64_t, int64_t>>{{8, 128}, {2, 512}}) {
        for (const RopePairing pairing : {RopePairing::Half, RopePairing::Interleaved}) {
            const Tensor x = grading::leaf(grading::random_tensor(rng, {T, d}));
            const Tensor dy = grading::random_tensor(rng, {T, d});
            const Positions positions = random_positions(rng, T);
            const int64_t bytes =
                grading::peak_bytes_of([&] { ex11::rope_apply(x, positions, 10000.0, pairing).backward(dy); });
            // A few [T, d] tensors at once (x's copy, y, dy's copy, dx, cos and
            // sin tables) are fine; one dense R is d of them.
            const int64_t budget = 32 * T * d * static_cast<int64_t>(sizeof(double));
            INFO(name_of(pairing) << " pairing, x [" << T << "," << d << "]: the forward and backward needed " << bytes
                                  << " bytes of tensors at once; " << T << "·" << d << " doubles are "
                                  << T * d * static_cast<int64_t>(sizeof(double)) << " bytes, one " << d << "×" << d
                                  << " matrix " << d * d * static_cast<int64_t>(sizeof(double)) << " bytes");
            if (bytes > budget)
                FAIL("more than " << budget
                                  << " bytes: turn each pair (a, b) by its angle directly, O(d) per token (§4.6), "
                                     "rather than building the block-diagonal d×d matrix R_{Θ,m}, even one token "
                                     "at a time");
        }
    }
}

// Inside attention, q and k are views of a Linear output (narrow, reshape)
// and the gradient arriving at y comes back through a transpose: neither
// is contiguous. strided_copy puts a NaN between every two numbers, so a
// flat read of data() without contiguous() shows up as NaN.
TEST_CASE("ex11 rope_apply reads x and dy that are not contiguous") {
    grading::Random rng(1106);
    for (int n = 0; n < 30; ++n) {
        const Case c = random_case(rng, n, 8, 10);
        INFO(describe(c) << "; x and dy given as non-contiguous views (strides 2·d, 2)");
        const Tensor got = ex11::rope_apply(grading::strided_copy(c.x), c.positions, c.base, c.pairing);
        if (grading::has_nan(got))
            FAIL(
                "NaN in y: your forward read x.data() as if x were contiguous; call x.detach().contiguous() "
                "before data()");
        check_rotation(got, ref::rope_apply(c.x, c.positions, c.base, c.pairing), c);

        const Tensor x = grading::leaf(c.x), dy = grading::random_tensor(rng, c.x.shape());
        const std::vector<Tensor> grads = grading::run_recorded_backward(
            ex11::rope_apply(x, c.positions, c.base, c.pairing), grading::strided_copy(dy));
        if (grads.size() != 1) FAIL("the backward returned " << grads.size() << " gradients for one input x");
        if (grading::has_nan(grads[0]))
            FAIL(
                "NaN in dx: your backward read dy.data() as if dy were contiguous; an incoming gradient may be a "
                "view (a transpose, a narrow): call dy.contiguous() before data()");
        check_backward(grads[0], dy, c);
    }
}

// The exercise is to write the rotation: the engine's fused ag::rope must
// not do it, not in the forward (even under NoGradGuard, where no graph
// shows it) and not in the backward.
TEST_CASE("ex11 rope_apply never runs ag::rope, forward or backward") {
    grading::Random rng(1107);
    for (int n = 0; n < 8; ++n) {
        const Case c = random_case(rng, n, 6, 6);
        INFO(describe(c));
        const auto with_positions = grading::ops_run(
            [&] { return ex11::rope_apply(grading::leaf(c.x), c.positions, c.base, c.pairing); }, true);
        const auto from_start =
            grading::ops_run([&] { return ex11::rope_apply(grading::leaf(c.x), c.base, c.pairing); }, true);
        for (const auto& [which, ops] : {std::pair{"rope_apply(x, positions, base, pairing)", with_positions},
                                         std::pair{"rope_apply(x, base, pairing)", from_start}}) {
            INFO(which << " and its backward ran the ops " << grading::str(ops));
            if (std::find(ops.begin(), ops.end(), "rope") != ops.end())
                FAIL(
                    "you called ag::rope: turn the pairs yourself (the point of the exercise), in the forward and "
                    "in the backward");
        }
    }
}

TEST_CASE("ex11 rope_apply passes the gradient check") {
    grading::Random rng(1105);
    for (const RopePairing pairing : {RopePairing::Half, RopePairing::Interleaved})
        for (const double base : {10000.0, 50.0}) {
            const int64_t T = 4, d = 6;
            const Positions positions = random_positions(rng, T);
            INFO(name_of(pairing) << " pairing, base " << base << ", positions " << grading::str(positions));
            grading::check_gradients(
                "rope_apply",
                [&](const std::vector<Tensor>& in) { return ex11::rope_apply(in[0], positions, base, pairing); },
                {grading::leaf(grading::random_tensor(rng, {T, d}))});
            grading::check_gradients(
                "rope_apply with positions 0 … T-1",
                [&](const std::vector<Tensor>& in) { return ex11::rope_apply(in[0], base, pairing); },
                {grading::leaf(grading::random_tensor(rng, {T, d}))});
        }
}
