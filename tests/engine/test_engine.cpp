// The engine: accumulation, backward's errors, grad mode, detach,
// retain_grad, topological order, long chains and freeing the graph.
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "engine/helpers.h"

using ag::Shape;
using ag::Tensor;

TEST_CASE("a tensor used twice accumulates its gradient", "[engine][autograd]") {
    // y = Σ (x*x + x): dy/dx = 2x + 1
    Tensor x = Tensor::from({3}, {1, -2, 0.5}, true);
    ag::sum(x * x + x).backward();
    CHECK_TENSOR(x.grad(), {3}, {3, -3, 2});

    // three uses along different paths: y = Σ (x·exp(x) + x) / x... keep it simple:
    // z = Σ (2x + x·x·x): dz/dx = 2 + 3x²
    Tensor w = Tensor::from({2}, {1, 2}, true);
    ag::sum(w * 2.0 + w * w * w).backward();
    CHECK_TENSOR(w.grad(), {2}, {5, 14});

    // a diamond: h = 3x; y = Σ (h·h + h) -> dy/dx = 3(2h + 1) = 18x + 3
    Tensor d = Tensor::from({2}, {1, -1}, true);
    const Tensor h = d * 3.0;
    ag::sum(h * h + h).backward();
    CHECK_TENSOR(d.grad(), {2}, {21, -15});
}

TEST_CASE("gradients accumulate across backward calls until zero_grad", "[engine][autograd]") {
    Tensor x = Tensor::from({2}, {1, 2}, true);
    CHECK_FALSE(x.grad().defined());
    ag::sum(x * 2.0).backward();
    CHECK_TENSOR(x.grad(), {2}, {2, 2});
    ag::sum(x * x).backward();  // + 2x
    CHECK_TENSOR(x.grad(), {2}, {4, 6});
    x.zero_grad();
    CHECK_FALSE(x.grad().defined());
    ag::sum(x * 3.0).backward();
    CHECK_TENSOR(x.grad(), {2}, {3, 3});
    // the gradient of a leaf never requires grad itself
    CHECK_FALSE(x.grad().requires_grad());
}

TEST_CASE("backward with an explicit gradient", "[engine][autograd]") {
    // y = 2x (non-scalar); backward(g) gives dx = 2g
    Tensor x = Tensor::from({2, 2}, {1, 2, 3, 4}, true);
    const Tensor y = x * 2.0;
    y.backward(Tensor::from({2, 2}, {1, 0, -1, 0.5}));
    CHECK_TENSOR(x.grad(), {2, 2}, {2, 0, -2, 1});
}

TEST_CASE("backward on a non-scalar without a gradient throws", "[engine][autograd][errors]") {
    Tensor x = Tensor::from({3}, {1, 2, 3}, true);
    const Tensor y = x * 2.0;
    std::string message;
    try {
        y.backward();
    } catch (const std::exception& e) {
        message = e.what();
    }
    INFO("message: \"" << message << "\"");
    CHECK_FALSE(message.empty());
    // the message names backward and the offending shape
    CHECK_THAT(message, Catch::Contains("backward") && Catch::Contains("[3]"));
    CHECK_THROWS_AS(y.backward(), std::exception);
}

TEST_CASE("backward twice through a freed graph throws", "[engine][autograd][errors]") {
    Tensor x = Tensor::from({2}, {1, 2}, true);
    const Tensor loss = ag::sum(ag::exp(x) * x);
    loss.backward();
    const auto first = x.grad().to_vector();
    CHECK_THROWS_AS(loss.backward(), std::exception);
    // the message says why: the graph was freed
    CHECK_THROWS_WITH(loss.backward(), Catch::Contains("freed"));
    // the failed second call did not change the gradient
    CHECK(x.grad().to_vector() == first);
}

