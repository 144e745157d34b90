#include "autograd/profile.h"

namespace ag::profile {

namespace detail {
std::atomic<bool> on{false};
Counters& counters() {
    thread_local Counters mine;
    return mine;
}
}  // namespace detail

void set_enabled(bool enabled) { detail::on.store(enabled, std::memory_order_relaxed); }

Counters& Counters::operator-=(const Counters& o) {
    gemm_seconds -= o.gemm_seconds;
    gemm_flops -= o.gemm_flops;
    gemm_calls -= o.gemm_calls;
    alloc_seconds -= o.alloc_seconds;
    allocations -= o.allocations;
    graph_seconds -= o.graph_seconds;
    nodes -= o.nodes;
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
    return *this;
}

}  // namespace ag::profile
