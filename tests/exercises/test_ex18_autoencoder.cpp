// Exercise 18 · one autoencoder layer and greedy stacking (§2.4):
// nn::Autoencoder's initialisation (diagnosing the order of the draws and the
// decoder's bound), encode / decode / loss on fixed weights and on a view of x
// (diagnosing a missing bias or sigmoid, tied weights, a summed loss), a
// saturated sigmoid without NaN for large pre-activations, in the forward and
// in the backward, a gradient check, training steps against the reference with
// no gradient left behind, a decreasing loss, and the greedy stack: its shapes
// and codes (diagnosing layer 2 trained on x or on an untrained layer 1's
// codes), earlier layers fixed and free of gradients, the generator's draws,
// one layer / no layer / no step, and gradients through the stacked encoder for
// fine-tuning.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "exercises/ex18_autoencoder.h"
#include "grading_checks.h"
#include "nn/autoencoder.h"
#include "reference/ex18_autoencoder.h"
#include "tensor_checks.h"

namespace ref = ex18_reference;

namespace {

// Inputs like lesson 01's pixels: [N, in] in [0, 1].
ag::Tensor pixels(ag::Generator& gen, int64_t N, int64_t in) { return ag::Tensor::uniform({N, in}, gen, 0.0, 1.0); }

// nn::Autoencoder's parameters as a Layer (the same tensors, shared).
ex18::Layer layer_of(const nn::Autoencoder& ae) { return {ae.enc->weight, ae.enc->bias, ae.dec->weight, ae.dec->bias}; }
ref::Layer ref_layer_of(const ex18::Layer& l) { return {l.enc_weight, l.enc_bias, l.dec_weight, l.dec_bias}; }

// Fresh copies (same numbers, own storage, requiring grad).
ex18::Layer copy_of(const ex18::Layer& l) {
    const auto c = [](const ag::Tensor& t) { return t.detach().clone().requires_grad_(); };
    return {c(l.enc_weight), c(l.enc_bias), c(l.dec_weight), c(l.dec_bias)};
}

void check_shape(const ag::Tensor& got, const ag::Shape& want, const char* what) {
    INFO(what << ": expected shape " << ag::shape_str(want) << ", got " << ag::shape_str(got.shape()));
    REQUIRE(got.shape() == want);
}

void check_same_layers(const ex18::Layer& got, const ref::Layer& want, double tol) {
    const std::vector<ag::Tensor> g = got.parameters(), w = want.parameters();
    const char* names[] = {"enc_weight (W)", "enc_bias (b)", "dec_weight (W')", "dec_bias (b')"};
    for (size_t i = 0; i < 4; ++i) {
        {
            INFO(names[i] << ": expected shape " << ag::shape_str(w[i].shape()) << ", got "
                          << (g[i].defined() ? ag::shape_str(g[i].shape()) : std::string("an undefined tensor")));
            REQUIRE(g[i].defined());
            REQUIRE(g[i].shape() == w[i].shape());
        }
        INFO(names[i] << ": " << grading::tensor_diff(g[i], w[i]));
        CHECK(ag::max_abs_diff(g[i], w[i]) <= tol);
    }
}

// A parameter "holds no gradient" when its .grad() is undefined or all 0.
bool holds_gradient(const ag::Tensor& p) {
    const ag::Tensor g = p.grad();
    return g.defined() && ag::max_abs_diff(g, ag::Tensor::zeros(g.shape())) > 0.0;
}

// FAILs naming the first of `layers`' parameters that still holds a gradient.
void check_no_gradients(const std::vector<ex18::Layer>& layers, const std::string& why) {
    const char* names[] = {"enc_weight (W)", "enc_bias (b)", "dec_weight (W')", "dec_bias (b')"};
    for (size_t l = 0; l < layers.size(); ++l) {
        const std::vector<ag::Tensor> ps = layers[l].parameters();
        for (size_t i = 0; i < 4; ++i)
            if (holds_gradient(ps[i]))
                FAIL("layer " << l + 1 << "'s " << names[i] << " still holds a gradient: " << why);
    }
}

}  // namespace

