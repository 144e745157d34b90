#pragma once
// §6.2 the slides' three implementations (implementations.h) against the
// engine's fused ag::causal_attention: the same output, and what each costs
// as T grows (the naive one O(T²), the sliding chunks O(T·W)): FLOPs counted
// from the shapes, time measured, and the exponent p of time ≈ c·T^p.
#include <cstdint>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace lessons::sliding_window {

using WindowAttention = ag::Tensor (*)(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window);
using ScoreCount = int64_t (*)(int64_t T, int64_t window);
struct Implementation {
    std::string name;
    WindowAttention run;
    ScoreCount scores;  // the query-key scores it computes for T queries
    double exponent;    // the lecture's: its work grows as T^exponent at a fixed W (2: O(T²), 1: O(T·W))
};
// naive, for loop, sliding chunks: the slides' order.
const std::vector<Implementation>& window_implementations();

// The FLOPs of its two matrix products, 4·d per score: q·k is d multiplies
// and d adds, and so is adding the score's weight times v's row of d. The
// mask and the softmax add a few operations per score, not d.
double flops(const Implementation& implementation, int64_t T, int64_t window, int64_t d);

// The exponent p of y ≈ c·T^p: the least-squares slope of log y against
// log T, over every point.
double growth_exponent(const std::vector<double>& lengths, const std::vector<double>& y);

// One head through the engine: q, k, v [T, d] as [1, T, 1, d].
ag::Tensor engine_window_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window);

// Per window: the largest |implementation - engine| over the entries of
// q, k, v ~ N(0, 1) [T, d] drawn with ag::Generator(seed), seeds 0 … seeds-1.
struct EqualOutputs {
    int64_t window = 0;
    std::vector<double> diff;  // per implementation, in window_implementations()' order
};
struct EqualityCheck {
    std::vector<EqualOutputs> windows;
    double worst = 0.0;  // the largest diff of all
};
EqualityCheck compare_with_engine(int64_t T, int64_t d, const std::vector<int64_t>& windows, int seeds);

// Time per call on one thread for each length T, q, k, v ~ N(0, 1) [T, d]
// from ag::Generator(0): one untimed call of each (it takes its memory
// fresh from the system; later calls reuse the engine's pool), then
// `repeats` rounds in which each is called once, in turn, so that a burst
// of load on a shared machine slows them alike. The engine's output is the
// reference the others are checked against.
struct Calls {
    std::vector<double> first_ms;                           // per length: the untimed call
    std::vector<double> median_ms, fastest_ms, slowest_ms;  // per length, over the timed calls
};
struct Timing {
    int repeats = 0;
    std::vector<double> lengths;         // T
    std::vector<Calls> implementations;  // in window_implementations()' order
    Calls engine;
    double worst = 0.0;  // the largest |implementation - engine| of the outputs
};
Timing time_implementations(const std::vector<int64_t>& lengths, int64_t window, int64_t d, int repeats);

}  // namespace lessons::sliding_window