TEST_CASE("backward on a NaN loss throws", "[engine][autograd][errors]") {
    Tensor x = Tensor::from({2}, {-1, 2}, true);
    const Tensor loss = ag::sum(ag::sqrt(x));  // sqrt(-1) = NaN
    REQUIRE(std::isnan(loss.item()));
    CHECK_THROWS_AS(loss.backward(), std::exception);
    CHECK_THROWS_WITH(loss.backward(), Catch::Contains("nan", Catch::CaseSensitive::No));
    Tensor y = Tensor::from({1}, {std::numeric_limits<double>::quiet_NaN()}, true);
    CHECK_THROWS_AS(ag::sum(y * 2.0).backward(), std::exception);
}

TEST_CASE("NoGradGuard stops recording and restores the mode, nested", "[engine][autograd][gradmode]") {
    Tensor x = Tensor::from({2}, {1, 2}, true);
    REQUIRE(ag::GradMode::is_enabled());
    {
        ag::NoGradGuard outer;
        CHECK_FALSE(ag::GradMode::is_enabled());
        const Tensor y = x * 2.0 + x;
        CHECK(y.grad_fn() == nullptr);
        CHECK_FALSE(y.requires_grad());
        CHECK_TENSOR(y, {2}, {3, 6});
        {
            ag::NoGradGuard inner;
            CHECK_FALSE(ag::GradMode::is_enabled());
        }
        CHECK_FALSE(ag::GradMode::is_enabled());  // inner restored "off", not "on"
        const Tensor z = ag::matmul(x.reshape({1, 2}), x.reshape({2, 1}));
        CHECK(z.grad_fn() == nullptr);
        CHECK_FALSE(z.requires_grad());
    }
    CHECK(ag::GradMode::is_enabled());
    const Tensor y = x * 2.0;
    CHECK(y.grad_fn() != nullptr);
    CHECK(y.requires_grad());

    // set_enabled(false) directly, then a guard restores false
    ag::GradMode::set_enabled(false);
    { ag::NoGradGuard g; }
    CHECK_FALSE(ag::GradMode::is_enabled());
    ag::GradMode::set_enabled(true);
}

TEST_CASE("OpLog lists the ops run, recorded or not, and nests", "[engine][autograd]") {
    Tensor x = Tensor::from({2}, {1, 2}, true);
    ag::OpLog outer;
    const Tensor y = x * 2.0;
    {
        ag::OpLog inner;
        ag::NoGradGuard no_grad;
        const Tensor z = ag::exp(Tensor::from({2}, {0, 1}));  // nothing requires grad: still an op run
        CHECK(inner.ops() == std::vector<std::string>{"exp"});
    }
    const Tensor w = ag::sum(y);
    CHECK(outer.ops().size() == 2);
    CHECK(outer.ran("sum"));
    CHECK_FALSE(outer.ran("exp"));  // the inner log took it
}

// A function that starts a thread of its own cannot hide an op from the
// log: the exercises' bans on the fused ops hold on every thread.
TEST_CASE("OpLog lists the ops run on other threads too", "[engine][autograd]") {
    const Tensor x = Tensor::from({1, 1, 2}, {1, 0});
    ag::OpLog log;
    std::thread other([&] { ag::rope(x, {0}, 10000.0, ag::RopePairing::Half); });
    other.join();
    CHECK(log.ops() == std::vector<std::string>{"rope"});
}

// A gradient computed by the engine shows in the log as a backward run.
TEST_CASE("OpLog lists each run of backward()", "[engine][autograd]") {
    const Tensor x = Tensor::from({2}, {1, 2}, true);
    ag::OpLog log;
    ag::sum(x * x).backward();
    const std::vector<std::string> ops = log.ops();  // then the ops mul's backward runs: dy·x twice
    REQUIRE(ops.size() >= 3);
    CHECK(std::vector<std::string>(ops.begin(), ops.begin() + 3) ==
          std::vector<std::string>{"mul", "sum", ag::kBackwardRun});
}

// The fused ops with a fast path when nothing is recorded (no slope or σ
// kept for a backward) still log their names: the exercises' tests rely on
// it to see that a hand-built op does not call the engine's fused one.
TEST_CASE("OpLog lists the fused activations also when nothing is recorded", "[engine][autograd]") {
    const Tensor a = Tensor::from({2}, {-1, 2}, true), b = Tensor::from({2}, {3, 4}, true);
    for (const bool no_grad : {false, true}) {
        INFO((no_grad ? "under NoGradGuard" : "in grad mode"));
        std::optional<ag::NoGradGuard> guard;
        if (no_grad) guard.emplace();
        ag::OpLog log;
        ag::gelu(a);
        ag::silu(a);
        ag::swiglu(a, b);
        CHECK(log.ops() == std::vector<std::string>{"gelu", "silu", "swiglu"});
    }
}

