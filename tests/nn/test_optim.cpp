// Optimisers, gradient clipping and learning-rate schedules, against values
// worked out by hand from PyTorch's update rules.
#include <cmath>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "catch.h"

#include "engine/helpers.h"
#include "nn/optim.h"
#include "nn/schedule.h"

using ag::Tensor;

namespace {

// Gives p the gradient g by backpropagating loss = Σ p ⊙ g.
void set_grad(Tensor p, const std::vector<double>& g) {
    p.zero_grad();
    ag::sum(p * Tensor::from(p.shape(), g)).backward();
}

// One optimiser step with the gradient g on a single parameter.
void step_with(optim::Optimizer& opt, const Tensor& p, const std::vector<double>& g) {
    set_grad(p, g);
    opt.step();
}

}  // namespace

TEST_CASE("AdamW: three steps with a constant gradient, no weight decay", "[nn][optim]") {
    const double lr = 0.1, eps = 1e-8;
    const std::vector<double> p0 = {1.0, -2.0, 0.5}, g = {0.5, -1.0, 2.0};
    Tensor p = Tensor::from({3}, p0, true);
    optim::AdamW opt({p}, lr, 0.9, 0.999, eps, 0.0);

    // With a constant g, m_t = (1 - β1^t) g and v_t = (1 - β2^t) g², so the
    // bias-corrected moments are m̂ = g and v̂ = g² at every step, and
    // each step moves p by exactly lr · g / (|g| + eps), about lr · sign(g):
    //   t = 1: m = 0.1 g, v = 0.001 g²,           m̂ = m / 0.1,    v̂ = v / 0.001
    //   t = 2: m = 0.19 g, v = 0.001999 g²,       m̂ = m / 0.19,   v̂ = v / 0.001999
    //   t = 3: m = 0.271 g, v = 0.002997001 g²,   m̂ = m / 0.271,  v̂ = v / 0.002997001
    for (int t = 1; t <= 3; ++t) {
        step_with(opt, p, g);
        std::vector<double> expected(3);
        for (std::size_t i = 0; i < 3; ++i) expected[i] = p0[i] - t * lr * g[i] / (std::fabs(g[i]) + eps);
        INFO("after step " << t);
        CHECK_TENSOR(p, {3}, expected, 1e-15);
    }
    // The first element written out: 1 - 3 · 0.1 · 0.5 / (0.5 + 1e-8) = 0.700000006.
    CHECK(p.at({0}) == Approx(0.700000006).epsilon(1e-15));
}

TEST_CASE("AdamW: three steps with a constant gradient and decoupled weight decay", "[nn][optim]") {
    const double lr = 0.1, eps = 1e-8, wd = 0.1;
    const std::vector<double> p0 = {1.0, -2.0, 0.5}, g = {0.5, -1.0, 2.0};
    Tensor p = Tensor::from({3}, p0, true);
    optim::AdamW opt({p}, lr, 0.9, 0.999, eps, wd);

    // Decoupled decay first shrinks p by (1 - lr·wd) = 0.99, then the Adam
    // step (lr · g / (|g| + eps), as above) is subtracted; the decay does
    // not go through m and v (that would be Adam with L2, not AdamW).
    //   p_t = 0.99 p_{t-1} - lr g / (|g| + eps)
    std::vector<double> expected = p0;
    for (int t = 1; t <= 3; ++t) {
        step_with(opt, p, g);
        for (std::size_t i = 0; i < 3; ++i)
            expected[i] = (1 - lr * wd) * expected[i] - lr * g[i] / (std::fabs(g[i]) + eps);
        INFO("after step " << t);
        CHECK_TENSOR(p, {3}, expected, 1e-15);
    }
    // The first element written out, with u = 0.1 · 0.5 / (0.5 + 1e-8) = 0.099999998:
    //   p1 = 0.99 - u = 0.890000002,  p2 = 0.99 p1 - u = 0.78110000398,  p3 = 0.99 p2 - u = 0.6732890059402
    CHECK(p.at({0}) == Approx(0.6732890059402).epsilon(1e-14));
}

