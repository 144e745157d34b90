// Exercise 13 · the SwiGLU feed-forward from engine ops (§3.2): outputs and
// gradients (through the engine) against the reference on random inputs, a
// gradient check, and the module's parameters and output against
// nn::SwiGLU. Diagnoses gate and up swapped, a missing SiLU, GELU or σ in
// SiLU's place, and biases.
#include <cmath>
#include <string>

#include "tensor_checks.h"
#include "exercises/ex13_swiglu.h"
#include "nn/feed_forward.h"
#include "reference/ex13_swiglu.h"

namespace ref = ex13_reference;
using ag::Tensor;

namespace {

// x [N, d] or [B, T, d] and the three weights at the scale of nn::Linear's
// initialisation (1/√in), so that SiLU works in its curved range.
struct Case {
    Tensor x, w_gate, w_up, w_down;
};

Case random_case(grading::Random& rng, int n) {
    const int64_t d = rng.integer(1, 12), d_ff = rng.integer(1, 20);
    const ag::Shape xs = n % 2 ? ag::Shape{rng.integer(1, 6), d} : ag::Shape{rng.integer(1, 3), rng.integer(1, 4), d};
    const double in_d = 1.0 / std::sqrt(static_cast<double>(d)), in_ff = 1.0 / std::sqrt(static_cast<double>(d_ff));
    return {grading::random_tensor(rng, xs, 2.0), grading::random_tensor(rng, {d_ff, d}, 2.0 * in_d),
            grading::random_tensor(rng, {d_ff, d}, 2.0 * in_d), grading::random_tensor(rng, {d, d_ff}, in_ff)};
}

std::string describe(const Case& c) {
    return "x " + ag::shape_str(c.x.shape()) + ", w_gate and w_up " + ag::shape_str(c.w_gate.shape()) + ", w_down " +
           ag::shape_str(c.w_down.shape());
}

// W_down (act(W_gate x) ⊙ W_up x) for another gate activation, or with the
// branches swapped: the usual slips.
Tensor gated(const Case& c, Tensor (*act)(const Tensor&), bool swapped = false) {
    const Tensor gate = ag::linear(c.x, swapped ? c.w_up : c.w_gate), up = ag::linear(c.x, swapped ? c.w_gate : c.w_up);
    return ag::linear(act(gate) * up, c.w_down);
}
Tensor identity(const Tensor& z) { return z; }

// When the output is wrong: which usual slip? FAIL naming it.
void diagnose(const Tensor& got, const Case& c) {
    const auto is = [&](const Tensor& wrong) { return grading::same_tensor(got, wrong, 1e-9); };
    if (is(gated(c, ag::silu, true)))
        FAIL("you swapped gate and up: SiLU goes on the gate branch, SiLU(W_gate x) ⊙ W_up x");
    if (is(gated(c, identity))) FAIL("you left out the SiLU: W_down (SiLU(W_gate x) ⊙ W_up x)");
    if (is(gated(c, ag::gelu))) FAIL("you used GELU; SwiGLU gates with SiLU(z) = z·σ(z)");
    if (is(gated(c, ag::sigmoid))) FAIL("you gated with σ (that is GLU); SwiGLU uses SiLU(z) = z·σ(z)");
    if (is(ag::linear(ag::silu(ag::linear(c.x, c.w_gate) * ag::linear(c.x, c.w_up)), c.w_down)))
        FAIL("you applied SiLU to the product; it goes on the gate branch only: SiLU(W_gate x) ⊙ W_up x");
}

}  // namespace

TEST_CASE("ex13 swiglu equals the reference on random inputs") {
    grading::Random rng(1301);
    for (int n = 0; n < 150; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c));
        const Tensor got = ex13::swiglu(c.x, c.w_gate, c.w_up, c.w_down);
        const Tensor want = ref::swiglu(c.x, c.w_gate, c.w_up, c.w_down);
        if (!grading::same_tensor(got, want, 1e-9)) diagnose(got, c);
        CHECK_TENSOR(got, want, 1e-9);
        INFO("and the engine's fused gate ag::swiglu(gate, up) = SiLU(gate) ⊙ up");
        CHECK_TENSOR(got, ag::linear(ag::swiglu(ag::linear(c.x, c.w_gate), ag::linear(c.x, c.w_up)), c.w_down), 1e-9);
    }
}