TEST_CASE("detach shares storage and has no history", "[engine][autograd]") {
    Tensor x = Tensor::from({3}, {1, 2, 3}, true);
    const Tensor y = x * 2.0;
    Tensor d = y.detach();
    CHECK(d.impl()->storage == y.impl()->storage);
    CHECK(d.grad_fn() == nullptr);
    CHECK_FALSE(d.requires_grad());
    CHECK(d.is_leaf());
    y.impl()->storage->at(1) = 40;  // writes through y's storage are visible in d
    CHECK(d.at({1}) == 40);
    Tensor xd = x.detach();
    xd.data()[0] = -5;
    CHECK(x.at({0}) == -5);
    // a computation on the detached tensor does not reach x
    Tensor u = Tensor::from({3}, {1, 1, 1}, true);
    ag::sum(u * x.detach()).backward();
    CHECK_FALSE(x.grad().defined());
    CHECK(u.grad().defined());
}

TEST_CASE("retain_grad keeps the gradient of a non-leaf", "[engine][autograd]") {
    Tensor x = Tensor::from({2}, {1, 2}, true);
    Tensor h = x * 3.0;      // non-leaf, dL/dh = 2h
    Tensor other = x + 1.0;  // non-leaf without retain_grad
    CHECK_FALSE(h.is_leaf());
    h.retain_grad();
    ag::sum(h * h + other).backward();
    CHECK_TENSOR(h.grad(), {2}, {6, 12});   // 2h = 2·[3, 6]
    CHECK_TENSOR(x.grad(), {2}, {19, 37});  // 3·2h + 1 = 18x + 1
    CHECK_FALSE(other.grad().defined());
}

TEST_CASE("requires_grad_ on a leaf", "[engine][autograd]") {
    Tensor x = Tensor::from({2}, {3, 4});
    CHECK_FALSE(x.requires_grad());
    CHECK(ag::sum(x * x).grad_fn() == nullptr);
    x.requires_grad_();
    CHECK(x.requires_grad());
    CHECK(x.is_leaf());
    ag::sum(x * x).backward();
    CHECK_TENSOR(x.grad(), {2}, {6, 8});
    x.requires_grad_(false);
    CHECK_FALSE(x.requires_grad());
    CHECK(ag::sum(x * x).grad_fn() == nullptr);
}

TEST_CASE("record makes a node only when an input requires grad", "[engine][autograd]") {
    const Tensor c = Tensor::from({2}, {1, 2});
    Tensor x = Tensor::from({2}, {1, 2}, true);
    auto bw = [](const Tensor& g) { return std::vector<Tensor>{g}; };
    const Tensor r1 = ag::record("ident", c.clone(), {c}, bw);
    CHECK(r1.grad_fn() == nullptr);
    CHECK_FALSE(r1.requires_grad());
    const Tensor r2 = ag::record("ident", x.detach().clone(), {x}, bw);
    REQUIRE(r2.grad_fn() != nullptr);
    CHECK(r2.grad_fn()->op == "ident");
    CHECK(r2.requires_grad());
    CHECK_FALSE(r2.is_leaf());
    // ops name their nodes
    CHECK(ag::matmul(x.reshape({1, 2}), x.reshape({2, 1})).grad_fn()->op == "matmul");
    CHECK(ag::add(x, x).grad_fn()->op == "add");
    // a returned gradient of a broadcast shape is summed down to the input:
    // out [3,2] from x [2]; the backward returns g [3,2] as is
    const Tensor out =
        ag::record("bcast", Tensor::zeros({3, 2}), {x}, [](const Tensor& g) { return std::vector<Tensor>{g}; });
    out.backward(Tensor::ones({3, 2}));
    CHECK_TENSOR(x.grad(), {2}, {3, 3});
}

