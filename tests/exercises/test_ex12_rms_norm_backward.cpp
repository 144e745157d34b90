// Exercise 12 · RMSNorm as an autograd op with a hand-written backward
// (§3.2): the forward against the reference and ag::rms_norm, the backward
// against the reference, one recorded op whose gradients equal
// ag::rms_norm's, and a gradient check. Diagnoses a backward that treats r
// as a constant, a forgotten eps, and dweight not summed over the rows.
#include "tensor_checks.h"
#include "exercises/ex12_rms_norm_backward.h"
#include "reference/ex12_rms_norm_backward.h"

namespace ref = ex12_reference;
using ag::Tensor;

namespace {

struct Case {
    Tensor x, weight, dy;
    double eps;
};

// x [N, d] at a random scale, weight and dy ~ N(0, 1); eps tiny or as
// large as mean(x²), so that forgetting it shows.
Case random_case(grading::Random& rng, int n) {
    const int64_t N = rng.integer(1, 8), d = rng.integer(1, 24);
    const double eps = n % 3 == 0 ? 1e-5 : n % 3 == 1 ? rng.uniform(0.1, 2.0) : 1e-6;
    return {grading::random_tensor(rng, {N, d}, rng.uniform(0.3, 3.0)), grading::random_tensor(rng, {d}),
            grading::random_tensor(rng, {N, d}), eps};
}

// r = 1 / sqrt(mean(x²) + eps) per row, [N, 1], from engine ops.
Tensor inverse_rms(const Tensor& x, double eps) { return 1.0 / ag::sqrt(ag::mean(x * x, {1}, true) + eps); }

// dx = r u - x r^power · reduce(u ⊙ x), u = g ⊙ dy: the right formula with
// power 3 and the mean; the usual slips otherwise.
Tensor dx_formula(const Case& c, double eps, double power, bool mean) {
    const Tensor r = inverse_rms(c.x, eps), u = c.weight * c.dy;
    const Tensor ux = mean ? ag::mean(u * c.x, {1}, true) : ag::sum(u * c.x, {1}, true);
    return r * u - c.x * ag::pow(r, power) * ux;
}

// The case in one line, with its numbers when there are few.
std::string describe(const Case& c) {
    const std::string values = c.x.numel() > 12 ? ""
                                                : "\n x = " + grading::str(c.x.to_vector()) +
                                                      ", weight = " + grading::str(c.weight.to_vector()) +
                                                      ", dy = " + grading::str(c.dy.to_vector());
    return "x " + ag::shape_str(c.x.shape()) + ", eps " + std::to_string(c.eps) + values;
}

// When the forward is wrong: which usual slip? FAIL naming it.
void diagnose_forward(const Tensor& got, const Case& c) {
    const auto is = [&](const Tensor& wrong) { return grading::same_tensor(got, wrong, 1e-9); };
    if (is(ref::rms_norm(c.x, c.weight, 0.0))) FAIL("you left out eps: r = 1 / sqrt(mean(x²) + eps)");
    if (is(c.x / (ag::sqrt(ag::mean(c.x * c.x, {1}, true)) + c.eps) * c.weight))
        FAIL("you added eps outside the square root: r = 1 / sqrt(mean(x²) + eps)");
    if (is(c.x * inverse_rms(c.x, c.eps))) FAIL("you did not multiply by the weight g: y = x r ⊙ g");
    if (is(ag::layer_norm(c.x, c.weight, Tensor::zeros(c.weight.shape()), c.eps)))
        FAIL("you subtracted the mean: that is LayerNorm; RMSNorm only divides by the root mean square");
    if (is(c.x / ag::sqrt(ag::sum(c.x * c.x, {1}, true) + c.eps) * c.weight))
        FAIL("you used the sum of x² where its mean belongs");
}

// When the backward is wrong: which usual slip? FAIL naming it.
void diagnose_backward(const Tensor& dx, const Tensor& dweight, const Case& c) {
    const Tensor r = inverse_rms(c.x, c.eps);
    if (dweight.defined() && dweight.shape() != c.weight.shape())
        FAIL("dweight has shape " << ag::shape_str(dweight.shape()) << ", the weight's is "
                                  << ag::shape_str(c.weight.shape())
                                  << ": every row uses the same g, so sum dy ⊙ x r over the rows");
    if (dweight.defined() && grading::same_tensor(dweight, ag::sum(c.dy * c.x, {0}), 1e-9))
        FAIL("dweight = Σ_rows dy ⊙ x r: you left out r");
    if (!dx.defined()) return;
    const auto is = [&](const Tensor& wrong) { return grading::same_tensor(dx, wrong, 1e-9); };
    if (is(r * c.weight * c.dy))
        FAIL(
            "your dx treats r as a constant: r depends on every x_k of its row (∂r/∂x_k = -r³ x_k / d), "
            "which adds the term -x r³ mean(g ⊙ dy ⊙ x)");
    if (is(dx_formula(c, 0.0, 3.0, true))) FAIL("your backward left out eps: r = 1 / sqrt(mean(x²) + eps)");
    if (is(dx_formula(c, c.eps, 3.0, false)))
        FAIL("you summed g ⊙ dy ⊙ x over the row where its mean belongs (the 1/d of ∂r/∂x_k = -r³ x_k / d)");
    if (is(dx_formula(c, c.eps, 2.0, true))) FAIL("your second term has r² where r³ belongs: ∂r/∂x_k = -r³ x_k / d");
    if (is(r * c.weight * c.dy + c.x * ag::pow(r, 3.0) * ag::mean(c.weight * c.dy * c.x, {1}, true)))
        FAIL("the second term has the wrong sign: dx = r (g ⊙ dy) - x r³ mean(g ⊙ dy ⊙ x)");
}

}  // namespace