TEST_CASE("AdamW: a changing gradient follows the textbook recurrences", "[nn][optim]") {
    const double lr = 0.01, b1 = 0.8, b2 = 0.95, eps = 1e-6, wd = 0.05;
    const std::vector<std::vector<double>> grads = {{1.0, -0.5}, {-2.0, 0.25}, {0.5, 3.0}, {0.0, -1.0}};
    Tensor p = Tensor::from({2}, {0.3, -0.7}, true);
    optim::AdamW opt({p}, lr, b1, b2, eps, wd);

    std::vector<double> ref = {0.3, -0.7}, m(2, 0.0), v(2, 0.0);
    for (std::size_t t = 1; t <= grads.size(); ++t) {
        step_with(opt, p, grads[t - 1]);
        for (std::size_t i = 0; i < 2; ++i) {
            const double gi = grads[t - 1][i];
            m[i] = b1 * m[i] + (1 - b1) * gi;
            v[i] = b2 * v[i] + (1 - b2) * gi * gi;
            const double m_hat = m[i] / (1 - std::pow(b1, t)), v_hat = v[i] / (1 - std::pow(b2, t));
            ref[i] = ref[i] * (1 - lr * wd) - lr * m_hat / (std::sqrt(v_hat) + eps);
        }
        INFO("after step " << t);
        CHECK_TENSOR(p, {2}, ref, 1e-14);
    }
}

TEST_CASE("AdamW's update rounds exactly as PyTorch's formula written out, division by division", "[nn][optim]") {
    // The step divides √v by √(1 - β2^t) without a division instruction
    // (nn/optim.cpp, divide_by); that must not change a single bit. Here
    // every weight is checked, bit for bit, against _single_tensor_adamw's
    // operations written out with `/`, over gradients from 1e-170 to 1e150
    // (v from subnormal to 1e300), zeros, some of 1e200 (v overflows to +inf
    // and that weight's update is 0), several β2 and steps, and a β1 whose
    // 1 - β1 >= 0.5 (PyTorch's lerp then starts from the gradient's end).
    const int64_t n = 20000;
    ag::Generator gen(11);
    const std::vector<double> unit = Tensor::randn({n}, gen).to_vector(),
                              scale = Tensor::uniform({n}, gen, 0.0, 1.0).to_vector();
    for (const auto& [beta1, beta2] : std::vector<std::pair<double, double>>{{0.9, 0.999}, {0.9, 0.95}, {0.3, 0.3}}) {
        const double lr = 0.01, eps = 1e-8, wd = 0.01, w = 1.0 - beta1;
        Tensor p = Tensor::from({n}, unit, true);
        optim::AdamW opt({p}, lr, beta1, beta2, eps, wd);
        std::vector<double> ref = unit, m(n, 0.0), v(n, 0.0);
        for (int t = 1; t <= 6; ++t) {
            std::vector<double> g(n);
            for (int64_t i = 0; i < n; ++i)  // |g| = 10^(320 · scale - 170), some 0, some 1e200
                g[i] = i % 97 == 0   ? 0.0
                       : i % 89 == 0 ? 1e200
                                     : unit[(i + t) % n] * std::pow(10.0, 320.0 * scale[(i * 7 + t) % n] - 170.0);
            step_with(opt, p, g);
            const double bc1 = 1.0 - std::pow(beta1, t), bc2_sqrt = std::sqrt(1.0 - std::pow(beta2, t));
            for (int64_t i = 0; i < n; ++i) {
                ref[i] *= 1.0 - lr * wd;
                m[i] = w < 0.5 ? m[i] + w * (g[i] - m[i]) : g[i] - (g[i] - m[i]) * (1.0 - w);  // torch.lerp
                v[i] = v[i] * beta2 + (1.0 - beta2) * g[i] * g[i];
                ref[i] += -(lr / bc1) * m[i] / (std::sqrt(v[i]) / bc2_sqrt + eps);
            }
            const std::vector<double> got = p.to_vector();
            int64_t differ = 0, first = -1;
            for (int64_t i = 0; i < n; ++i)
                if (got[i] != ref[i] && !(std::isnan(got[i]) && std::isnan(ref[i])) && differ++ == 0) first = i;
            INFO("beta1 " << beta1 << ", beta2 " << beta2 << ", step " << t << ": " << differ << " of " << n
                          << " weights differ"
                          << (first >= 0 ? test::values_str({got[first], ref[first]}) + " (got, expected)" : ""));
            CHECK(differ == 0);
        }
    }
}