TEST_CASE("ex13 swiglu's gradients through the engine equal the reference's") {
    grading::Random rng(1302);
    for (int n = 0; n < 60; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c) << "; L = Σ y ⊙ w for a random w");
        const grading::ForwardBackward got = grading::forward_backward(
            [](const std::vector<Tensor>& in) { return ex13::swiglu(in[0], in[1], in[2], in[3]); },
            {c.x, c.w_gate, c.w_up, c.w_down}, 1300 + static_cast<uint64_t>(n));
        const grading::ForwardBackward want = grading::forward_backward(
            [](const std::vector<Tensor>& in) { return ref::swiglu(in[0], in[1], in[2], in[3]); },
            {c.x, c.w_gate, c.w_up, c.w_down}, 1300 + static_cast<uint64_t>(n));
        if (!grading::same_tensor(got.out, want.out, 1e-9)) diagnose(got.out, c);
        grading::check_same_gradients(got, want, {"x", "w_gate", "w_up", "w_down"}, 1e-9);
    }
}

TEST_CASE("ex13 swiglu passes the gradient check") {
    grading::Random rng(1303);
    for (int n = 0; n < 4; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c));
        grading::check_gradients(
            "swiglu, gradients of x, w_gate, w_up, w_down",
            [](const std::vector<Tensor>& in) { return ex13::swiglu(in[0], in[1], in[2], in[3]); },
            {grading::leaf(c.x), grading::leaf(c.w_gate), grading::leaf(c.w_up), grading::leaf(c.w_down)});
    }
}

TEST_CASE("ex13 the SwiGLU module has w_gate, w_up, w_down without biases: 3·d·d_ff parameters") {
    for (const auto& [d, d_ff] : {std::pair<int64_t, int64_t>{64, 172}, {4, 8}, {5, 3}}) {
        ag::Generator gen(13);
        const ex13::SwiGLU m(d, d_ff, gen);
        const auto params = m.named_parameters();
        INFO("SwiGLU(" << d << ", " << d_ff << ")");
        for (const auto& [name, p] : params)
            if (name.find("bias") != std::string::npos)
                FAIL("SwiGLU has no biases (" << name << "): nn::Linear(in, out, false, gen)");
        const std::vector<std::pair<std::string, ag::Shape>> want = {
            {"w_gate.weight", {d_ff, d}}, {"w_up.weight", {d_ff, d}}, {"w_down.weight", {d, d_ff}}};
        REQUIRE(params.size() == want.size());
        for (size_t i = 0; i < want.size(); ++i) {
            INFO("parameter " << i << ": expected " << want[i].first << " " << ag::shape_str(want[i].second) << ", got "
                              << params[i].first << " " << ag::shape_str(params[i].second.shape()));
            CHECK(params[i].first == want[i].first);
            CHECK(params[i].second.shape() == want[i].second);
        }
        INFO("3·d·d_ff: two [d_ff, d] matrices up and one [d, d_ff] down (ModernLM: 3·64·172 = 33,024 per block)");
        CHECK(m.num_parameters() == 3 * d * d_ff);
        CHECK(m.num_trainable_parameters() == 3 * d * d_ff);
    }
}

TEST_CASE("ex13 the SwiGLU module equals nn::SwiGLU built from the same seed") {
    grading::Random rng(1304);
    for (const auto& [d, d_ff] : {std::pair<int64_t, int64_t>{64, 172}, {6, 16}, {3, 2}}) {
        ag::Generator gen(31), gen_nn(31);
        const ex13::SwiGLU m(d, d_ff, gen);
        const nn::SwiGLU want(d, d_ff, gen_nn);
        INFO("SwiGLU(" << d << ", " << d_ff << ") from ag::Generator(31)");
        if (!m.w_gate || !m.w_up || !m.w_down)
            FAIL(
                "the members w_gate, w_up, w_down must hold the registered layers: "
                "w_gate = register_module(\"w_gate\", std::make_shared<nn::Linear>(…))");
        if (!grading::same_tensor(m.w_gate->weight, want.w_gate->weight, 0.0))
            FAIL(
                "w_gate's weight is not nn::Linear(d_model, d_ff, false, gen)'s: create w_gate first, then w_up, "
                "then w_down, from gen");
        const Tensor x = grading::random_tensor(rng, {5, d});
        const Tensor y = m.forward(x);
        if (grading::same_tensor(y, x, 1e-12)) FAIL("forward() returned x");
        CHECK_TENSOR(y, want.forward(x), 1e-9);
        INFO("forward() is swiglu() with the module's own weights");
        CHECK_TENSOR(y, ref::swiglu(x, m.w_gate->weight, m.w_up->weight, m.w_down->weight), 1e-9);
        INFO("the module's weights receive gradients");
        ag::sum(y).backward();
        CHECK(m.w_gate->weight.grad().defined());
        CHECK(m.w_down->weight.grad().defined());
    }
}