TEST_CASE("ex12 rms_norm's forward equals the reference and ag::rms_norm") {
    grading::Random rng(1201);
    for (int n = 0; n < 150; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c));
        const Tensor got = ex12::rms_norm(c.x, c.weight, c.eps);
        const Tensor want = ref::rms_norm(c.x, c.weight, c.eps);
        if (!grading::same_tensor(got, want, 1e-9)) diagnose_forward(got, c);
        CHECK_TENSOR(got, want, 1e-9);
        CHECK_TENSOR(got, ag::rms_norm(c.x, c.weight, c.eps), 1e-9);
    }
}

TEST_CASE("ex12 rms_norm_backward equals the reference") {
    grading::Random rng(1202);
    for (int n = 0; n < 150; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c));
        const ex12::RmsNormGrads got = ex12::rms_norm_backward(c.x, c.weight, c.eps, c.dy);
        const ref::RmsNormGrads want = ref::rms_norm_backward(c.x, c.weight, c.eps, c.dy);
        if (!grading::same_tensor(got.dx, want.dx, 1e-9) || !grading::same_tensor(got.dweight, want.dweight, 1e-9))
            diagnose_backward(got.dx, got.dweight, c);
        INFO("dx = r (g ⊙ dy) - x r³ mean(g ⊙ dy ⊙ x)");
        CHECK_TENSOR(got.dx, want.dx, 1e-9);
        INFO("dweight = Σ_rows dy ⊙ x r");
        CHECK_TENSOR(got.dweight, want.dweight, 1e-9);
    }
}

TEST_CASE("ex12 rms_norm is one recorded op whose gradients equal ag::rms_norm's") {
    grading::Random rng(1203);
    for (int n = 0; n < 60; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c));
        const Tensor x = grading::leaf(c.x), weight = grading::leaf(c.weight);
        const Tensor y = ex12::rms_norm(x, weight, c.eps);
        grading::require_one_op(y, "rms_norm", "{x, weight}", {x, weight});
        y.backward(c.dy);
        if (!x.grad().defined()) FAIL("no gradient reached x: the backward must return {dx, dweight}");
        if (!weight.grad().defined()) FAIL("no gradient reached the weight: the backward must return {dx, dweight}");

        const Tensor xe = grading::leaf(c.x), we = grading::leaf(c.weight);
        ag::rms_norm(xe, we, c.eps).backward(c.dy);
        if (!grading::same_tensor(x.grad(), xe.grad(), 1e-9) || !grading::same_tensor(weight.grad(), we.grad(), 1e-9))
            diagnose_backward(x.grad(), weight.grad(), c);
        CHECK_TENSOR(y, ag::rms_norm(c.x, c.weight, c.eps), 1e-9);
        CHECK_TENSOR(x.grad(), xe.grad(), 1e-9);
        CHECK_TENSOR(weight.grad(), we.grad(), 1e-9);
    }
}

TEST_CASE("ex12 rms_norm passes the gradient check") {
    grading::Random rng(1204);
    for (const ag::Shape& shape : {ag::Shape{1, 1}, ag::Shape{1, 4}, ag::Shape{3, 2}, ag::Shape{4, 5}})
        for (const double eps : {1e-5, 0.3}) {
            INFO("x " << ag::shape_str(shape) << ", eps " << eps);
            grading::check_gradients("rms_norm, gradients of x and weight",
                                     [eps](const std::vector<Tensor>& in) { return ex12::rms_norm(in[0], in[1], eps); },
                                     {grading::leaf(grading::random_tensor(rng, shape)),
                                      grading::leaf(grading::random_tensor(rng, {shape[1]}))});
        }
}