TEST_CASE("SGD with momentum: three steps against hand values", "[nn][optim]") {
    SECTION("constant gradient, no weight decay") {
        // buf1 = g, buf2 = 0.9 g + g = 1.9 g, buf3 = 0.9 · 1.9 g + g = 2.71 g
        // p3 = p0 - 0.1 (1 + 1.9 + 2.71) g = p0 - 0.561 g
        Tensor p = Tensor::from({2}, {1.0, -2.0}, true);
        optim::SGD opt({p}, 0.1, 0.9);
        for (int t = 0; t < 3; ++t) step_with(opt, p, {0.5, -1.0});
        CHECK_TENSOR(p, {2}, {1.0 - 0.561 * 0.5, -2.0 + 0.561}, 1e-15);
    }
    SECTION("with weight decay 0.1: d = g + 0.1 p") {
        // element 0, p0 = 1, g = 0.5, lr = 0.1, momentum 0.9:
        //   d1 = 0.5 + 0.1       = 0.6      buf1 = 0.6                       p1 = 1 - 0.06         = 0.94
        //   d2 = 0.5 + 0.094     = 0.594    buf2 = 0.54 + 0.594   = 1.134    p2 = 0.94 - 0.1134    = 0.8266
        //   d3 = 0.5 + 0.08266   = 0.58266  buf3 = 1.0206 + 0.58266 = 1.60326  p3 = 0.8266 - 0.160326 = 0.666274
        // element 1 is element 0 times -2 (p0 = -2, g = -1; every step is linear).
        Tensor p = Tensor::from({2}, {1.0, -2.0}, true);
        optim::SGD opt({p}, 0.1, 0.9, 0.1);
        step_with(opt, p, {0.5, -1.0});
        CHECK_TENSOR(p, {2}, {0.94, -1.88}, 1e-15);
        step_with(opt, p, {0.5, -1.0});
        CHECK_TENSOR(p, {2}, {0.8266, -1.6532}, 1e-15);
        step_with(opt, p, {0.5, -1.0});
        CHECK_TENSOR(p, {2}, {0.666274, -1.332548}, 1e-15);
    }
    SECTION("no momentum: plain p -= lr g") {
        Tensor p = Tensor::from({2}, {1.0, -2.0}, true);
        optim::SGD opt({p}, 0.5);
        step_with(opt, p, {0.5, -1.0});
        step_with(opt, p, {0.5, -1.0});
        CHECK_TENSOR(p, {2}, {0.5, -1.0}, 0.0);
    }
}

TEST_CASE("optimisers update in place: the module's handle sees the new values", "[nn][optim]") {
    Tensor p = Tensor::from({2, 2}, {1, 2, 3, 4}, true);
    const Tensor held = p;  // what a module keeps
    const double* before = p.data();
    optim::SGD opt({p}, 1.0);
    step_with(opt, p, {1, 1, 1, 1});
    CHECK(p.data() == before);
    CHECK_TENSOR(held, {2, 2}, {0, 1, 2, 3}, 0.0);
    CHECK(ag::GradMode::is_enabled());  // step() restored grad mode
}

TEST_CASE("parameters without a gradient are skipped and keep no state", "[nn][optim]") {
    Tensor a = Tensor::from({2}, {1.0, 2.0}, true);
    Tensor b = Tensor::from({2}, {3.0, 4.0}, true);
    optim::AdamW opt({a, b}, 0.1);
    for (int t = 0; t < 3; ++t) step_with(opt, a, {1.0, -1.0});  // b never gets a gradient
    REQUIRE_FALSE(b.grad().defined());
    CHECK_TENSOR(b, {2}, {3.0, 4.0}, 0.0);  // not even weight decay touched it

    // b's own step count starts now: its first step equals a fresh
    // optimiser's first step (lr/(1-β1) m = lr g, not a 4th step's).
    a.zero_grad();
    step_with(opt, b, {0.5, 0.5});
    Tensor fresh = Tensor::from({2}, {3.0, 4.0}, true);
    optim::AdamW fresh_opt({fresh}, 0.1);
    step_with(fresh_opt, fresh, {0.5, 0.5});
    CHECK_TENSOR(b, {2}, fresh.to_vector(), 0.0);
}