TEST_CASE("ex18 new_layer draws nn::Autoencoder's numbers") {
    for (const auto& [in, hidden] : std::vector<std::pair<int64_t, int64_t>>{{64, 32}, {12, 8}, {5, 9}, {1, 1}}) {
        INFO("in " << in << ", hidden " << hidden);
        ag::Generator mine(21), theirs(21);
        const ex18::Layer got = ex18::new_layer(in, hidden, mine);
        const nn::Autoencoder ae(in, hidden, theirs);
        const ex18::Layer want = layer_of(ae);
        if (got.dec_weight.defined() && got.dec_weight.shape() == want.dec_weight.shape() && in != hidden &&
            grading::same_tensor(got.dec_weight,
                                 want.dec_weight * std::sqrt(static_cast<double>(hidden) / static_cast<double>(in)),
                                 1e-12))
            FAIL(
                "the decoder is drawn with bound 1/√in: its fan_in (the number of inputs of W' z + b') is hidden, so "
                "W' and b' are uniform in ±1/√hidden");
        if (got.enc_bias.defined() && got.enc_weight.defined() && got.enc_weight.numel() > 0 &&
            got.enc_bias.shape() == want.enc_bias.shape() &&
            !grading::same_tensor(got.enc_weight, want.enc_weight, 0.0) &&
            !grading::same_tensor(got.enc_bias, want.enc_bias, 0.0)) {
            ag::Generator replay(21);
            const double bound = 1.0 / std::sqrt(static_cast<double>(in));
            const ag::Tensor bias_first = ag::Tensor::uniform({hidden}, replay, -bound, bound);
            if (grading::same_tensor(got.enc_bias, bias_first, 0.0))
                FAIL("you drew b before W: nn::Autoencoder (nn::Linear) draws W, b, W', b' in that order");
        }
        {
            INFO(
                "nn::Autoencoder(in, hidden, gen) draws from gen: W [hidden, in], then b, both uniform in ±1/√in, "
                "then W' [in, hidden], then b', both uniform in ±1/√hidden");
            check_same_layers(got, ref_layer_of(want), 0.0);
        }
        for (const ag::Tensor& p : got.parameters()) {
            INFO("all four parameters must require grad (train_step needs their gradients)");
            CHECK(p.requires_grad());
        }
        INFO("and the generator has moved on as far as nn::Autoencoder's (no extra or missing draws)");
        CHECK(mine.next_u64() == theirs.next_u64());
    }
}

