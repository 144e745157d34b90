#include "lessons/common/sharded_gradient.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "autograd/thread_pool.h"

namespace lessons {

using ag::Tensor;

namespace {

// Adds its scope's seconds and the engine's counters over it (this
// thread's) to *phase; does nothing when phase is null.
class PhaseTimer {
public:
    explicit PhaseTimer(ShardedGradient::Timing::Phase* phase) : phase_(phase) {
        if (!phase_) return;
        engine_ = ag::profile::this_thread();
        start_ = std::chrono::steady_clock::now();
        ag::profile::start_forward();  // the phase's first op is timed from here
    }
    ~PhaseTimer() {
        if (!phase_) return;
        phase_->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        phase_->engine += ag::profile::this_thread() - engine_;
    }
    PhaseTimer(const PhaseTimer&) = delete;
    PhaseTimer& operator=(const PhaseTimer&) = delete;

private:
    ShardedGradient::Timing::Phase* phase_;
    ag::profile::Counters engine_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace

int64_t ShardSchedule::place_in_burst() const {
    const int64_t place = steps_[0] + steps_[1] - next_burst_;
    return place >= 0 && place < static_cast<int64_t>(kRecent) ? place : -1;
}

bool ShardSchedule::side_by_side() const { return place_in_burst() >= 0 ? !preferred_ : preferred_; }

void ShardSchedule::record(double seconds_per_token) {
    const int64_t place = place_in_burst();
    const bool way = side_by_side();
    std::vector<double>& recent = recent_[way];
    if (place == 0) recent.clear();  // a burst starts: the probed way's figure is this burst's alone
    recent.push_back(seconds_per_token);
    if (recent.size() > kRecent) recent.erase(recent.begin());
    ++steps_[way];
    const int64_t now = steps_[0] + steps_[1];
    last_[way] = now;
    const bool burst_over = place == static_cast<int64_t>(kRecent) - 1;
    if ((place >= 0 && !burst_over) || recent_[0].empty() || recent_[1].empty()) return;  // nothing to choose yet
    const bool faster = figure(true) <= figure(false);
    if (!burst_over && faster != preferred_ && now - last_[faster] > kRecheck) {
        next_burst_ = now;  // the other way's figure is old: a burst measures it again, from the next step
        return;
    }
    const bool before = preferred_;
    preferred_ = faster;
    if (preferred_ != before || burst_over) next_burst_ = now + (preferred_ != before ? kRecheck : kProbeEvery);
}

double ShardSchedule::figure(bool side_by_side) const {
    std::vector<double> sorted = recent_[side_by_side];
    std::sort(sorted.begin(), sorted.end());
    return sorted[(sorted.size() - 1) / 2];  // the median (of an even count, the lower middle)
}

void ShardedGradient::set_timing(Timing* timing) {
    timing_ = timing;
    if (timing_) {
        timing_->forward.resize(replicas_.size());
        timing_->backward.resize(replicas_.size());
    }
}

ShardedGradient::ShardedGradient(nn::LanguageModel& model, int shards) : params_(model.parameters()) {
    if (shards < 1) throw std::invalid_argument(fmt::format("ShardedGradient: {} shards", shards));
    for (int r = 0; r < shards; ++r) {
        auto replica = std::make_unique<nn::LanguageModel>(model.config(), 0);
        std::vector<Tensor> params = replica->parameters();
        for (size_t i = 0; i < params.size(); ++i) {  // same architecture: same parameters, same order
            params[i].set_(params_[i]);               // the replica reads the model's numbers
            params[i].requires_grad_(params_[i].requires_grad());
        }
        replicas_.push_back(std::move(replica));
        replica_params_.push_back(std::move(params));
    }
}

std::vector<std::vector<int64_t>> shard_sequences(const std::vector<int64_t>& starts, int shards) {
    const auto B = static_cast<int64_t>(starts.size()) - 1;
    const auto length = [&](int64_t b) { return starts[static_cast<size_t>(b) + 1] - starts[static_cast<size_t>(b)]; };
    std::vector<int64_t> longest_first(static_cast<size_t>(B));
    std::iota(longest_first.begin(), longest_first.end(), int64_t{0});
    std::stable_sort(longest_first.begin(), longest_first.end(),
                     [&](int64_t x, int64_t y) { return length(x) > length(y); });
    std::vector<int64_t> tokens(static_cast<size_t>(shards), 0);
    std::vector<int> shard_of(static_cast<size_t>(B));
    for (const int64_t b : longest_first) {
        const auto r = static_cast<size_t>(std::min_element(tokens.begin(), tokens.end()) - tokens.begin());
        shard_of[static_cast<size_t>(b)] = static_cast<int>(r);
        tokens[r] += length(b);
    }
    std::vector<std::vector<int64_t>> sequences(static_cast<size_t>(shards));
    for (int64_t b = 0; b < B; ++b) sequences[static_cast<size_t>(shard_of[static_cast<size_t>(b)])].push_back(b);
    return sequences;
}

double ShardedGradient::forward_backward(const Tensor& ids, const Tensor& targets, const std::vector<int64_t>& starts) {
    const int shards = static_cast<int>(replicas_.size());
    const int64_t B = static_cast<int64_t>(starts.size()) - 1, N = starts.empty() ? 0 : starts.back();
    if (B < 1 || ids.dim() != 1 || ids.size(0) != N || targets.shape() != ids.shape())
        throw std::invalid_argument(fmt::format("ShardedGradient: ids {} and targets {} for {} packed rows",
                                                ag::shape_str(ids.shape()), ag::shape_str(targets.shape()), N));
    if (starts.front() != 0 || !std::is_sorted(starts.begin(), starts.end()))
        throw std::invalid_argument(
            fmt::format("ShardedGradient: sequence starts must run from 0 to N = {} without decreasing", N));
    const std::vector<std::vector<int64_t>> sequences = shard_sequences(starts, shards);
    const Tensor all_ids = ids.contiguous(), all_targets = targets.contiguous();
    std::vector<double> losses(static_cast<size_t>(shards), 0.0);
    // Side by side or one after another (ShardSchedule): a choice to make
    // only when the shards could run side by side at all.
    const bool choose = shards > 1 && ag::num_threads() > 1 && !ag::detail::in_parallel_region() && !timing_;
    const bool side_by_side = !choose || schedule_.side_by_side();
    const int threads = side_by_side ? 0 : 1;  // parallel_tasks' max_threads: 0 all, 1 the caller only
    side_by_side_ = side_by_side;
    const auto start = std::chrono::steady_clock::now();
    // One task per shard; the kernels inside a shard run on its thread only.
    const auto run_shard = [&](int64_t shard) {
        const int r = static_cast<int>(shard);
        nn::LanguageModel& replica = *replicas_[static_cast<size_t>(r)];
        replica.zero_grad();
        // the shard's sequences, packed end to end: their ids and targets
        // (copied), and where each starts in the shard
        std::vector<int64_t> local = {0};
        std::vector<double> shard_ids, shard_targets;
        for (const int64_t b : sequences[static_cast<size_t>(r)]) {
            const int64_t r0 = starts[static_cast<size_t>(b)], r1 = starts[static_cast<size_t>(b) + 1];
            shard_ids.insert(shard_ids.end(), all_ids.data() + r0, all_ids.data() + r1);
            shard_targets.insert(shard_targets.end(), all_targets.data() + r0, all_targets.data() + r1);
            local.push_back(local.back() + r1 - r0);
        }
        const int64_t n = local.back();
        if (n == 0) return;
        Tensor loss;
        {
            const PhaseTimer timed(timing_ ? &timing_->forward[static_cast<size_t>(r)] : nullptr);
            const Tensor logits =
                replica.forward(Tensor::from({n}, std::move(shard_ids)), nn::Packing::from_starts(std::move(local)));
            loss = ag::cross_entropy(logits, Tensor::from({n}, std::move(shard_targets)));
        }
        // The batch's mean loss is Σ_r (N_r / N) · (shard r's mean loss),
        // N_r = n its tokens: backward from the shard's mean with weight
        // N_r / N, and the shards' gradients add up to the batch's.
        const double share = static_cast<double>(n) / static_cast<double>(N);
        losses[static_cast<size_t>(r)] = loss.item() * share;
        // A loss that is NaN or infinite has no gradient to follow (backward()
        // refuses it): the returned loss tells the caller, which stops.
        if (!std::isfinite(loss.item())) return;
        const PhaseTimer timed(timing_ ? &timing_->backward[static_cast<size_t>(r)] : nullptr);
        loss.backward(Tensor::scalar(share));
    };
    // each shard's seconds so far, to find this call's slowest (timing_ only)
    std::vector<double> before(timing_ ? replicas_.size() : 0);
    for (size_t r = 0; r < before.size(); ++r) before[r] = timing_->forward[r].seconds + timing_->backward[r].seconds;
    ag::parallel_tasks(shards, run_shard, threads);  // rethrows the first exception
    double slowest = 0;
    for (size_t r = 0; r < before.size(); ++r)
        slowest = std::max(slowest, timing_->forward[r].seconds + timing_->backward[r].seconds - before[r]);

    // The model's gradient += Σ_r the replicas' gradients, in shard order:
    // grad[j] (+)= (g_0[j] + g_1[j]) + …
    const auto sum_start = std::chrono::steady_clock::now();
    const auto count = static_cast<int64_t>(params_.size());
    const auto sum_parameter = [&](int64_t i) {
        Tensor p = params_[static_cast<size_t>(i)];
        if (!p.requires_grad()) return;
        // The shards' gradients of p, in shard order, each taken from its
        // replica (which no longer holds it): leaf gradients own their
        // numbers, so the first one can hold the sum.
        std::vector<Tensor> grads;
        for (auto& params : replica_params_) {
            Tensor& q = params[static_cast<size_t>(i)];
            if (Tensor g = q.grad(); g.defined()) {
                grads.push_back(g);
                q.zero_grad();
            }
        }
        if (grads.empty()) return;
        // sum = (g_0 + g_1) + …, in g_0's buffer: one pass per shard after
        // the first, and no new buffer
        double* s = grads[0].data();
        const int64_t n = grads[0].numel();
        for (size_t r = 1; r < grads.size(); ++r) {
            const double* g = grads[r].data();
            for (int64_t j = 0; j < n; ++j) s[j] += g[j];
        }
        // the model's gradient: the sum, or += the sum if it has one
        // (gradients accumulated over several calls)
        if (!p.grad().defined()) {
            p.set_grad(grads[0]);
            return;
        }
        double* out = p.grad().data();
        for (int64_t j = 0; j < n; ++j) out[j] += s[j];
    };
    ag::parallel_tasks(count, sum_parameter, threads);
    const auto end = std::chrono::steady_clock::now();
    if (timing_) {
        timing_->slowest_seconds += slowest;
        timing_->sum_seconds += std::chrono::duration<double>(end - sum_start).count();
    }
    if (choose && N > 0) schedule_.record(std::chrono::duration<double>(end - start).count() / static_cast<double>(N));
    double total = 0.0;
    for (double l : losses) total += l;
    return total;
}

void ShardedGradient::step(optim::Optimizer& optimizer) const {
    if (side_by_side_) {
        optimizer.step();
        return;
    }
    // one task on the caller only: the update's kernels run on this thread
    ag::parallel_tasks(
        1, [&](int64_t) { optimizer.step(); }, 1);
}

}  // namespace lessons
