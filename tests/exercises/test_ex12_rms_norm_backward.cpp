// Exercise 12 · RMSNorm as an autograd op with a hand-written backward
// (§3.2): the forward against the reference and ag::rms_norm, the backward
// against the reference, one recorded op whose gradients equal
// ag::rms_norm's, inputs and incoming gradients that are not contiguous and
// stay unchanged, a backward that keeps its own x (h = rms_norm(h, ...)),
// ag::rms_norm never run (forward, backward, NoGradGuard), and a gradient
// check. Diagnoses one r for the whole tensor or per column instead of one
// per row, a backward that treats r as a constant, a forgotten eps, a second
// term off by a factor 2 or without g, dweight not summed over the rows or
// with a stray g.
#include <algorithm>
#include <string>
#include <vector>

#include "exercises/ex12_rms_norm_backward.h"
#include "reference/ex12_rms_norm_backward.h"
#include "tensor_checks.h"

namespace ref = ex12_reference;
using ag::Tensor;

namespace {

struct Case {
    Tensor x, weight, dy;
    double eps;
};

// x [N, d] at a random scale, weight and dy ~ N(0, 1); eps tiny or as
// large as mean(x²), so that forgetting it shows. Extreme but valid: every
// fourth weight has zeros in it (y / g does not give back x r), every fifth
// x starts with a row of zeros (mean(x²) = 0: only eps keeps r finite).
Case random_case(grading::Random& rng, int n) {
    const int64_t N = rng.integer(1, 8), d = rng.integer(1, 24);
    const double eps = n % 3 == 0 ? 1e-5 : n % 3 == 1 ? rng.uniform(0.1, 2.0) : 1e-6;
    std::vector<double> weight = grading::random_tensor(rng, {d}).to_vector();
    if (n % 4 == 3)
        for (double& w : weight) w = rng.integer(0, 2) == 0 ? 0.0 : w;
    std::vector<double> x = grading::random_tensor(rng, {N, d}, rng.uniform(0.3, 3.0)).to_vector();
    if (n % 5 == 4) std::fill(x.begin(), x.begin() + d, 0.0);
    return {Tensor::from({N, d}, x), Tensor::from({d}, weight), grading::random_tensor(rng, {N, d}), eps};
}

// "x has a row of zeros" for the messages.
bool zero_row(const Case& c) {
    const std::vector<double> x = c.x.to_vector();
    return std::all_of(x.begin(), x.begin() + c.x.size(1), [](double e) { return e == 0.0; });
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
    return "x " + ag::shape_str(c.x.shape()) + (zero_row(c) ? " (row 0 all zeros)" : "") + ", eps " +
           std::to_string(c.eps) + values;
}

// When the forward is wrong: which usual slip? FAIL naming it.
void diagnose_forward(const Tensor& got, const Case& c) {
    if (grading::has_nan(got) && zero_row(c))
        FAIL(
            "NaN in y for a row of zeros: mean(x²) = 0 there, and eps is what keeps r = 1 / sqrt(mean(x²) + eps) "
            "finite");
    const auto is = [&](const Tensor& wrong) { return grading::same_tensor(got, wrong, 1e-9); };
    if (is(ref::rms_norm(c.x, c.weight, 0.0))) FAIL("you left out eps: r = 1 / sqrt(mean(x²) + eps)");
    if (is(c.x / (ag::sqrt(ag::mean(c.x * c.x, {1}, true)) + c.eps) * c.weight))
        FAIL("you added eps outside the square root: r = 1 / sqrt(mean(x²) + eps)");
    if (is(c.x * inverse_rms(c.x, c.eps))) FAIL("you did not multiply by the weight g: y = x r ⊙ g");
    if (is(ag::layer_norm(c.x, c.weight, Tensor::zeros(c.weight.shape()), c.eps)))
        FAIL("you subtracted the mean: that is LayerNorm; RMSNorm only divides by the root mean square");
    if (is(c.x / ag::sqrt(ag::sum(c.x * c.x, {1}, true) + c.eps) * c.weight))
        FAIL("you used the sum of x² where its mean belongs");
    if (c.x.size(0) > 1 && is(c.x / ag::sqrt(ag::mean(c.x * c.x) + c.eps) * c.weight))
        FAIL(
            "you computed one r for the whole tensor; RMSNorm normalises each row on its own: "
            "r_n = 1 / sqrt(mean_j(x_nj²) + eps)");
    if (c.x.size(0) > 1 && is(c.x / ag::sqrt(ag::mean(c.x * c.x, {0}, true) + c.eps) * c.weight))
        FAIL(
            "you took mean(x²) down each column, over the rows (one r per feature, as batch norm would); RMSNorm "
            "takes it over the d features of each row: one r per token");
}

// When the backward is wrong: which usual slip? FAIL naming it.
void diagnose_backward(const Tensor& dx, const Tensor& dweight, const Case& c) {
    if ((grading::has_nan(dx) || grading::has_nan(dweight)) && zero_row(c))
        FAIL(
            "NaN in the gradients for a row of zeros: mean(x²) = 0 there, and eps is what keeps "
            "r = 1 / sqrt(mean(x²) + eps) finite");
    const Tensor r = inverse_rms(c.x, c.eps);
    if (dweight.defined() && dweight.shape() != c.weight.shape())
        FAIL("dweight has shape " << ag::shape_str(dweight.shape()) << ", the weight's is "
                                  << ag::shape_str(c.weight.shape())
                                  << ": every row uses the same g, so sum dy ⊙ x r over the rows");
    if (dweight.defined() && grading::same_tensor(dweight, ag::sum(c.dy * c.x, {0}), 1e-9))
        FAIL("dweight = Σ_rows dy ⊙ x r: you left out r");
    if (dweight.defined() && grading::same_tensor(dweight, ag::sum(c.dy * c.x * r * c.weight, {0}), 1e-9))
        FAIL("your dweight is Σ_rows dy ⊙ y, with an extra factor g: ∂y_j/∂g_j = x_j r, so dweight = Σ_rows dy ⊙ x r");
    if (c.x.size(0) > 1 && dweight.defined() && grading::same_tensor(dweight, ag::mean(c.dy * c.x * r, {0}), 1e-9))
        FAIL("you averaged dy ⊙ x r over the rows; every row adds its share to the gradient of g: sum them");
    if (!dx.defined()) return;
    const auto is = [&](const Tensor& wrong) { return grading::same_tensor(dx, wrong, 1e-9); };
    if (is(r * c.weight * c.dy))
        FAIL(
            "your dx treats r as a constant: r depends on every x_k of its row (∂r/∂x_k = -r³ x_k / d), "
            "which adds the term -x r³ mean(g ⊙ dy ⊙ x)");
    if (is(dx_formula(c, 0.0, 3.0, true))) FAIL("your backward left out eps: r = 1 / sqrt(mean(x²) + eps)");
    if (is(r * c.weight * c.dy - c.x * ag::pow(r, 3.0) * ag::mean(c.dy * c.x, {1}, true)))
        FAIL(
            "the mean in your second term has no g: dx_k = r g_k dy_k + Σ_j dy_j g_j x_j ∂r/∂x_k, so it is "
            "mean(g ⊙ dy ⊙ x)");
    if (is(dx_formula(c, c.eps, 2.0, true))) FAIL("your second term has r² where r³ belongs: ∂r/∂x_k = -r³ x_k / d");
    // A sum over the row is d times the mean: at d = 2 it is the same slip
    // in the numbers as a dropped ½, so the message names both.
    const bool summed = is(dx_formula(c, c.eps, 3.0, false));
    const bool doubled =
        is(r * c.weight * c.dy - 2.0 * c.x * ag::pow(r, 3.0) * ag::mean(c.weight * c.dy * c.x, {1}, true));
    const char* const half_and_two =
        "r = s^(-1/2) with s = mean(x²) + eps, so ∂r/∂x_k = -½ s^(-3/2) · 2x_k / d = -r³ x_k / d (the ½ and the 2 "
        "cancel)";
    if (summed && doubled)
        FAIL(
            "your second term is twice too large (d = 2 here): a sum of g ⊙ dy ⊙ x over the row where its mean "
            "belongs, or a 2 without its ½: "
            << half_and_two);
    if (summed) FAIL("you summed g ⊙ dy ⊙ x over the row where its mean belongs (the 1/d of ∂r/∂x_k = -r³ x_k / d)");
    if (doubled) FAIL("your second term is twice too large: " << half_and_two);
    if (is(r * c.weight * c.dy + c.x * ag::pow(r, 3.0) * ag::mean(c.weight * c.dy * c.x, {1}, true)))
        FAIL("the second term has the wrong sign: dx = r (g ⊙ dy) - x r³ mean(g ⊙ dy ⊙ x)");
}

// y must be x r ⊙ g; if not, say which slip it is.
void check_forward(const Tensor& got, const Case& c) {
    const Tensor want = ref::rms_norm(c.x, c.weight, c.eps);
    if (!grading::same_tensor(got, want, 1e-9)) diagnose_forward(got, c);
    CHECK_TENSOR(got, want, 1e-9);
}

// dx and dweight must be the gradients of Σ c.dy ⊙ y; if not, say which
// slip it is.
void check_grads(const Tensor& dx, const Tensor& dweight, const Case& c) {
    const ref::RmsNormGrads want = ref::rms_norm_backward(c.x, c.weight, c.eps, c.dy);
    if (!grading::same_tensor(dx, want.dx, 1e-9) || !grading::same_tensor(dweight, want.dweight, 1e-9))
        diagnose_backward(dx, dweight, c);
    {
        INFO("dx = r (g ⊙ dy) - x r³ mean(g ⊙ dy ⊙ x)");
        CHECK_TENSOR(dx, want.dx, 1e-9);
    }
    INFO("dweight = Σ_rows dy ⊙ x r");
    CHECK_TENSOR(dweight, want.dweight, 1e-9);
}

}  // namespace

