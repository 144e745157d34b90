#pragma once
// Read-only timing counters for `bench_train --profile`: how much of a
// training step is the GEMM, the storage pool and the graph, and which ops
// take the rest, measured inside the engine (nothing outside it can split
// them). Off by default; when off each hook costs one relaxed atomic load
// and a branch. When on, four places add to the calling thread's counters:
// kernels::gemm_batched (every matrix product, packing included), the
// storage pool's allocate, the graph: record() in the forward pass, the
// topological sort and its bookkeeping in run_backward, and the ops:
//   - an op's forward is the time from the previous node recorded on this
//     thread (or from start_forward()) to its own: an op computes, then
//     records its node, so that interval is the op;
//   - an op's backward is its node's backward function in run_backward,
//     with the accumulation of the gradients it returns.
// Both include the GEMM and the allocations inside the op. Nothing else
// changes: the counters are written by the engine and only read by the
// caller.
//
//     ag::profile::set_enabled(true);
//     const ag::profile::Counters before = ag::profile::this_thread();
//     ag::profile::start_forward();
//     ... forward, backward, on this thread ...
//     const ag::profile::Counters spent = ag::profile::this_thread() - before;
//
// A thread's counters count what ran on that thread: a product that
// splits between threads counts once, on the thread that called it, with
// its wall time.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace ag::profile {

// One op's time: forward and backward seconds, and how many times it ran.
struct OpTime {
    double forward_seconds = 0, backward_seconds = 0;
    int64_t calls = 0;
};

struct Counters {
    double gemm_seconds = 0, gemm_flops = 0;  // inside the GEMM; 2·M·N·K per product
    int64_t gemm_calls = 0;
    double alloc_seconds = 0;  // inside the storage pool's allocate (tensor storage)
    int64_t allocations = 0;
    double graph_seconds = 0;           // record() (graph nodes); run_backward's sort of the graph
    int64_t nodes = 0;                  // graph nodes recorded
    std::map<std::string, OpTime> ops;  // by op name, as record() names it; only ops that ran

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
// The forward pass starts here: the next op recorded on this thread is
// timed from now. (Called by whoever times a forward pass.)
void start_forward();
namespace detail {
void add_forward(const char* op);
void add_backward(const std::string& op, std::chrono::steady_clock::time_point started);
}  // namespace detail
// record() of a node for `op`: the time since the previous node (or
// start_forward()) is op's forward.
inline void count_forward(const char* op) {
    if (enabled()) detail::add_forward(op);
}
// The time now when profiling is on (else a zero time_point, read free).
inline std::chrono::steady_clock::time_point now() {
    return enabled() ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
}
// run_backward: op's backward ran from `started` (a now()) to now.
inline void count_backward(const std::string& op, std::chrono::steady_clock::time_point started) {
    if (enabled()) detail::add_backward(op, started);
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