TEST_CASE("ex18 encode, decode and the loss on fixed weights equal nn::Autoencoder's") {
    ag::Generator gen(18);
    struct Sizes {
        int64_t in, hidden, N;
    };
    for (const Sizes& size :
         {Sizes{12, 5, 7}, Sizes{6, 6, 7}, Sizes{4, 9, 7}, Sizes{64, 32, 7}, Sizes{3, 2, 1}, Sizes{1, 1, 4}}) {
        const int64_t in = size.in, hidden = size.hidden;
        const nn::Autoencoder ae(in, hidden, gen);
        const ex18::Layer layer = layer_of(ae);
        const ag::Tensor x = pixels(gen, size.N, in);
        INFO("in " << in << ", hidden " << hidden << ", N = " << size.N);

        const ag::Tensor z = ex18::encode(layer, x), want_z = ae.encode(x);
        check_shape(z, want_z.shape(), "encode(x)");
        const ag::Tensor pre = ag::linear(x, layer.enc_weight, layer.enc_bias);
        if (!grading::same_tensor(z, want_z, 1e-12)) {
            if (grading::same_tensor(z, pre, 1e-12)) FAIL("encode has no sigmoid: z = h(W x + b) with h = sigmoid");
            if (grading::same_tensor(z, ag::tanh(pre), 1e-12))
                FAIL("encode uses tanh: h is the sigmoid here (nn::Autoencoder)");
            if (grading::same_tensor(z, ag::relu(pre), 1e-12))
                FAIL("encode uses ReLU: h is the sigmoid here (nn::Autoencoder)");
            if (grading::same_tensor(z, ag::sigmoid(ag::linear(x, layer.enc_weight)), 1e-12))
                FAIL("encode forgets the bias b");
        }
        {
            INFO("max |z - h(W x + b)| = " << ag::max_abs_diff(z, want_z));
            CHECK(grading::same_tensor(z, want_z, 1e-12));
        }

        const ag::Tensor rec = ex18::decode(layer, want_z), want_rec = ae.decode(want_z);
        check_shape(rec, want_rec.shape(), "decode(z)");
        if (!grading::same_tensor(rec, want_rec, 1e-12)) {
            if (grading::same_tensor(rec, ag::linear(want_z, layer.dec_weight, layer.dec_bias), 1e-12))
                FAIL("decode has no sigmoid: x' = h(W' z + b')");
            if (grading::same_tensor(rec, ag::sigmoid(ag::linear(want_z, layer.dec_weight)), 1e-12))
                FAIL("decode forgets the bias b'");
            if (grading::same_tensor(rec, ag::sigmoid(ag::linear(want_z, layer.enc_weight.t(), layer.dec_bias)), 1e-12))
                FAIL("decode uses the encoder's weight transposed (tied weights): the decoder has its own W'");
        }
        {
            INFO("max |x' - h(W' z + b')| = " << ag::max_abs_diff(rec, want_rec));
            CHECK(grading::same_tensor(rec, want_rec, 1e-12));
        }

        const ag::Tensor loss = ex18::reconstruction_loss(layer, x);
        check_shape(loss, {}, "reconstruction_loss");
        const double got = loss.item(), want = ae.loss(x).item();
        const double squares = want * static_cast<double>(x.numel());
        if (!grading::close(got, want, 1e-12)) {
            if (grading::close(got, squares, 1e-10)) FAIL("your loss is the sum of squares: divide by N·in (a mean)");
            if (grading::close(got, want * static_cast<double>(in), 1e-10))
                FAIL("your loss divides by N only: the mean is over all N·in numbers");
            if (grading::close(got, std::sqrt(squares), 1e-10))
                FAIL("your loss is the norm ‖x - x'‖: use the mean of the squares, Σ (x' - x)² / (N·in)");
            if (grading::close(got, std::sqrt(want), 1e-10)) FAIL("your loss is a root mean square: drop the sqrt");
        }
        CHECK_CLOSE(got, want, 1e-12);
        CHECK_CLOSE(got, ref::reconstruction_loss(ref_layer_of(layer), x).item(), 1e-12);

        // x as a view whose numbers are not contiguous (rows of a bigger
        // batch, a transpose): the same codes, reconstruction and loss.
        const ag::Tensor view = grading::strided_copy(x);
        {
            INFO("encode(x) with x given as a view that is not contiguous (NaN between its numbers): "
                 << grading::tensor_diff(ex18::encode(layer, view), want_z)
                 << " (read x through engine ops or contiguous(), not x.data() as a flat array)");
            CHECK(grading::same_tensor(ex18::encode(layer, view), want_z, 1e-12));
        }
        {
            INFO("decode(z) with z given as a view that is not contiguous: " << grading::tensor_diff(
                     ex18::decode(layer, grading::strided_copy(want_z)), want_rec));
            CHECK(grading::same_tensor(ex18::decode(layer, grading::strided_copy(want_z)), want_rec, 1e-12));
        }
        CHECK_CLOSE(ex18::reconstruction_loss(layer, view).item(), want, 1e-12);
    }
}

