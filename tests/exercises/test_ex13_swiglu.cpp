// Exercise 13 · the SwiGLU feed-forward from engine ops (§3.2): outputs and
// gradients (through the engine) against the reference on random inputs of
// every rank the header allows ([d], [N, d], [B, T, d], 4-D); inputs and an
// incoming gradient that are not contiguous; large gate pre-activations; a
// gradient check; the engine's fused ag::swiglu not run (the gate is built
// here). The module: parameter names, shapes, no biases, 3·d·d_ff, members
// that are the registered layers, weights drawn in the stated order (against
// nn::SwiGLU from the same seed), forward() with the module's current
// weights and gradients reaching all three. Diagnoses gate and up swapped,
// a missing SiLU, GELU or σ in SiLU's place, SiLU on the product, w_down
// the wrong way round, biases, another creation order.
#include <algorithm>
#include <cmath>
#include <string>

#include "exercises/ex13_swiglu.h"
#include "nn/feed_forward.h"
#include "reference/ex13_swiglu.h"
#include "tensor_checks.h"

namespace ref = ex13_reference;
using ag::Tensor;

namespace {

// x [..., d] and the three weights at the scale of nn::Linear's
// initialisation (1/√in), so that SiLU works in its curved range; x's rank
// cycles through 1 ([d]), 2 ([N, d]), 3 ([B, T, d]) and 4.
struct Case {
    Tensor x, w_gate, w_up, w_down;
};

Case random_case(grading::Random& rng, int n, double x_scale = 2.0) {
    const int64_t d = rng.integer(1, 12), d_ff = rng.integer(1, 20);
    ag::Shape xs;
    switch (n % 4) {
        case 0:
            xs = {rng.integer(1, 3), rng.integer(1, 4), d};
            break;
        case 1:
            xs = {rng.integer(1, 6), d};
            break;
        case 2:
            xs = {d};
            break;
        default:
            xs = {2, rng.integer(1, 2), rng.integer(1, 3), d};
            break;
    }
    const double in_d = 1.0 / std::sqrt(static_cast<double>(d)), in_ff = 1.0 / std::sqrt(static_cast<double>(d_ff));
    return {grading::random_tensor(rng, xs, x_scale), grading::random_tensor(rng, {d_ff, d}, 2.0 * in_d),
            grading::random_tensor(rng, {d_ff, d}, 2.0 * in_d), grading::random_tensor(rng, {d, d_ff}, in_ff)};
}

std::vector<Tensor> inputs(const Case& c) { return {c.x, c.w_gate, c.w_up, c.w_down}; }
const std::vector<std::string> kNames{"x", "w_gate", "w_up", "w_down"};

std::string describe(const Case& c) {
    return "x " + ag::shape_str(c.x.shape()) + ", w_gate and w_up " + ag::shape_str(c.w_gate.shape()) + ", w_down " +
           ag::shape_str(c.w_down.shape());
}

Tensor student(const std::vector<Tensor>& in) { return ex13::swiglu(in[0], in[1], in[2], in[3]); }
Tensor reference(const std::vector<Tensor>& in) { return ref::swiglu(in[0], in[1], in[2], in[3]); }

// W_down (act(W_gate x) ⊙ W_up x) for another gate activation, or with the
// branches swapped: the usual slips.
Tensor gated(const Case& c, Tensor (*act)(const Tensor&), bool swapped = false) {
    const Tensor gate = ag::linear(c.x, swapped ? c.w_up : c.w_gate), up = ag::linear(c.x, swapped ? c.w_gate : c.w_up);
    return ag::linear(act(gate) * up, c.w_down);
}
Tensor identity(const Tensor& z) { return z; }

// When the output is wrong: which usual slip? FAIL naming it.
void diagnose(const Tensor& got, const Case& c) {
    if (got.defined() && got.shape() != c.x.shape())
        FAIL("the output must have x's shape " << ag::shape_str(c.x.shape()) << " ([..., d] in, [..., d] out), got "
                                               << ag::shape_str(got.shape()));
    const auto is = [&](const Tensor& wrong) { return grading::same_tensor(got, wrong, 1e-9); };
    if (is(gated(c, ag::silu, true)))
        FAIL("you swapped gate and up: SiLU goes on the gate branch, SiLU(W_gate x) ⊙ W_up x");
    if (is(gated(c, identity))) FAIL("you left out the SiLU: W_down (SiLU(W_gate x) ⊙ W_up x)");
    if (is(gated(c, ag::gelu))) FAIL("you used GELU; SwiGLU gates with SiLU(z) = z·σ(z)");
    if (is(gated(c, ag::sigmoid))) FAIL("you gated with σ (that is GLU); SwiGLU uses SiLU(z) = z·σ(z)");
    if (is(ag::linear(ag::silu(ag::linear(c.x, c.w_gate) * ag::linear(c.x, c.w_up)), c.w_down)))
        FAIL("you applied SiLU to the product; it goes on the gate branch only: SiLU(W_gate x) ⊙ W_up x");
    const Tensor gate = ag::linear(c.x, c.w_gate), up = ag::linear(c.x, c.w_up);
    if (is(ag::linear(ag::silu(gate) + up, c.w_down)))
        FAIL("you added the two branches: ⊙ is the elementwise product, the gate scales each channel of W_up x");
    if (is(ag::linear(ag::silu(gate), c.w_down) * ag::linear(up, c.w_down)))
        FAIL(
            "you took each branch down to d before the product: multiply in the d_ff channels, then apply W_down "
            "once");
}

// got must be SwiGLU(c); if not, say which slip it is.
void check_output(const Tensor& got, const Case& c) {
    const Tensor want = ref::swiglu(c.x, c.w_gate, c.w_up, c.w_down);
    if (!grading::same_tensor(got, want, 1e-9)) diagnose(got, c);
    CHECK_TENSOR(got, want, 1e-9);
}

// A leaf holding t's numbers in a layout that is not contiguous (NaN gaps,
// grading::strided_copy): what a transpose or a slice hands an op.
Tensor strided_leaf(const Tensor& t) {
    Tensor s = grading::strided_copy(t);
    s.requires_grad_(true);
    return s;
}

// Whether `ops` contains the engine's fused gate.
bool ran_fused(const std::vector<std::string>& ops) { return std::find(ops.begin(), ops.end(), "swiglu") != ops.end(); }

const char* kNoFused =
    "you ran the engine's fused op \"swiglu\" (ag::swiglu, or nn::SwiGLU, which calls it): this exercise builds the "
    "gate itself, SiLU(W_gate x) ⊙ W_up x from ag::silu (or σ) and a product";

}  // namespace

