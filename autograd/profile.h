#pragma once
// Read-only timing counters for `bench_train --profile`: how much of a
// training step is the GEMM, the storage pool and the graph, measured
// inside the engine (nothing outside it can split them). Off by default;
// when off each hook costs one relaxed atomic load and a branch. When on,
// three places add to the calling thread's counters: kernels::gemm_batched
// (every matrix product, packing included), the storage pool's allocate,
// and the graph: record() in the forward pass, the topological sort and its
// bookkeeping in run_backward. Nothing else changes: the counters are
// written by the engine and only read by the caller.
//
//     ag::profile::set_enabled(true);
//     const ag::profile::Counters before = ag::profile::this_thread();
//     ... forward, backward, on this thread ...
//     const ag::profile::Counters spent = ag::profile::this_thread() - before;
//
// A thread's counters count what ran on that thread: a product that
// splits between threads counts once, on the thread that called it, with
// its wall time.
#include <atomic>
#include <chrono>
#include <cstdint>

namespace ag::profile {

struct Counters {
    double gemm_seconds = 0, gemm_flops = 0;  // inside the GEMM; 2·M·N·K per product
    int64_t gemm_calls = 0;
    double alloc_seconds = 0;  // inside the storage pool's allocate (tensor storage)
    int64_t allocations = 0;
    double graph_seconds = 0;  // record() (graph nodes); run_backward's sort of the graph
    int64_t nodes = 0;         // graph nodes recorded

    Counters& operator-=(const Counters& o);
    Counters& operator+=(const Counters& o);
};
inline Counters operator-(Counters a, const Counters& b) { return a -= b; }
inline Counters operator+(Counters a, const Counters& b) { return a += b; }

namespace detail {
extern std::atomic<bool> on;
Counters& counters();  // this thread's
}  // namespace detail

void set_enabled(bool enabled);
inline bool enabled() { return detail::on.load(std::memory_order_relaxed); }
// This thread's running totals since it started (never reset).
inline const Counters& this_thread() { return detail::counters(); }

// The hooks' counts, when profiling is on.
inline void count_gemm(double flops) {
    if (!enabled()) return;
    Counters& c = detail::counters();
    ++c.gemm_calls;
    c.gemm_flops += flops;
}
inline void count_allocation() {
    if (enabled()) ++detail::counters().allocations;
}
inline void count_node() {
    if (enabled()) ++detail::counters().nodes;
}

// Adds the seconds of its scope to *into, when profiling was on at its start.
class Stopwatch {
public:
    explicit Stopwatch(double Counters::*into) : into_(enabled() ? into : nullptr) {
        if (into_) start_ = std::chrono::steady_clock::now();
    }
    ~Stopwatch() {
        if (into_)
            detail::counters().*into_ +=
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }
    Stopwatch(const Stopwatch&) = delete;
    Stopwatch& operator=(const Stopwatch&) = delete;

private:
    double Counters::*into_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace ag::profile