TEST_CASE("ex18 encode and decode saturate for large pre-activations, and so do their gradients (no NaN)") {
    // Inputs of order ±10000 put W x + b far past ±709, where exp overflows a
    // double: the sigmoid is then 1 (or 0) and must be computed as such.
    ag::Generator gen(181);
    const nn::Autoencoder ae(12, 5, gen);
    const ex18::Layer layer = layer_of(ae);
    const ag::Tensor x = pixels(gen, 8, 12) * 20000.0 - 10000.0;
    const ag::Tensor z = ex18::encode(layer, x), want_z = ae.encode(x);
    INFO("in 12, hidden 5, N = 8, x uniform in ±10000: |W x + b| reaches "
         << ag::max_abs(ag::linear(x, layer.enc_weight, layer.enc_bias)));
    check_shape(z, want_z.shape(), "encode(x)");
    const char* overflow =
        "NaN or inf where the sigmoid is 1 or 0: an exp overflowed (exp(a) / (1 + exp(a)) is inf / inf for a > "
        "709); ag::sigmoid computes it without overflow";
    if (!grading::all_finite(z)) FAIL("encode: " << overflow);
    {
        INFO("encode(x): " << grading::tensor_diff(z, want_z));
        CHECK(grading::same_tensor(z, want_z, 1e-12));
    }
    const ag::Tensor big = ag::Tensor::uniform({8, 5}, gen, -1.0, 1.0) * 3000.0;  // codes of any size decode
    const ag::Tensor rec = ex18::decode(layer, big), want_rec = ae.decode(big);
    check_shape(rec, want_rec.shape(), "decode(z)");
    if (!grading::all_finite(rec)) FAIL("decode: " << overflow);
    {
        INFO("decode(z) with z uniform in ±3000: " << grading::tensor_diff(rec, want_rec));
        CHECK(grading::same_tensor(rec, want_rec, 1e-12));
    }

    // Saturated, the slope σ(a)(1 - σ(a)) is 0, and so is the gradient.
    // Written as 1 / (1 + exp(-a)), the forward gives σ = 0 for a < -709
    // but its backward divides inf by inf: NaN, and one training step makes
    // every weight NaN.
    const ex18::Layer mine = copy_of(layer), theirs = copy_of(layer);
    ag::sum(ex18::encode(mine, x)).backward();
    ag::sum(ex18::decode(mine, big)).backward();
    ag::sum(ref::encode(ref_layer_of(theirs), x)).backward();
    ag::sum(ref::decode(ref_layer_of(theirs), big)).backward();
    const std::vector<ag::Tensor> got = mine.parameters(), want = theirs.parameters();
    const char* names[] = {"enc_weight (W)", "enc_bias (b)", "dec_weight (W')", "dec_bias (b')"};
    for (size_t i = 0; i < 4; ++i) {
        INFO(
            "the gradient of Σ encode(x) (x as above) w.r.t. W and b, of Σ decode(z) (z as above) w.r.t. W' and "
            "b': "
            << names[i]);
        if (!got[i].grad().defined())
            FAIL("no gradient reached " << names[i] << ": build encode and decode from engine ops on the layer's "
                                        << "own tensors");
        if (!grading::all_finite(got[i].grad()))
            FAIL(
                "NaN or inf in the gradient where the sigmoid is saturated: its slope σ(a)(1 - σ(a)) is 0 there, "
                "but the backward of 1 / (1 + exp(-a)) divides inf by inf for a < -709; ag::sigmoid's backward "
                "uses σ(a) itself");
        INFO(grading::tensor_diff(got[i].grad(), want[i].grad()));
        CHECK(grading::same_tensor(got[i].grad(), want[i].grad(), 1e-12));
    }
}

TEST_CASE("ex18 the loss's gradients: a gradient check w.r.t. W, b, W' and b'") {
    ag::Generator gen(19);
    for (const auto& [in, hidden] : std::vector<std::pair<int64_t, int64_t>>{{6, 3}, {4, 5}, {3, 3}}) {
        const ex18::Layer layer = ex18::new_layer(in, hidden, gen);
        const ag::Tensor x = pixels(gen, 5, in);
        INFO("in " << in << ", hidden " << hidden << ", N = 5");
        if (!ex18::reconstruction_loss(layer, x).requires_grad())
            FAIL(
                "your loss carries no gradient: build it from engine ops (ag::linear, ag::sigmoid, ag::mean, …) on "
                "parameters that require grad");
        const ag::GradcheckResult check = ag::gradcheck(
            [&x](const std::vector<ag::Tensor>& p) {
                return ex18::reconstruction_loss({p[0], p[1], p[2], p[3]}, x);
            },
            layer.parameters());
        INFO("gradient check (inputs 0-3: W, b, W', b'): " << check.message << " (max error " << check.max_abs_error
                                                           << ")");
        CHECK(check.ok);
    }
}