TEST_CASE("ex13 swiglu equals the reference on random inputs: x [d], [N, d], [B, T, d], 4-D") {
    grading::Random rng(1301);
    for (int n = 0; n < 160; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c));
        check_output(ex13::swiglu(c.x, c.w_gate, c.w_up, c.w_down), c);
    }
}

// The exercise is the gate: calling the engine's fused ag::swiglu(gate, up)
// would hand it over. ops_run sees every op that ran, in the forward and the
// backward, recorded or not, also under NoGradGuard.
TEST_CASE("ex13 swiglu builds the gate from engine ops: the fused ag::swiglu is not run") {
    grading::Random rng(1305);
    for (int n = 0; n < 4; ++n) {
        const Case c = random_case(rng, n);
        std::vector<Tensor> leaves;
        for (const Tensor& t : inputs(c)) leaves.push_back(grading::leaf(t));
        const std::vector<std::string> ops = grading::ops_run([&] { return student(leaves); }, true);
        INFO(describe(c) << "; the ops your swiglu ran (forward and backward): " << grading::str(ops));
        if (ran_fused(ops)) FAIL(kNoFused);
        {
            ag::NoGradGuard no_grad;
            if (ran_fused(grading::ops_run([&] { return student(inputs(c)); }))) FAIL(kNoFused);
        }
        check_output(student(leaves), c);
    }
}

TEST_CASE("ex13 swiglu's gradients through the engine equal the reference's") {
    grading::Random rng(1302);
    for (int n = 0; n < 60; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c) << "; L = Σ y ⊙ w for a random w");
        const uint64_t seed = 1300 + static_cast<uint64_t>(n);
        const grading::ForwardBackward got = grading::forward_backward(student, inputs(c), seed);
        const grading::ForwardBackward want = grading::forward_backward(reference, inputs(c), seed);
        check_output(got.out, c);
        if (got.out.defined() && !got.out.requires_grad())
            FAIL(
                "the output does not require grad, so nothing was recorded for the backward (a NoGradGuard, "
                "detach(), or tensors rebuilt from the values?): build y from engine ops on the tensors given");
        grading::check_same_gradients(got, want, kNames, 1e-9);
    }
}

