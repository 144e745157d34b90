// autograd/profile.h: the per-op counters that `bench_train --profile`
// prints as its op table. A node's op counts one call and its forward time
// when recorded; its backward time in run_backward. The ops a backward runs
// itself (mul's backward calls mul) are part of that backward, never calls
// of their own.
#include "autograd/profile.h"
#include "engine/helpers.h"

namespace {

// Profiling on for a scope, and off again after it (also when a check fails).
struct Profiling {
    Profiling() { ag::profile::set_enabled(true); }
    ~Profiling() { ag::profile::set_enabled(false); }
    Profiling(const Profiling&) = delete;
    Profiling& operator=(const Profiling&) = delete;
};

ag::profile::OpTime time_of(const ag::profile::Counters& spent, const std::string& op) {
    const auto it = spent.ops.find(op);
    return it == spent.ops.end() ? ag::profile::OpTime{} : it->second;
}

// sum(matmul(a, b) ⊙ a) and its backward, on this thread; returns what the
// counters gained over it.
ag::profile::Counters run_step() {
    ag::Generator gen(5);
    ag::Tensor a = ag::Tensor::randn({64, 64}, gen), b = ag::Tensor::randn({64, 64}, gen);
    a.requires_grad_();
    b.requires_grad_();
    const ag::profile::Counters before = ag::profile::this_thread();
    ag::profile::start_forward();
    ag::Tensor loss = ag::sum(ag::mul(ag::matmul(a, b), a));
    loss.backward();
    return ag::profile::this_thread() - before;
}

}  // namespace

TEST_CASE("profile: each op of a step counts one call, its forward and its backward", "[engine][profile]") {
    const Profiling on;
    const ag::profile::Counters spent = run_step();
    for (const char* op : {"matmul", "mul", "sum"}) {
        const ag::profile::OpTime t = time_of(spent, op);
        INFO(op << ": " << t.calls << " calls, forward " << t.forward_seconds << " s, backward " << t.backward_seconds
                << " s (mul's backward runs mul twice: those belong to its backward, not to its calls)");
        CHECK(t.calls == 1);
        CHECK(t.forward_seconds > 0);
        CHECK(t.backward_seconds > 0);
    }
    CHECK(spent.ops.size() == 3);  // and no other op: a difference of counters keeps only ops that ran
}

TEST_CASE("profile: off, no op is counted", "[engine][profile]") {
    const ag::profile::Counters spent = run_step();
    INFO(spent.ops.size() << " ops counted, the first " << (spent.ops.empty() ? "" : spent.ops.begin()->first));
    CHECK(spent.ops.empty());
}