TEST_CASE("ex18 train_step equals the reference step for step and the loss decreases") {
    ag::Generator gen(20);
    const int64_t in = 10, hidden = 4;
    const ag::Tensor x = pixels(gen, 16, in), x_before = x.clone();
    ag::Generator init(5);
    const ex18::Layer start = ex18::new_layer(in, hidden, init);
    ex18::Layer mine = copy_of(start);
    ref::Layer theirs = ref_layer_of(copy_of(start));
    const double lr = 2.0;
    const std::vector<ag::Tensor> handles = mine.parameters();
    std::vector<double> losses;
    for (int step = 0; step < 200; ++step) {
        INFO("step " << step << " (lr " << lr << ", full batch of 16)");
        const double got = ex18::train_step(mine, x, lr), want = ref::train_step(theirs, x, lr);
        losses.push_back(got);
        if (!grading::close(got, want, 1e-9) && step == 0 &&
            grading::close(got, ref::reconstruction_loss(theirs, x).item(), 1e-9))
            FAIL("train_step returned the loss after the step (" << got
                                                                 << "): return the loss it stepped on, "
                                                                    "computed before the update ("
                                                                 << want << ")");
        {
            INFO("the loss before the step: expected " << want << ", got " << got);
            REQUIRE(grading::close(got, want, 1e-9));
        }
        check_no_gradients({mine},
                           "train_step clears the gradients after its update (backward() adds to .grad(), so "
                           "whoever computes the next gradient would add it to this one)");
        if (step < 3) {
            const std::vector<ag::Tensor> g = mine.parameters(), w = theirs.parameters();
            bool equal = true;
            for (size_t i = 0; i < 4; ++i) equal = equal && grading::same_tensor(g[i], w[i], 1e-10);
            if (!equal && step == 0) {
                ref::Layer up = ref_layer_of(copy_of(start));
                ref::train_step(up, x, -lr);
                if (grading::same_tensor(g[0], up.enc_weight, 1e-10))
                    FAIL("you stepped up the gradient: p <- p - lr · dL/dp");
                if (grading::same_tensor(g[0], start.enc_weight, 0.0))
                    FAIL("train_step does not change the parameters");
            }
            if (!equal && step > 0)
                FAIL("step 0 was right, step "
                     << step
                     << " is not: clear the gradients after each step "
                        "(backward() adds to .grad(), so old gradients would be added to the new ones)");
            CHECK(equal);
        }
    }
    for (size_t i = 0; i < 4; ++i) {
        INFO("train_step must update the layer's own tensors in place, not replace them");
        CHECK(mine.parameters()[i].impl() == handles[i].impl());
    }
    {
        INFO("train_step must not change x (it is the input and the target)");
        CHECK(grading::same_tensor(x, x_before, 0.0));
    }
    INFO("losses: first " << losses.front() << ", after 100 steps " << losses[100] << ", last " << losses.back());
    for (size_t s = 1; s < losses.size(); ++s) REQUIRE(losses[s] <= losses[s - 1] + 1e-12);
    CHECK(losses.back() < 0.9 * losses.front());
}

// The stack must have one layer per step of widths (widths.size() - 1).
void check_stack_size(const std::vector<ex18::Layer>& stack, const std::vector<int64_t>& widths) {
    INFO("widths " << grading::str(widths) << " make " << widths.size() - 1 << " layers; got " << stack.size());
    REQUIRE(stack.size() == widths.size() - 1);
}

// After train_stack: no layer holds a gradient, and the caller's generator
// has moved on exactly as far as the reference's (one new_layer per layer).
void check_stack_leftovers(const std::vector<ex18::Layer>& stack, ag::Generator& mine, ag::Generator& theirs) {
    const char* names[] = {"enc_weight (W)", "enc_bias (b)", "dec_weight (W')", "dec_bias (b')"};
    for (size_t l = 0; l < stack.size(); ++l)
        for (size_t i = 0; i < 4; ++i)
            if (!stack[l].parameters()[i].requires_grad())
                FAIL("layer " << l + 1 << "'s " << names[i]
                              << " no longer requires grad: the stack is pre-trained to be fine-tuned under a "
                                 "classifier; a lower layer stays fixed while the next one trains because only that "
                                 "one is stepped and its input codes are computed without gradient, not because it "
                                 "is frozen");
    check_no_gradients(stack,
                       "the codes a layer trains on come from the layers below computed WITHOUT gradient "
                       "(they stay fixed), and train_step clears the gradients of the layer it trains");
    INFO(
        "train_stack draws each layer with new_layer(…, gen) from the generator it is given: after it, that "
        "generator must have moved on as far as the reference's");
    CHECK(mine.next_u64() == theirs.next_u64());
}