TEST_CASE("ex12 rms_norm's forward equals the reference and ag::rms_norm") {
    grading::Random rng(1201);
    for (int n = 0; n < 150; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c));
        const Tensor x_before = c.x.clone(), weight_before = c.weight.clone();
        const Tensor got = ex12::rms_norm(c.x, c.weight, c.eps);
        grading::require_unchanged(c.x, x_before, "x (given to rms_norm)");
        grading::require_unchanged(c.weight, weight_before, "the weight (given to rms_norm)");
        check_forward(got, c);
        CHECK_TENSOR(got, ag::rms_norm(c.x, c.weight, c.eps), 1e-9);
    }
}

TEST_CASE("ex12 rms_norm_backward equals the reference") {
    grading::Random rng(1202);
    for (int n = 0; n < 150; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c));
        // rms_norm_backward reads its three tensors and leaves them as they
        // were: the engine passes the op's saved x and the incoming gradient.
        const Tensor x_before = c.x.clone(), weight_before = c.weight.clone(), dy_before = c.dy.clone();
        const ex12::RmsNormGrads got = ex12::rms_norm_backward(c.x, c.weight, c.eps, c.dy);
        grading::require_unchanged(c.x, x_before, "x (given to rms_norm_backward)");
        grading::require_unchanged(c.weight, weight_before, "the weight (given to rms_norm_backward)");
        grading::require_unchanged(c.dy, dy_before, "dy (given to rms_norm_backward)");
        check_grads(got.dx, got.dweight, c);
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
        const Tensor dy_before = c.dy.clone();
        y.backward(c.dy);
        grading::require_unchanged(x, c.x, "x (by rms_norm's backward)");
        grading::require_unchanged(c.dy, dy_before, "the incoming gradient dy (by rms_norm's backward)");
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