TEST_CASE("topological_order lists each node once after its inputs", "[engine][autograd][graph]") {
    Tensor x = Tensor::from({2}, {1, 2}, true);
    Tensor w = Tensor::from({2}, {3, 4}, true);
    const Tensor a = x * w;          // node 1
    const Tensor b = ag::exp(a);     // node 2
    const Tensor c = a + b;          // node 3 (a used twice)
    const Tensor d = c * a;          // node 4
    const Tensor loss = ag::sum(d);  // node 5
    const auto order = ag::topological_order(loss);
    REQUIRE(order.size() == 5);
    std::map<const ag::Node*, std::size_t> position;
    for (std::size_t i = 0; i < order.size(); ++i) {
        REQUIRE(order[i] != nullptr);
        CAPTURE(i, order[i]->op);
        CHECK(position.count(order[i].get()) == 0);  // once
        position[order[i].get()] = i;
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
        for (const Tensor& in : order[i]->inputs) {
            if (!in.grad_fn()) continue;
            CAPTURE(i, order[i]->op, in.grad_fn()->op);
            REQUIRE(position.count(in.grad_fn().get()) == 1);
            CHECK(position[in.grad_fn().get()] < i);  // input's node comes first
        }
    }
    CHECK(order.back() == loss.grad_fn());
    CHECK(order.front() == a.grad_fn());
    // a leaf has no nodes
    CHECK(ag::topological_order(x).empty());
}

TEST_CASE("a long chain runs backward without stack overflow", "[engine][autograd][graph]") {
    // y = x + x + ... (100001 uses of x) through 100000 sequential adds
    Tensor x = Tensor::scalar(0.5, true);
    Tensor y = x;
    for (int i = 0; i < 100000; ++i) y = y + x;
    y.backward();
    CHECK(x.grad().item() == 100001.0);
    CHECK(y.item() == 0.5 * 100001.0);
}

// A graph that is dropped without backward (an evaluation that forgot
// NoGradGuard, an exception in a training step) is freed by the chain of
// shared_ptr destructors: Tensor -> Node -> inputs -> Tensor -> ... A
// recursive teardown overflows the stack on a long chain. Run in a child
// process so that a crash fails this test only.
TEST_CASE("a long graph dropped without backward is freed without stack overflow", "[engine][autograd][graph]") {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        {
            Tensor x = Tensor::scalar(0.5, true);
            Tensor y = x;
            for (int i = 0; i < 200000; ++i) y = y + x;
        }  // y and its 200000-node graph are destroyed here
        _exit(0);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    INFO("child building and dropping a 200000-node chain: "
         << (WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                 : "exit code " + std::to_string(WEXITSTATUS(status)))
         << " (signal 11 = SIGSEGV: stack overflow in the recursive destructor chain)");
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("the graph is freed after backward", "[engine][autograd][graph]") {
    Tensor x = Tensor::from({2}, {1, 2}, true);
    const Tensor h = ag::tanh(x * 2.0);
    const Tensor loss = ag::sum(h * h);
    const auto order = ag::topological_order(loss);
    REQUIRE(order.size() == 4);
    for (const auto& node : order) {
        CAPTURE(node->op);
        CHECK_FALSE(node->released);
        CHECK_FALSE(node->inputs.empty());
    }
    // x*2, read by tanh, is held by nobody but the graph
    const std::weak_ptr<ag::TensorImpl> x_times_2 = order[1]->inputs.at(0).impl_ptr();
    std::weak_ptr<ag::TensorImpl> x_seen_by_graph = x.impl_ptr();
    REQUIRE_FALSE(x_times_2.expired());
    loss.backward();
    for (const auto& node : order) {
        CAPTURE(node->op);
        CHECK(node->released);
        CHECK(node->inputs.empty());
    }
    INFO("after backward the intermediate x*2 must be freed (use_count "
         << x_times_2.use_count() << ") and x referenced only by the test (use_count " << x_seen_by_graph.use_count()
         << ")");
    CHECK(x_times_2.expired());
    CHECK(x_seen_by_graph.use_count() == 1);
    CHECK(x.grad().defined());
}