TEST_CASE("ex18 greedy stacking trains layer 2 on layer 1's codes, layer 1 fixed") {
    // Equal widths, so that the wrong input fits too.
    ag::Generator gen(23);
    const ag::Tensor x = pixels(gen, 16, 6), x_before = x.clone();
    const std::vector<int64_t> widths{6, 6, 6};
    ag::Generator mine(10), theirs(10), wrong(10);
    const std::vector<ex18::Layer> stack = ex18::train_stack(x, widths, 20, 1.0, mine);
    check_stack_size(stack, widths);
    const std::vector<ref::Layer> expected = ref::train_stack(x, widths, 20, 1.0, theirs);
    // The wrong turn: every layer trained on x itself.
    ref::Layer on_x = ref::new_layer(6, 6, wrong);
    for (int s = 0; s < 20; ++s) ref::train_step(on_x, x, 1.0);
    on_x = ref::new_layer(6, 6, wrong);
    for (int s = 0; s < 20; ++s) ref::train_step(on_x, x, 1.0);
    if (grading::same_tensor(stack[1].enc_weight, on_x.enc_weight, 1e-9) &&
        !grading::same_tensor(stack[1].enc_weight, expected[1].enc_weight, 1e-9))
        FAIL("you trained layer 2 on x: greedy pre-training trains it on layer 1's codes z = h(W_1 x + b_1)");
    // The wrong turn: layer 2 trained on the codes of layer 1 as drawn, before its training.
    ag::Generator early(10);
    const ref::Layer untrained = ref::new_layer(6, 6, early);
    ag::Tensor untrained_codes;
    {
        ag::NoGradGuard no_grad;
        untrained_codes = ref::encode(untrained, x);
    }
    ref::Layer on_early = ref::new_layer(6, 6, early);
    for (int s = 0; s < 20; ++s) ref::train_step(on_early, untrained_codes, 1.0);
    if (grading::same_tensor(stack[1].enc_weight, on_early.enc_weight, 1e-9) &&
        !grading::same_tensor(stack[1].enc_weight, expected[1].enc_weight, 1e-9))
        FAIL(
            "you trained layer 2 on the codes of layer 1 as it was drawn, before its training: compute the codes "
            "layer 2 learns from with layer 1 trained");
    {
        INFO(
            "layer 1 must be exactly layer 1 after its own 20 steps on x: it stays fixed while layer 2 trains "
            "(greedy, one layer at a time)");
        check_same_layers(stack[0], expected[0], 1e-9);
    }
    {
        INFO("layer 2 against the reference's");
        check_same_layers(stack[1], expected[1], 1e-9);
    }
    check_stack_leftovers(stack, mine, theirs);
    INFO("train_stack must not change x");
    CHECK(grading::same_tensor(x, x_before, 0.0));
}

TEST_CASE("ex18 greedy stacking: shapes, and codes equal the reference's") {
    ag::Generator gen(22);
    const ag::Tensor x = pixels(gen, 20, 12);
    const std::vector<int64_t> widths{12, 8, 5, 3};
    ag::Generator mine(9), theirs(9);
    const std::vector<ex18::Layer> stack = ex18::train_stack(x, widths, 30, 1.0, mine);
    INFO("widths 12 -> 8 -> 5 -> 3, 30 steps per layer");
    check_stack_size(stack, widths);
    for (size_t l = 0; l < 3; ++l) {
        INFO("layer " << l + 1);
        check_shape(stack[l].enc_weight, {widths[l + 1], widths[l]}, "W");
        check_shape(stack[l].dec_weight, {widths[l], widths[l + 1]}, "W'");
    }
    const ag::Tensor codes = ex18::encode_stack(stack, x);
    check_shape(codes, {20, 3}, "the stacked encoder's output");
    const std::vector<ref::Layer> expected = ref::train_stack(x, widths, 30, 1.0, theirs);
    for (size_t l = 0; l < 3; ++l) {
        INFO("layer " << l + 1 << " after training, against the reference's");
        check_same_layers(stack[l], expected[l], 1e-9);
    }
    check_stack_leftovers(stack, mine, theirs);
    {
        INFO("the stacked codes h(W_3 h(W_2 h(W_1 x + b_1) + b_2) + b_3): " << grading::tensor_diff(
                 codes, ref::encode_stack(expected, x)));
        CHECK(grading::same_tensor(codes, ref::encode_stack(expected, x), 1e-9));
    }
    check_shape(ex18::encode_stack(std::vector<ex18::Layer>(stack.begin(), stack.begin() + 2), x), {20, 5},
                "the first two layers' codes");
    INFO("an empty stack encodes nothing: encode_stack({}, x) is x");
    CHECK(grading::same_tensor(ex18::encode_stack({}, x), x, 0.0));
}