// §3.2 in a model: the residual stream is one variable, h = rms_norm(h, g,
// eps), so by the time backward runs the caller's h is the op's output.
// The backward must use the x the op was called with (x.detach() kept in
// the closure), not whatever the caller's variable holds later.
TEST_CASE("ex12 rms_norm's backward uses the x it was called with (h = rms_norm(h, g, eps))") {
    grading::Random rng(1207);
    for (int n = 0; n < 20; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c));
        const Tensor x = grading::leaf(c.x), weight = grading::leaf(c.weight);
        Tensor h = x;
        h = ex12::rms_norm(h, weight, c.eps);
        h.backward(c.dy);
        const ref::RmsNormGrads want = ref::rms_norm_backward(c.x, c.weight, c.eps, c.dy);
        if (x.grad().defined() && !grading::same_tensor(x.grad(), want.dx, 1e-9) &&
            grading::same_tensor(x.grad(), ref::rms_norm_backward(h.detach(), c.weight, c.eps, c.dy).dx, 1e-9))
            FAIL(
                "after h = rms_norm(h, g, eps) the backward differentiated at the output's numbers: the closure "
                "must keep its own x_saved = x.detach() (captured by value), not a reference to the caller's "
                "variable");
        check_grads(x.grad(), weight.grad(), c);
    }
}