// Inside a Transformer block x is often a view (heads merged back by a
// transpose) and so may the weights be (a tied or transposed matrix); and
// the gradient arriving at y comes through whatever used y. Reading data()
// of any of them without contiguous() picks up the NaN gaps.
TEST_CASE("ex13 swiglu with inputs that are not contiguous, and with a gradient that is not") {
    grading::Random rng(1306);
    for (int n = 0; n < 24; ++n) {
        const Case c = random_case(rng, n);
        const uint64_t seed = 1350 + static_cast<uint64_t>(n);
        const grading::ForwardBackward want = grading::forward_backward(reference, inputs(c), seed);
        grading::Random w_rng(seed);
        const Tensor w = grading::random_tensor(w_rng, want.out.shape());  // dL/dy, as in forward_backward
        {
            std::vector<Tensor> leaves;
            for (const Tensor& t : inputs(c)) leaves.push_back(strided_leaf(t));
            INFO(describe(c) << ", all four given as non-contiguous views (every element followed by a NaN gap)");
            const Tensor y = student(leaves);
            check_output(y, c);
            if (!y.requires_grad()) FAIL("the output does not require grad: build it from engine ops on the inputs");
            ag::sum(ag::mul(y, w)).backward();
            grading::ForwardBackward got{y, {}};
            for (const Tensor& l : leaves) got.grads.push_back(l.grad());
            grading::check_same_gradients(got, want, kNames, 1e-9);
        }
        std::vector<Tensor> leaves;
        for (const Tensor& t : inputs(c)) leaves.push_back(grading::leaf(t));
        const Tensor y = student(leaves);
        check_output(y, c);
        if (!y.requires_grad()) FAIL("the output does not require grad: build it from engine ops on the inputs");
        INFO(describe(c) << "; dL/dy arrives as a non-contiguous view (NaN gaps): y.backward(strided_copy(dL/dy)). "
                         << "A backward that reads dy.data() without contiguous() picks up the gaps");
        y.backward(grading::strided_copy(w));
        grading::ForwardBackward got{y, {}};
        for (const Tensor& l : leaves) got.grads.push_back(l.grad());
        grading::check_same_gradients(got, want, kNames, 1e-9);
    }
}

// SiLU(z) = z·σ(z) is finite for every z: about z for large z, about 0 for
// very negative z. exp(z) overflows beyond z ≈ 709, so a SiLU written as
// z·exp(z)/(1 + exp(z)) turns into inf/inf = NaN there; and one written as
// z/(1 + exp(-z)) is finite forward but its backward multiplies exp(1000) =
// inf by 0. The gradients must be finite and exact too.
TEST_CASE("ex13 swiglu stays finite and exact for large gate pre-activations") {
    grading::Random rng(1307);
    for (int n = 0; n < 8; ++n) {
        const Case c = random_case(rng, n, 600.0);
        INFO(describe(c) << ", x ~ N(0, 600²): W_gate x reaches ±1000");
        const Tensor got = ex13::swiglu(c.x, c.w_gate, c.w_up, c.w_down);
        for (const double v : got.to_vector())
            if (!std::isfinite(v))
                FAIL(
                    "NaN or inf in the output: SiLU(z) = z·σ(z) is finite for every z, but exp(z) overflows "
                    "beyond 709 (σ(z) = exp(z)/(1 + exp(z)) gives inf/inf); ag::silu or ag::sigmoid are stable");
        check_output(got, c);
        const uint64_t seed = 1370 + static_cast<uint64_t>(n);
        const grading::ForwardBackward fb = grading::forward_backward(student, inputs(c), seed);
        for (size_t i = 0; i < fb.grads.size(); ++i)
            if (fb.grads[i].defined() && !grading::all_finite(fb.grads[i]))
                FAIL("NaN or inf in the gradient of "
                     << kNames[i]
                     << " although the output is finite: the engine differentiates the ops you wrote, and "
                        "through exp(-z) = inf at z = -1000 (as in z/(1 + exp(-z))) it multiplies inf by 0; "
                        "ag::silu or ag::sigmoid have stable backwards");
        grading::check_same_gradients(fb, grading::forward_backward(reference, inputs(c), seed), kNames, 1e-9);
    }
}

