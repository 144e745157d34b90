#include "autograd/profile.h"

namespace ag::profile {

namespace detail {
std::atomic<bool> on{false};
Counters& counters() {
    thread_local Counters mine;
    return mine;
}
}  // namespace detail

namespace {
using clock_type = std::chrono::steady_clock;
thread_local clock_type::time_point last_op;  // this thread's previous record(), or start_forward()
}  // namespace

void set_enabled(bool enabled) { detail::on.store(enabled, std::memory_order_relaxed); }

void start_forward() { last_op = clock_type::now(); }

void detail::add_forward(const char* op) {
    const auto now = clock_type::now();
    OpTime& t = detail::counters().ops[op];
    t.forward_seconds += std::chrono::duration<double>(now - last_op).count();
    ++t.calls;
    last_op = now;
}

void detail::add_backward(const std::string& op, clock_type::time_point started) {
    counters().ops[op].backward_seconds += std::chrono::duration<double>(clock_type::now() - started).count();
}

Counters& Counters::operator-=(const Counters& o) {
    gemm_seconds -= o.gemm_seconds;
    gemm_flops -= o.gemm_flops;
    gemm_calls -= o.gemm_calls;
    alloc_seconds -= o.alloc_seconds;
    allocations -= o.allocations;
    graph_seconds -= o.graph_seconds;
    nodes -= o.nodes;
    for (const auto& [op, t] : o.ops) {
        OpTime& mine = ops[op];
        mine.forward_seconds -= t.forward_seconds;
        mine.backward_seconds -= t.backward_seconds;
        mine.calls -= t.calls;
        // an op that did not run in between (after - before): no entry
        if (mine.calls == 0 && mine.forward_seconds == 0 && mine.backward_seconds == 0) ops.erase(op);
    }
    return *this;
}

Counters& Counters::operator+=(const Counters& o) {
    gemm_seconds += o.gemm_seconds;
    gemm_flops += o.gemm_flops;
    gemm_calls += o.gemm_calls;
    alloc_seconds += o.alloc_seconds;
    allocations += o.allocations;
    graph_seconds += o.graph_seconds;
    nodes += o.nodes;
    for (const auto& [op, t] : o.ops) {
        OpTime& mine = ops[op];
        mine.forward_seconds += t.forward_seconds;
        mine.backward_seconds += t.backward_seconds;
        mine.calls += t.calls;
    }
    return *this;
}

}  // namespace ag::profile