TEST_CASE("ex18 greedy stacking: one layer, no layer, no training step") {
    ag::Generator gen(24);
    const ag::Tensor x = pixels(gen, 10, 12);
    {
        INFO("widths {12, 4}: one layer, trained 15 steps on x");
        ag::Generator mine(3), theirs(3);
        const std::vector<ex18::Layer> stack = ex18::train_stack(x, {12, 4}, 15, 1.0, mine);
        check_stack_size(stack, {12, 4});
        check_same_layers(stack[0], ref::train_stack(x, {12, 4}, 15, 1.0, theirs)[0], 1e-9);
        check_stack_leftovers(stack, mine, theirs);
    }
    {
        INFO("widths {12}: no layer to train");
        ag::Generator mine(3);
        check_stack_size(ex18::train_stack(x, {12}, 15, 1.0, mine), {12});
    }
    {
        INFO("steps = 0: every layer is as new_layer drew it");
        ag::Generator mine(4), theirs(4);
        const std::vector<ex18::Layer> stack = ex18::train_stack(x, {12, 8, 5}, 0, 1.0, mine);
        check_stack_size(stack, {12, 8, 5});
        const ref::Layer first = ref::new_layer(12, 8, theirs), second = ref::new_layer(8, 5, theirs);
        check_same_layers(stack[0], first, 0.0);
        check_same_layers(stack[1], second, 0.0);
        check_stack_leftovers(stack, mine, theirs);
    }
}

TEST_CASE("ex18 the stacked encoder passes gradients to every encoder (fine-tuning)") {
    // §2.4: the stacked encoders then sit under a classifier and are
    // fine-tuned together, so a gradient of the codes must reach W_l and
    // b_l of every layer (the codes are only cut off from the graph while
    // the stack is being pre-trained, in train_stack).
    ag::Generator gen(25);
    const ag::Tensor x = pixels(gen, 4, 5);
    const std::vector<int64_t> widths{5, 4, 3, 2};
    std::vector<ex18::Layer> stack;
    for (size_t l = 1; l < widths.size(); ++l) {
        const ref::Layer r = ref::new_layer(widths[l - 1], widths[l], gen);
        stack.push_back({r.enc_weight, r.enc_bias, r.dec_weight, r.dec_bias});
    }
    const ag::Tensor codes = ex18::encode_stack(stack, x);
    check_shape(codes, {4, 2}, "the stacked encoder's output");
    if (codes.requires_grad()) ag::sum(codes).backward();
    for (size_t l = 0; l < stack.size(); ++l) {
        if (!stack[l].enc_weight.grad().defined() || !stack[l].enc_bias.grad().defined())
            FAIL("no gradient of the codes reached layer "
                 << l + 1 << "'s encoder (W_" << l + 1 << ", b_" << l + 1
                 << "): build encode and encode_stack from engine ops on the tensors given, without detach(), "
                    "data() or a NoGradGuard, so that the stack can be fine-tuned");
        if (stack[l].dec_weight.grad().defined() || stack[l].dec_bias.grad().defined())
            FAIL("a gradient of the codes reached layer " << l + 1
                                                          << "'s decoder: the stacked encoder uses the "
                                                             "encoders only, h(W_n … h(W_1 x + b_1) … + b_n)");
    }
    std::vector<ag::Tensor> encoders;
    for (const ex18::Layer& l : stack) encoders.insert(encoders.end(), {l.enc_weight, l.enc_bias});
    grading::check_gradients(
        "d codes / d (W_1, b_1, W_2, b_2, W_3, b_3)",
        [&](const std::vector<ag::Tensor>& p) {
            std::vector<ex18::Layer> layers = stack;
            for (size_t l = 0; l < layers.size(); ++l) {
                layers[l].enc_weight = p[2 * l];
                layers[l].enc_bias = p[2 * l + 1];
            }
            return ex18::encode_stack(layers, x);
        },
        encoders);
}