TEST_CASE("ex13 swiglu passes the gradient check") {
    grading::Random rng(1303);
    for (int n = 0; n < 4; ++n) {
        const Case c = random_case(rng, n);
        INFO(describe(c));
        std::vector<Tensor> leaves;
        for (const Tensor& t : inputs(c)) leaves.push_back(grading::leaf(t));
        grading::check_gradients("swiglu, gradients of x, w_gate, w_up, w_down", student, leaves);
    }
}

TEST_CASE("ex13 the SwiGLU module has w_gate, w_up, w_down without biases: 3·d·d_ff parameters") {
    for (const auto& [d, d_ff] : {std::pair<int64_t, int64_t>{64, 172}, {4, 8}, {5, 3}, {1, 1}}) {
        ag::Generator gen(13);
        const ex13::SwiGLU m(d, d_ff, gen);
        const auto params = m.named_parameters();
        INFO("SwiGLU(" << d << ", " << d_ff << ")");
        for (const auto& [name, p] : params)
            if (name.find("bias") != std::string::npos)
                FAIL("SwiGLU has no biases (" << name << "): nn::Linear(nn::LinearOptions(in, out).bias(false), gen)");
        const std::vector<std::pair<std::string, ag::Shape>> want = {
            {"w_gate.weight", {d_ff, d}}, {"w_up.weight", {d_ff, d}}, {"w_down.weight", {d, d_ff}}};
        {
            std::string got_names;
            for (const auto& [name, p] : params) got_names += " " + name + " " + ag::shape_str(p.shape());
            INFO("expected the parameters w_gate.weight, w_up.weight, w_down.weight; got" << got_names);
            REQUIRE(params.size() == want.size());
        }
        for (size_t i = 0; i < want.size(); ++i) {
            INFO("parameter " << i << ": expected " << want[i].first << " " << ag::shape_str(want[i].second) << ", got "
                              << params[i].first << " " << ag::shape_str(params[i].second.shape()));
            if (i == 2 && d != d_ff && params[i].second.shape() == ag::Shape{d_ff, d})
                FAIL(
                    "w_down goes back down, d_ff -> d_model: nn::Linear(nn::LinearOptions(d_ff, d_model).bias(false), "
                    "gen), weight [d, d_ff]");
            CHECK(params[i].first == want[i].first);
            CHECK(params[i].second.shape() == want[i].second);
        }
        INFO("3·d·d_ff: two [d_ff, d] matrices up and one [d, d_ff] down (ModernLM: 3·64·172 = 33,024 per block)");
        CHECK(m.num_parameters() == 3 * d * d_ff);
        CHECK(m.num_trainable_parameters() == 3 * d * d_ff);
    }
}

// What forward() uses must be what the module registered (an optimiser
// steps named_parameters()), drawn from gen in the stated order.
TEST_CASE("ex13 the SwiGLU module: its members are the registered layers, drawn as nn::SwiGLU draws them") {
    for (const auto& [d, d_ff] : {std::pair<int64_t, int64_t>{64, 172}, {6, 16}, {3, 2}}) {
        ag::Generator gen(31), gen_nn(31);
        const ex13::SwiGLU m(d, d_ff, gen);
        const nn::SwiGLU want(d, d_ff, gen_nn);
        INFO("SwiGLU(" << d << ", " << d_ff << ") from ag::Generator(31)");
        if (!m.w_gate || !m.w_up || !m.w_down)
            FAIL(
                "the members w_gate, w_up, w_down must hold the registered layers: "
                "w_gate = register_module(\"w_gate\", std::make_shared<nn::Linear>(…))");
        for (const auto& layer : {m.w_gate, m.w_up, m.w_down})
            if (layer->bias.defined())
                FAIL("a member layer has a bias: nn::Linear(nn::LinearOptions(in, out).bias(false), gen)");
        const auto params = m.named_parameters();
        {
            INFO("expected 3 registered parameters (w_gate.weight, w_up.weight, w_down.weight), got " << params.size());
            REQUIRE(params.size() == 3);
        }
        const Tensor members[] = {m.w_gate->weight, m.w_up->weight, m.w_down->weight};
        for (size_t i = 0; i < 3; ++i)
            if (params[i].second.impl() != members[i].impl())
                FAIL("the registered parameter " << params[i].first << " is not the member's weight: register the "
                                                 << "same layer you keep, w_gate = register_module(\"w_gate\", layer)");
        const Tensor wants[] = {want.w_gate->weight, want.w_up->weight, want.w_down->weight};
        for (size_t i = 0; i < 3; ++i)
            if (!grading::same_tensor(members[i], wants[i], 0.0))
                FAIL(kNames[i + 1] << "'s weight is not the one nn::Linear(…, gen) draws in its turn: create "
                                   << "w_gate first, then w_up, then w_down, each from gen");
        CHECK(m.num_parameters() == want.num_parameters());
        // Built from gen itself, the module leaves it where nn::SwiGLU leaves
        // gen_nn, so the next module built from gen (the next block) gets new
        // weights.
        if (gen.next_u64() != gen_nn.next_u64())
            FAIL(
                "after the constructor gen is not where nn::SwiGLU leaves it: draw the layers from gen itself, not "
                "from a copy, so that the next module built from gen gets weights of its own");
    }
}

