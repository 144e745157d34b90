#include "benchmarks/peak.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autograd/kernels/vector_width.h"

namespace bench {
namespace {

// One vector register of doubles, as wide as the target's widest (see peak.h).
using ag::kernels::kVectorBytes;
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

// Seconds for `iterations` of the loop on `threads` threads at once (the
// caller is one of them), from the moment all of them are running until the
// last one is done. Plain std::threads: the peak is the machine's, not the
// engine's thread pool's.
double timed_run(int threads, int64_t iterations) {
    using clock = std::chrono::steady_clock;
    std::atomic<int> ready{0};
    std::vector<double> sums(static_cast<size_t>(threads), 0.0);
    std::vector<clock::time_point> ends(static_cast<size_t>(threads));
    const auto one = [&](int t) {
        ready.fetch_add(1);
        while (ready.load() < threads) {  // everyone starts together
        }
        sums[static_cast<size_t>(t)] = fma_chains(iterations);
        ends[static_cast<size_t>(t)] = clock::now();
    };
    std::vector<std::thread> team;
    for (int t = 1; t < threads; ++t) team.emplace_back(one, t);
    ready.fetch_add(1);
    while (ready.load() < threads) {
    }
    const clock::time_point start = clock::now();
    ready.fetch_sub(1);  // the caller's own share runs as thread 0
    one(0);
    for (std::thread& t : team) t.join();
    double total = 0.0;
    for (double v : sums) total += v;
    sink = total;
    return std::chrono::duration<double>(*std::max_element(ends.begin(), ends.end()) - start).count();
}

}  // namespace

int vector_lanes() { return kLanes; }

double fma_peak_gflops(int threads) {
    const int team = std::max(threads, 1);
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

double core_round_trip_ns() {
    using clock = std::chrono::steady_clock;
    // This thread writes the odd turns, the other answers each with the
    // next even one, until it reads -1.
    alignas(64) std::atomic<int64_t> turn{0};
    std::thread other([&] {
        for (int64_t now; (now = turn.load(std::memory_order_acquire)) != -1;)
            if (now % 2 == 1) turn.store(now + 1, std::memory_order_release);
    });
    int64_t n = 1;
    // Nanoseconds per round trip over `duration`: the clock is read every
    // 16 trips, so a core shared with another process (each trip then a
    // time slice long) still ends the round soon after.
    const auto timed_round = [&](std::chrono::milliseconds duration) {
        int64_t trips = 0;
        const clock::time_point start = clock::now();
        for (clock::time_point now = start; now - start < duration; ++trips, n += 2) {
            turn.store(n, std::memory_order_release);
            while (turn.load(std::memory_order_acquire) != n + 1) {
            }
            if (trips % 16 == 0) now = clock::now();
        }
        return std::chrono::duration<double, std::nano>(clock::now() - start).count() / static_cast<double>(trips);
    };
    // A new thread often starts on its creator's core; the first 30 ms give
    // the scheduler time to move one of the two busy threads to the other.
    timed_round(std::chrono::milliseconds(30));
    std::vector<double> rounds;
    for (int r = 0; r < 5; ++r) rounds.push_back(timed_round(std::chrono::milliseconds(10)));
    turn.store(-1, std::memory_order_release);
    other.join();
    std::nth_element(rounds.begin(), rounds.begin() + 2, rounds.end());
    return rounds[2];
}

Peak::Peak(const std::vector<int>& thread_counts) {
    for (int threads : thread_counts) readings_[threads].push_back(fma_peak_gflops(threads));
}

std::string Peak::measure_again() {
    for (auto& [threads, r] : readings_) r.push_back(fma_peak_gflops(threads));
    std::string text = fmt::format("peak, before and after the runs: {}\n", readings());
    for (const std::string& line : peak_warnings(readings_)) text += fmt::format("warning: {}\n", line);
    return text;
}

double Peak::gflops(int threads) const { return readings_.at(threads).front(); }

std::string Peak::readings() const {
    std::vector<std::string> parts;
    for (const auto& [threads, r] : readings_) {
        std::string part = fmt::format("{:.1f}", r.front());
        if (r.size() > 1) part += fmt::format(" then {:.1f}", r.back());
        parts.push_back(fmt::format("{}{} at {} thread{}", part, parts.empty() ? " GFLOP/s" : "", threads,
                                    threads == 1 ? "" : "s"));
    }
    return fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<std::string> peak_warnings(const std::map<int, std::vector<double>>& readings) {
    std::vector<std::string> lines;
    for (const auto& [threads, r] : readings) {
        const auto [low, high] = std::minmax_element(r.begin(), r.end());
        if (*high > 1.1 * *low)
            lines.push_back(
                fmt::format("the peak at {} thread{} moved by {:.0f}% during the runs ({:.1f} to {:.1f} "
                            "GFLOP/s): figures measured in between are uncertain by about as much",
                            threads, threads == 1 ? "" : "s", 100.0 * (*high / *low - 1.0), *low, *high));
    }
    if (readings.count(1) != 0 && readings.count(2) != 0) {
        const double ratio = *std::max_element(readings.at(2).begin(), readings.at(2).end()) /
                             *std::max_element(readings.at(1).begin(), readings.at(1).end());
        if (ratio < 1.8)
            lines.push_back(
                fmt::format("2 threads reach only {:.2f}x the peak of 1 (two free cores give 2x): they "
                            "do not have a core each here (another process, or hyperthreads of one core)",
                            ratio));
    }
    return lines;
}

}  // namespace bench