// In a Transformer, x is often a view (a narrow of the residual stream) and
// the gradient arriving at y comes back through a transpose or a reshape:
// not contiguous. strided_copy puts a NaN between every two numbers, so a
// flat read of data() without contiguous() shows up as NaN.
TEST_CASE("ex12 rms_norm and rms_norm_backward read tensors that are not contiguous") {
    grading::Random rng(1205);
    for (int n = 0; n < 40; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c) << "; given as non-contiguous views (every stride doubled)");
        const Tensor y = ex12::rms_norm(grading::strided_copy(c.x), grading::strided_copy(c.weight), c.eps);
        if (grading::has_nan(y) && !grading::has_nan(ex12::rms_norm(c.x, c.weight, c.eps)))
            FAIL(
                "NaN in y from a non-contiguous x or weight: call contiguous() before data() "
                "(x.detach().contiguous())");
        check_forward(y, c);

        // rms_norm_backward with one argument at a time made a view, then all three.
        const ex12::RmsNormGrads plain = ex12::rms_norm_backward(c.x, c.weight, c.eps, c.dy);
        const bool plain_nan = grading::has_nan(plain.dx) || grading::has_nan(plain.dweight);
        for (const int view : {0, 1, 2, 3}) {
            const auto as_view = [&](const Tensor& t, int which) {
                return view == which || view == 3 ? grading::strided_copy(t) : t;
            };
            const ex12::RmsNormGrads grads =
                ex12::rms_norm_backward(as_view(c.x, 0), as_view(c.weight, 1), c.eps, as_view(c.dy, 2));
            const char* const name = view == 0 ? "x" : view == 1 ? "weight" : view == 2 ? "dy" : "x, weight and dy";
            INFO("rms_norm_backward with " << name << " not contiguous");
            if ((grading::has_nan(grads.dx) || grading::has_nan(grads.dweight)) && !plain_nan)
                FAIL("NaN in rms_norm_backward's result when " << name
                                                               << " is a view: you read data() without contiguous()");
            check_grads(grads.dx, grads.dweight, c);
        }

        const Tensor x = grading::leaf(c.x), weight = grading::leaf(c.weight);
        const std::vector<Tensor> recorded =
            grading::run_recorded_backward(ex12::rms_norm(x, weight, c.eps), grading::strided_copy(c.dy));
        if (recorded.size() != 2)
            FAIL("the backward returned " << recorded.size() << " gradients: it must return {dx, dweight}");
        if ((grading::has_nan(recorded[0]) || grading::has_nan(recorded[1])) && !plain_nan)
            FAIL(
                "NaN in the gradients when dy arrives as a view: the backward (or rms_norm_backward) read dy.data() "
                "without dy.contiguous()");
        check_grads(recorded[0], recorded[1], c);
    }
}

// The exercise is to write the backward: the engine's fused ag::rms_norm
// must not do the work, not in the forward (even under NoGradGuard, where
// no graph shows it), not in the backward, not in rms_norm_backward.
TEST_CASE("ex12 rms_norm never runs ag::rms_norm, forward or backward") {
    grading::Random rng(1206);
    for (int n = 0; n < 8; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c));
        std::string own_op;  // the name the student's ag::record gave its op
        const std::vector<std::string> ops = grading::ops_run(
            [&] {
                const Tensor y = ex12::rms_norm(grading::leaf(c.x), grading::leaf(c.weight), c.eps);
                if (y.grad_fn()) own_op = y.grad_fn()->op;
                return y;
            },
            true);
        // Every "rms_norm" in the log but the student's own op is a call of ag::rms_norm.
        const auto engine_calls = std::count(ops.begin(), ops.end(), "rms_norm") - (own_op == "rms_norm" ? 1 : 0);
        if (engine_calls > 0)
            FAIL(
                "you called ag::rms_norm: compute y and the gradients yourself (the point of the exercise); "
                "rms_norm and its backward ran the ops "
                << grading::str(ops));
        // The closure of a fresh op (backward() has not released it yet) must
        // not be the one ag::rms_norm records.
        const Tensor mine = ex12::rms_norm(grading::leaf(c.x), grading::leaf(c.weight), c.eps);
        const Tensor engine = ag::rms_norm(grading::leaf(c.x), grading::leaf(c.weight), c.eps);
        if (mine.grad_fn() && mine.grad_fn()->backward.target_type() == engine.grad_fn()->backward.target_type())
            FAIL(
                "you returned ag::rms_norm's op; record your own with ag::record(\"rms_norm\", y, {x, weight}, "
                "backward), whose backward calls your rms_norm_backward()");

        const std::vector<std::string> backward_ops =
            grading::ops_run([&] { return ex12::rms_norm_backward(c.x, c.weight, c.eps, c.dy).dx; });
        if (std::find(backward_ops.begin(), backward_ops.end(), "rms_norm") != backward_ops.end())
            FAIL("rms_norm_backward called ag::rms_norm: write the gradients from the formula; it ran the ops "
                 << grading::str(backward_ops));
        // Building the forward from engine ops and calling backward() on it
        // lets autograd derive the gradients: the exercise is to write them.
        if (std::find(backward_ops.begin(), backward_ops.end(), ag::kBackwardRun) != backward_ops.end())
            FAIL(
                "rms_norm_backward let the engine differentiate (it called backward()): write dx and dweight "
                "from the formula in the statement; it ran the ops "
                << grading::str(backward_ops));
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