TEST_CASE("frozen parameters are untouched, even with a stale gradient", "[nn][optim]") {
    for (const bool adam : {true, false}) {
        INFO((adam ? "AdamW" : "SGD"));
        Tensor w = Tensor::from({2}, {1.0, 2.0}, true);
        Tensor frozen = Tensor::from({2}, {3.0, 4.0}, true);
        set_grad(frozen, {1.0, 1.0});  // a gradient from before it was frozen
        frozen.requires_grad_(false);
        std::unique_ptr<optim::Optimizer> opt;
        if (adam)
            opt = std::make_unique<optim::AdamW>(std::vector<Tensor>{w, frozen}, 0.1);
        else
            opt = std::make_unique<optim::SGD>(std::vector<Tensor>{w, frozen}, 0.1, 0.9, 0.1);
        step_with(*opt, w, {1.0, 1.0});
        CHECK_TENSOR(frozen, {2}, {3.0, 4.0}, 0.0);
        CHECK(w.at({0}) < 1.0);  // while the trainable one moved
    }
}

TEST_CASE("zero_grad drops every gradient", "[nn][optim]") {
    Tensor a = Tensor::from({2}, {1.0, 2.0}, true);
    optim::SGD opt({a}, 0.1);
    set_grad(a, {1.0, 1.0});
    REQUIRE(a.grad().defined());
    opt.zero_grad();
    CHECK_FALSE(a.grad().defined());
}

TEST_CASE("optimisers refuse bad parameters and hyperparameters", "[nn][optim]") {
    Tensor a = Tensor::from({2, 3}, {1, 2, 3, 4, 5, 6}, true);
    CHECK_THROWS_WITH(optim::SGD({a, a}, 0.1), Catch::Contains("appears twice"));
    CHECK_THROWS_WITH(optim::SGD({Tensor()}, 0.1), Catch::Contains("undefined"));
    CHECK_THROWS_WITH(optim::SGD({a.t()}, 0.1), Catch::Contains("not contiguous"));
    CHECK_THROWS_WITH(optim::SGD({a}, -0.1), Catch::Contains("learning rate"));
    CHECK_THROWS_WITH(optim::SGD({a}, 0.1, -0.9), Catch::Contains("momentum"));
    CHECK_THROWS_WITH(optim::AdamW({a}, 0.1, 1.0), Catch::Contains("beta1"));
    CHECK_THROWS_WITH(optim::AdamW({a}, 0.1, 0.9, -0.1), Catch::Contains("beta2"));
    CHECK_THROWS_WITH(optim::AdamW({a}, 0.1, 0.9, 0.999, -1.0), Catch::Contains("eps"));
    CHECK_THROWS_WITH(optim::AdamW({a}, 0.1, 0.9, 0.999, 1e-8, -0.01), Catch::Contains("weight_decay"));
}

TEST_CASE("clip_grad_norm scales all gradients together and returns the norm", "[nn][optim]") {
    Tensor a = Tensor::from({2}, {0.0, 0.0}, true);
    Tensor b = Tensor::from({1}, {0.0}, true);
    Tensor frozen = Tensor::from({1}, {0.0}, true);
    Tensor no_grad = Tensor::from({1}, {0.0}, true);
    set_grad(frozen, {1000.0});
    frozen.requires_grad_(false);  // its stale gradient counts for nothing
    const std::vector<Tensor> params = {a, b, frozen, no_grad};

    SECTION("below max_norm: nothing changes") {
        set_grad(a, {3.0, 4.0});
        set_grad(b, {12.0});
        CHECK(optim::clip_grad_norm(params, 100.0) == 13.0);  // sqrt(9 + 16 + 144)
        CHECK_TENSOR(a.grad(), {2}, {3.0, 4.0}, 0.0);
        CHECK_TENSOR(b.grad(), {1}, {12.0}, 0.0);
    }
    SECTION("above max_norm: scaled by max_norm / (norm + 1e-6)") {
        set_grad(a, {3.0, 4.0});
        set_grad(b, {12.0});
        CHECK(optim::clip_grad_norm(params, 6.5) == 13.0);
        const double c = 6.5 / (13.0 + 1e-6);  // about 0.5
        CHECK_TENSOR(a.grad(), {2}, {3.0 * c, 4.0 * c}, 1e-15);
        CHECK_TENSOR(b.grad(), {1}, {12.0 * c}, 1e-15);
        // the new norm is max_norm, up to the 1e-6
        const double norm =
            std::sqrt(std::pow(a.grad().at({0}), 2) + std::pow(a.grad().at({1}), 2) + std::pow(b.grad().at({0}), 2));
        CHECK(norm == Approx(6.5).epsilon(1e-6));
        CHECK_TENSOR(frozen.grad(), {1}, {1000.0}, 0.0);
    }
}