TEST_CASE("ex13 SwiGLU::forward is swiglu() with the module's current weights, and trains all three") {
    grading::Random rng(1304);
    for (const auto& [d, d_ff] : {std::pair<int64_t, int64_t>{64, 172}, {6, 16}, {3, 2}}) {
        ag::Generator gen(31), gen_nn(31);
        ex13::SwiGLU m(d, d_ff, gen);
        const nn::SwiGLU want(d, d_ff, gen_nn);
        INFO("SwiGLU(" << d << ", " << d_ff << ") from ag::Generator(31)");
        for (const ag::Shape& shape : {ag::Shape{5, d}, ag::Shape{2, 3, d}, ag::Shape{d}}) {
            const Tensor x = grading::random_tensor(rng, shape);
            INFO("x " << ag::shape_str(shape));
            const Tensor y = m.forward(x);
            if (grading::same_tensor(y, x, 1e-12)) FAIL("forward() returned x");
            CHECK_TENSOR(y, want.forward(x), 1e-9);
        }
        // New weights (as after an optimiser step): forward() must read them.
        for (const auto& layer : {m.w_gate, m.w_up, m.w_down}) {
            const Tensor fresh = grading::random_tensor(rng, layer->weight.shape(), 0.5);
            std::copy_n(fresh.data(), fresh.numel(), layer->weight.data());
        }
        const Tensor x = grading::random_tensor(rng, {4, d});
        const std::vector<std::string> ops = grading::ops_run([&] { return m.forward(x); }, true);
        INFO("the ops forward() ran: " << grading::str(ops));
        if (ran_fused(ops)) FAIL(kNoFused);
        {
            ag::NoGradGuard no_grad;
            if (ran_fused(grading::ops_run([&] { return m.forward(x); })))
                FAIL(
                    "under NoGradGuard (inference) forward() ran the fused op \"swiglu\": the module builds the "
                    "gate itself in every mode, through swiglu()");
        }
        const Case c{x, m.w_gate->weight, m.w_up->weight, m.w_down->weight};
        {
            INFO("forward() after the weights changed (an optimiser step) must use the new weights");
            check_output(m.forward(x), c);
        }
        // Gradients reach the registered weights and equal the reference's.
        m.zero_grad();
        grading::Random w_rng(7);
        const Tensor y = m.forward(x);
        REQUIRE(y.defined());
        const Tensor w = grading::random_tensor(w_rng, y.shape());
        ag::sum(ag::mul(y, w)).backward();
        const grading::ForwardBackward ref_fb = grading::forward_backward(reference, inputs(c), 7);
        const auto params = m.named_parameters();
        for (size_t i = 0; i < std::min<size_t>(params.size(), 3); ++i) {
            if (!params[i].second.grad().defined())
                FAIL("no gradient reached " << params[i].first << ": forward() must use the registered weights "
                                            << "through engine ops");
            INFO("the gradient of " << params[i].first << ": "
                                    << grading::tensor_diff(params[i].second.grad(), ref_fb.grads[i + 1]));
            CHECK(grading::same_tensor(params[i].second.grad(), ref_fb.grads[i + 1], 1e-9));
        }
    }
}
