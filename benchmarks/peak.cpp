#include "benchmarks/peak.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace bench {
namespace {

// One vector register of doubles, as wide as the target's widest (see peak.h).
constexpr int kVectorBytes = __BIGGEST_ALIGNMENT__;
using Vec = double __attribute__((vector_size(kVectorBytes)));
constexpr int kLanes = kVectorBytes / static_cast<int>(sizeof(double));
constexpr int kChains = 12;  // independent FMA chains per thread (peak.h)

// b and c are read through volatiles and the result written to one, so the
// compiler can neither fold the loop into a closed form nor drop it.
volatile double factor = 0.999999, offset = 1e-6, sink = 0.0;

// `iterations` × kChains vector FMAs on the calling thread. With b just
// below 1 every chain converges (to c / (1 - b) = 1) instead of growing:
// no overflow, no denormals to slow it down.
double fma_chains(int64_t iterations) {
    const Vec b = Vec{} + factor, c = Vec{} + offset;
    Vec acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = Vec{} + (1.0 + 1e-3 * i);
    for (int64_t it = 0; it < iterations; ++it) {
        // unrolled: acc stays in kChains registers, kChains FMAs per iteration
#pragma GCC unroll 16
        for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * b + c;
    }
    double sum = 0.0;
    for (int i = 0; i < kChains; ++i)
        for (int l = 0; l < kLanes; ++l) sum += acc[i][l];
    return sum;
}

// Seconds for `iterations` of the loop on `threads` threads at once, from
// the moment all of them have started until the last one is done.
double timed_run(int threads, int64_t iterations) {
    using clock = std::chrono::steady_clock;
    clock::time_point start, stop;
    double total = 0.0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
#pragma omp barrier
#pragma omp master
        start = clock::now();
        total += fma_chains(iterations);
#pragma omp barrier
#pragma omp master
        stop = clock::now();
    }
    sink = total;
    return std::chrono::duration<double>(stop - start).count();
}

// The number of threads a parallel region of `threads` really gets
// (OMP_THREAD_LIMIT may cap it).
int team_size(int threads) {
    int got = 1;
#pragma omp parallel num_threads(threads)
#pragma omp master
    got = omp_get_num_threads();
    return got;
}

}  // namespace

int vector_lanes() { return kLanes; }

double fma_peak_gflops(int threads) {
    const int team = team_size(std::max(threads, 1));
    // Warm up (threads started, clock ramped) and size the runs: ~20 ms each.
    int64_t iterations = int64_t{1} << 18;
    double seconds = timed_run(team, iterations);
    while (seconds < 0.05) {
        iterations *= 2;
        seconds = timed_run(team, iterations);
    }
    iterations = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(iterations) * 0.02 / seconds));
    double best = 1e30;
    for (int run = 0; run < 10; ++run) best = std::min(best, timed_run(team, iterations));
    const double flops = 2.0 * kLanes * kChains * static_cast<double>(iterations) * team;
    return flops / best * 1e-9;
}

}  // namespace bench
