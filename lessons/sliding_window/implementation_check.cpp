#include "lessons/sliding_window/implementation_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "autograd/autograd.h"
#include "lessons/sliding_window/implementations.h"

namespace lessons::sliding_window {
namespace {

// One head as ag::causal_attention wants it: [T, d] -> [1, T, 1, d].
ag::Tensor one_head(const ag::Tensor& x) { return x.reshape({1, x.size(0), 1, x.size(1)}); }

struct Qkv {
    ag::Tensor q, k, v;
};
Qkv random_qkv(int64_t T, int64_t d, uint64_t seed) {
    ag::Generator gen(seed);
    Qkv x{ag::Tensor::randn({T, d}, gen), ag::Tensor::randn({T, d}, gen), ag::Tensor::randn({T, d}, gen)};
    return x;
}

// Milliseconds that one call takes.
double ms_of(const std::function<void()>& call) {
    const auto start = std::chrono::steady_clock::now();
    call();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// One length's calls: the untimed first, and the median, fastest and
// slowest of the timed ones.
void add_length(Calls& calls, double first, std::vector<double> ms) {
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    calls.first_ms.push_back(first);
    calls.median_ms.push_back((ms[(n - 1) / 2] + ms[n / 2]) / 2);  // of an even count, the mean of the middle two
    calls.fastest_ms.push_back(ms.front());
    calls.slowest_ms.push_back(ms.back());
}

}  // namespace

const std::vector<Implementation>& window_implementations() {
    static const std::vector<Implementation> implementations{
        {"naive", naive_window_attention, naive_scores, 2.0},
        {"for loop", loop_window_attention, loop_scores, 1.0},
        {"sliding chunks", chunked_window_attention, chunked_scores, 1.0}};
    return implementations;
}

double flops(const Implementation& implementation, int64_t T, int64_t window, int64_t d) {
    return 4.0 * static_cast<double>(d) * static_cast<double>(implementation.scores(T, window));
}

double growth_exponent(const std::vector<double>& lengths, const std::vector<double>& y) {
    if (lengths.size() != y.size() || lengths.size() < 2)
        throw std::invalid_argument(
            fmt::format("growth_exponent: {} lengths and {} values; a fit needs one value per length, two or more",
                        lengths.size(), y.size()));
    // log y = log c + p·log T: with u = log T and v = log y, the slope
    // p = Σ (u - ū)(v - v̄) / Σ (u - ū)².
    std::vector<double> u, v;
    for (size_t i = 0; i < lengths.size(); ++i) {
        u.push_back(std::log(lengths[i]));
        v.push_back(std::log(y[i]));
    }
    const auto mean = [](const std::vector<double>& x) {
        return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
    };
    const double u_mean = mean(u), v_mean = mean(v);
    double uv = 0.0, uu = 0.0;
    for (size_t i = 0; i < u.size(); ++i) {
        uv += (u[i] - u_mean) * (v[i] - v_mean);
        uu += (u[i] - u_mean) * (u[i] - u_mean);
    }
    return uv / uu;
}

ag::Tensor engine_window_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    return ag::causal_attention(one_head(q), one_head(k), one_head(v), window).reshape(q.shape());
}

EqualityCheck compare_with_engine(int64_t T, int64_t d, const std::vector<int64_t>& windows, int seeds) {
    ag::NoGradGuard no_grad;
    EqualityCheck check;
    for (const int64_t W : windows) {
        EqualOutputs outputs{W, {}};
        for (const Implementation& impl : window_implementations()) {
            double diff = 0.0;
            for (int seed = 0; seed < seeds; ++seed) {
                const Qkv x = random_qkv(T, d, static_cast<uint64_t>(seed));
                diff = std::max(
                    diff, ag::max_abs_diff(impl.run(x.q, x.k, x.v, W), engine_window_attention(x.q, x.k, x.v, W)));
            }
            check.worst = std::max(check.worst, diff);
            outputs.diff.push_back(diff);
        }
        check.windows.push_back(std::move(outputs));
    }
    return check;
}

Timing time_implementations(const std::vector<int64_t>& lengths, int64_t window, int64_t d, int repeats) {
    if (repeats < 1) throw std::invalid_argument(fmt::format("time_implementations: {} timed calls", repeats));
    ag::NoGradGuard no_grad;
    const ag::ThreadCountGuard one_thread(1);
    const std::vector<Implementation>& implementations = window_implementations();
    std::vector<WindowAttention> runs{engine_window_attention};  // the engine, then the three
    for (const Implementation& impl : implementations) runs.push_back(impl.run);
    Timing timing;
    timing.repeats = repeats;
    timing.implementations.resize(implementations.size());
    for (const int64_t length : lengths) {
        const Qkv x = random_qkv(length, d, 0);
        std::vector<ag::Tensor> out(runs.size());
        const auto call = [&](size_t i) { return ms_of([&] { out[i] = runs[i](x.q, x.k, x.v, window); }); };
        std::vector<double> first;
        for (size_t i = 0; i < runs.size(); ++i) first.push_back(call(i));
        for (size_t i = 1; i < runs.size(); ++i)
            timing.worst = std::max(timing.worst, ag::max_abs_diff(out[i], out[0]));
        std::vector<std::vector<double>> ms(runs.size());
        for (int round = 0; round < repeats; ++round)
            for (size_t i = 0; i < runs.size(); ++i) ms[i].push_back(call(i));
        add_length(timing.engine, first[0], ms[0]);
        for (size_t i = 1; i < runs.size(); ++i) add_length(timing.implementations[i - 1], first[i], ms[i]);
        timing.lengths.push_back(static_cast<double>(length));
    }
    return timing;
}

}  // namespace lessons::sliding_window