TEST_CASE("AdamW minimises a quadratic", "[nn][optim]") {
    ag::Generator gen(7);
    const Tensor target = Tensor::randn({4, 5}, gen);
    Tensor p = Tensor::zeros({4, 5}, true);
    optim::AdamW opt({p}, 0.1, 0.9, 0.999, 1e-8, 0.0);
    const optim::WarmupCosine schedule(0.1, 0.0, 10, 400);
    auto loss_value = [&] { return ag::mse_loss(p, target); };
    const double initial = loss_value().item();
    for (int64_t step = 0; step < 400; ++step) {
        opt.zero_grad();
        loss_value().backward();
        opt.lr = schedule.lr(step);
        opt.step();
    }
    const double final_loss = loss_value().item();
    INFO("loss " << initial << " -> " << final_loss);
    CHECK(initial > 0.5);
    CHECK(final_loss < 1e-8);
    CHECK(ag::max_abs_diff(p, target) < 1e-3);
}

TEST_CASE("optimiser steps on large tensors are the same for any thread count", "[nn][optim][threads]") {
    const int64_t n = 1 << 16;  // above the parallel grain
    ag::Generator gen(3);
    const Tensor init = Tensor::randn({n}, gen), grad = Tensor::randn({n}, gen);
    auto run = [&](int threads, bool adam) {
        const ag::ThreadCountGuard use(threads);
        Tensor p = init.clone().detach().requires_grad_();
        std::unique_ptr<optim::Optimizer> opt;
        if (adam)
            opt = std::make_unique<optim::AdamW>(std::vector<Tensor>{p}, 0.01);
        else
            opt = std::make_unique<optim::SGD>(std::vector<Tensor>{p}, 0.01, 0.9, 0.01);
        for (int t = 0; t < 3; ++t) step_with(*opt, p, grad.to_vector());
        return p.to_vector();
    };
    for (const bool adam : {true, false}) {
        INFO((adam ? "AdamW" : "SGD"));
        const auto one = run(1, adam), many = run(4, adam);
        CHECK(one == many);
    }
}

// ---- schedules --------------------------------------------------------------

TEST_CASE("constant schedule", "[nn][schedule]") {
    const optim::Constant s(3e-4);
    CHECK(s.lr(0) == 3e-4);
    CHECK(s.lr(123456) == 3e-4);
}

TEST_CASE("warmup + cosine: endpoints, monotone parts, floor after the end", "[nn][schedule]") {
    const double lr_max = 1e-3, lr_min = 1e-4;
    const optim::WarmupCosine s(lr_max, lr_min, 10, 110);
    CHECK(s.lr(0) == 0.0);
    CHECK(s.lr(5) == Approx(0.5 * lr_max).epsilon(1e-15));            // halfway up
    CHECK(s.lr(10) == lr_max);                                        // the peak
    CHECK(s.lr(60) == Approx((lr_max + lr_min) / 2).epsilon(1e-14));  // halfway down: cos(π/2) = 0
    CHECK(s.lr(110) == lr_min);
    CHECK(s.lr(1000) == lr_min);
    for (int64_t t = 1; t <= 10; ++t) {
        INFO("warmup step " << t);
        CHECK(s.lr(t) > s.lr(t - 1));
    }
    for (int64_t t = 11; t <= 110; ++t) {
        INFO("decay step " << t);
        CHECK(s.lr(t) < s.lr(t - 1));
        CHECK(s.lr(t) >= lr_min);
    }
    // no warmup: starts at the peak
    CHECK(optim::WarmupCosine(1.0, 0.0, 0, 100).lr(0) == 1.0);

    CHECK_THROWS_AS(optim::WarmupCosine(1.0, 0.0, 20, 10), std::invalid_argument);
    CHECK_THROWS_AS(optim::WarmupCosine(1.0, 2.0, 0, 10), std::invalid_argument);
    CHECK_THROWS_AS(s.lr(-1), std::invalid_argument);
}
