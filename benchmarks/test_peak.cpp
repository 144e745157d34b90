// bench::peak_warnings: when the benchmarks say the machine did not hold
// still (benchmarks/peak.h), from given readings instead of measured ones;
// and that the cores' round trip ends on a busy machine.
#include "benchmarks/peak.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "catch.h"

TEST_CASE("peak: steady readings with two cores' worth at 2 threads give no warning") {
    CHECK(bench::peak_warnings({{1, {80.0, 84.0}}, {2, {160.0, 170.0}}}).empty());
    CHECK(bench::peak_warnings({{1, {80.0}}}).empty());  // one reading, one thread count
}

TEST_CASE("peak: a reading that moved by more than 10% is named, with both values") {
    const auto lines = bench::peak_warnings({{1, {90.0, 72.0}}, {2, {170.0, 168.0}}});
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], Catch::StartsWith("the peak at 1 thread moved by 25% during the runs (72.0 to 90.0"));
    CHECK(bench::peak_warnings({{2, {100.0, 109.0}}}).empty());  // 9%: steady
}

TEST_CASE("peak: 2 threads below 1.8x the peak of 1 are said not to have a core each") {
    const auto lines = bench::peak_warnings({{1, {80.0, 80.0}}, {2, {100.0, 104.0}}});
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], Catch::StartsWith("2 threads reach only 1.30x the peak of 1"));
    CHECK(bench::peak_warnings({{1, {80.0}}, {2, {143.0}}}).size() == 1);  // 1.79x
    CHECK(bench::peak_warnings({{1, {80.0}}, {2, {144.0}}}).empty());      // 1.80x
    // The ratio is of the best readings: a slow moment at 1 thread (60)
    // does not make 130 look like two cores' worth.
    const auto both = bench::peak_warnings({{1, {80.0, 60.0}}, {2, {130.0, 130.0}}});
    REQUIRE(both.size() == 2);
    CHECK_THAT(both[0], Catch::StartsWith("the peak at 1 thread moved by 33%"));
    CHECK_THAT(both[1], Catch::StartsWith("2 threads reach only 1.62x"));
}

// bench::core_round_trip_ns ends its rounds by the clock, not by a count of
// turns: with more spinning threads than cores, where every turn can wait
// for a time slice, it still returns soon, with a real figure.
TEST_CASE("core round trip: finishes and gives a positive figure on an oversubscribed machine") {
    std::atomic<bool> stop{false};
    std::vector<std::thread> spinners;
    for (unsigned i = 0; i < 2 * std::max(1u, std::thread::hardware_concurrency()); ++i)
        spinners.emplace_back([&] {
            while (!stop.load(std::memory_order_relaxed)) {
            }
        });
    const auto start = std::chrono::steady_clock::now();
    const double ns = bench::core_round_trip_ns();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stop = true;
    for (std::thread& t : spinners) t.join();
    CHECK(std::isfinite(ns));
    CHECK(ns > 0.0);
    CHECK(seconds < 10.0);  // 80 ms of rounds, and at most 16 turns past each round's end
}
