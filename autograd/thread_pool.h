#pragma once
// The engine's own threads (no OpenMP): a fixed team of workers that the
// calling thread wakes for a parallel region and then joins as one of them.
//
// A region is cut into `pieces` numbered 0 … pieces-1, chosen by the caller
// from the data alone (never from which thread runs what): each piece is run
// exactly once, by whichever thread claims it first, the caller included. So
// a kernel whose pieces write disjoint outputs gives the same bits for any
// thread count, and when a worker is late (asleep, or its core taken by
// another process) the caller simply runs that worker's pieces itself:
// 2 threads are never much slower than 1.
//
// How workers wait (thread_pool.cpp): they spin briefly on one atomic, then
// sleep on a condition variable; the engine decides this for every program,
// whatever OMP_WAIT_POLICY / GOMP_SPINCOUNT say.
//
// Nesting and concurrency: a region started inside a piece (a kernel inside
// one of parallel_tasks' tasks) runs all its pieces serially on that thread.
// One user thread at a time owns the workers; a region started by a second
// user thread while the first one's region runs (tests that train on two
// std::threads) runs serially on its own thread, with the same results.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

#include "autograd/engine.h"

namespace ag {

// Runs fn(i) for every i < count on the engine's threads, each i once, in no
// fixed order (the next free thread takes the next i: costly tasks first
// balance best). Kernels inside a task run on that task's thread only. If
// tasks throw, every task still runs and the first exception is rethrown
// here. For independent jobs: the data-parallel shards of a batch,
// independent training runs.
//
// At most max_threads threads take tasks (0: all of the engine's); with 1,
// the caller runs every task, one after another, and the kernels inside
// still run on the caller only, as they would on a team of threads. (A
// single task with max_threads 0 is a plain call: its kernels split.)
void parallel_tasks(int64_t count, const std::function<void(int64_t)>& fn, int max_threads = 0);

namespace detail {

// A non-owning reference to a callable void(int64_t piece): no allocation
// per region (kernels start thousands of regions a second).
class PieceFn {
public:
    template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, PieceFn>>>
    PieceFn(F& f)  // NOLINT: implicit on purpose, like std::function
        : object_(const_cast<void*>(static_cast<const void*>(&f))),
          call_([](void* o, int64_t p) { (*static_cast<F*>(o))(p); }) {}
    void operator()(int64_t piece) const { call_(object_, piece); }

private:
    void* object_;
    void (*call_)(void*, int64_t);
};

// Runs piece(p) for p = 0 … pieces-1, on up to min(pieces, num_threads())
// threads (the caller is one of them), and returns when all are done. The
// first exception a piece threw is rethrown (after every piece has run). A
// single piece is no region: it runs as a plain call.
void run_pieces(int64_t pieces, PieceFn piece);

// True inside a piece of a region (on a worker, or on the caller while it
// runs pieces): a region started here would run serially.
bool in_parallel_region();

}  // namespace detail

// Run body(begin, end) over disjoint pieces of [0, n) on the engine's
// threads (autograd/thread_pool.h). Each index belongs to exactly one piece,
// so any result that is a function of its own index is the same for every
// thread count. Small n, and any n inside another parallel region, run inline.
template <typename Body>
void parallel_for(int64_t n, int64_t min_per_thread, Body&& body) {
    const int threads = num_threads();
    if (threads == 1 || n < 2 * min_per_thread || detail::in_parallel_region()) {
        body(int64_t{0}, n);
        return;
    }
    const int64_t pieces = std::min<int64_t>(threads, n / min_per_thread);
    const int64_t chunk = (n + pieces - 1) / pieces;
    auto piece = [&](int64_t t) {
        const int64_t begin = std::min(n, t * chunk), end = std::min(n, begin + chunk);
        if (begin < end) body(begin, end);
    };
    detail::run_pieces(pieces, piece);
}

}  // namespace ag
