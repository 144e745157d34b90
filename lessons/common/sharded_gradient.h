#pragma once
// One training step's gradient on two cores: a small model's batch is many
// small matrix products, and splitting each op between threads leaves the
// cores waiting at every join. So the batch is split instead.
//
// ShardedGradient computes the gradient of a language model's mean token
// cross-entropy over a packed batch in a fixed number of shards (groups of
// whole sequences with about the same number of tokens). Each shard runs
// forward and backward on its own replica of the model, whose parameters
// share the model's storage (same numbers, an optimiser step on the model
// is seen by the replicas; only the gradients are the replica's own), and
// the shards' gradients are added into the model's in shard order.
//
// Shard r's loss is its mean token loss weighted by its share of the
// batch's tokens, so the sum is the gradient of the batch's mean loss. The
// split does not depend on the thread count, and neither does the order of
// the final sum: 1 thread (shards one after the other) and 2 threads give
// bitwise the same gradients.
//
// Side by side or one after another (ShardSchedule): on an idle machine the
// shards run side by side, one per thread. Beside another busy process one
// of the two threads shares its core and runs at half speed, the shard it
// took holds up the step, and two threads are slower than one. So the step
// times itself and runs its shards whichever way has lately been faster;
// which thread runs a shard changes no bit of the result.
//
//     lessons::ShardedGradient sharded(model);   // 2 shards
//     adam.zero_grad();
//     const double loss = sharded.forward_backward(batch.packed_ids, batch.packed_targets, batch.starts);
//     sharded.step(adam);                         // adam.step(), on the threads the shards ran on
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "autograd/profile.h"
#include "nn/language_model.h"
#include "nn/optim.h"

namespace lessons {

// Which way a step runs its shards: side by side on the engine's threads, or
// one after another on the calling thread. Measured, not assumed: now and
// then a burst of kRecent steps runs the way not taken (a probe); a way's
// figure is the median seconds per token of its last kRecent steps, and the
// way with the lower figure is taken, chosen again after every step outside
// a burst and at the end of each burst. Medians, not single steps: beside a
// busy process one step side by side can be fast (the scheduler briefly
// gives the second thread a core of its own) while most are slow, and one
// slow step (a page fault, a time slice lost) must not flip the choice.
//
// When: the first burst after kFirstProbe steps; after a burst that kept
// the choice, the next one kProbeEvery steps later (on an idle machine the
// probes then cost under 1%: 5 steps in 512 at one thread's speed); after a
// change of way, whether at a burst or because the way taken slowed, a
// burst kRecheck steps later, so that a change made in a passing moment of
// noise (a virtual machine's core briefly taken by the host) is undone
// quickly. And when the way taken slows past the other way's figure while
// that figure is more than kRecheck steps old, a burst right away instead
// of a change: the other way is measured again first. (Beside a busy
// process, a moment in which the one thread shared its core made the
// steps one after another look slower than side by side had been at the
// last burst, up to 512 steps earlier, and sent kRecheck steps side by
// side, at half speed, on that old figure.)
class ShardSchedule {
public:
    static constexpr int64_t kFirstProbe = 8;
    static constexpr int64_t kProbeEvery = 512;
    static constexpr int64_t kRecheck = 32;
    static constexpr size_t kRecent = 5;

    bool side_by_side() const;  // how the next step runs
    // The step just run, the way side_by_side() said: its seconds per token.
    void record(double seconds_per_token);
    // Steps recorded so far that ran that way.
    int64_t steps(bool side_by_side) const { return steps_[side_by_side]; }

private:
    // The next step's place in a burst (0 … kRecent-1), or -1 outside one.
    int64_t place_in_burst() const;
    double figure(bool side_by_side) const;

    std::vector<double> recent_[2];  // seconds per token: [0] one after another, [1] side by side
    int64_t steps_[2] = {0, 0};
    int64_t last_[2] = {0, 0};          // steps recorded (both ways) when each way last ran
    int64_t next_burst_ = kFirstProbe;  // the step the next burst starts at
    bool preferred_ = true;
};

// Which sequences of a packed batch (sequence b is rows starts[b] …
// starts[b+1]-1, B sequences) each shard takes: shard r gets the sequences
// listed in entry r, in increasing b. The shards, and the threads that run
// them side by side, should get the same work, so the batch is dealt like
// this: longest sequence first (the earlier one on a tie), each to the
// shard with the fewest tokens so far (the lower-numbered on a tie). Two
// shards' tokens then differ by at most the length of one sequence; over
// bench_train's epoch (328 tokens a batch) by 0.6 tokens on average and 2
// at most, where cutting the batch at the sequence boundary nearest its
// middle left them 6.0 tokens apart on average (3.6 % of a shard) and 16 at
// most, and every step waited for the larger one. It depends on the batch
// only, never on the thread count. starts: B + 1 ≥ 2 nondecreasing row
// numbers from 0.
std::vector<std::vector<int64_t>> shard_sequences(const std::vector<int64_t>& starts, int shards);

class ShardedGradient {
public:
    explicit ShardedGradient(nn::LanguageModel& model, int shards = 2);

    // Packed sequences (nn::Packing): ids and targets [N], sequence b is
    // rows starts[b] … starts[b+1]-1. Adds d(mean token cross-entropy)/dθ
    // into every trainable parameter's .grad() (as backward() would) and
    // returns the loss. A shard whose loss is NaN or infinite runs no
    // backward, and the loss returned is then not finite: the caller stops
    // (train_lm throws Diverged).
    double forward_backward(const ag::Tensor& ids, const ag::Tensor& targets, const std::vector<int64_t>& starts);

    // optimizer.step() the way the last forward_backward ran its shards:
    // after shards one after another, on the calling thread alone. (Beside
    // a busy process an update split between the threads waits for the half
    // on the shared core: ModernLM's took 0.29 ms a step there against 0.17
    // on one thread, bench_train --beside-busy --profile.) Same result
    // either way.
    void step(optim::Optimizer& optimizer) const;

    // For bench_train --profile: where forward_backward's time goes. Once
    // set, every call adds to it each shard's seconds in forward (the model
    // and the loss) and in backward, with the engine's counters over each
    // (autograd/profile.h, on the shard's thread), the seconds of its
    // slowest shard (forward and backward: what a step whose shards run
    // side by side waits for), and the seconds of the final sum of the
    // shards' gradients. Null (the default): no timing.
    // While it is set, the shards always run side by side (no probe steps,
    // so that the parts of every step add up the same way).
    struct Timing {
        struct Phase {
            double seconds = 0;
            ag::profile::Counters engine;
        };
        std::vector<Phase> forward, backward;  // one per shard
        double slowest_seconds = 0;
        double sum_seconds = 0;
    };
    void set_timing(Timing* timing);

    // How the steps so far ran their shards (steps run serially anyway, at
    // one thread or inside another parallel task, are not counted).
    const ShardSchedule& schedule() const { return schedule_; }

private:
    std::vector<ag::Tensor> params_;  // the model's parameters(), listed once
    std::vector<std::unique_ptr<nn::LanguageModel>> replicas_;
    std::vector<std::vector<ag::Tensor>> replica_params_;  // each replica's parameters, in the same order
    Timing* timing_ = nullptr;
    ShardSchedule schedule_;
    bool side_by_side_ = true;  // how the last forward_backward ran its shards
};

}  // namespace lessons
