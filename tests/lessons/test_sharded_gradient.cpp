// The sharded training gradient (lessons/common/sharded_gradient.h): the
// shards' gradients add up to the whole batch's gradient, the model's
// numbers are shared (not copied), and 1 and 2 threads give the same bits.
#include "catch.h"

#include "autograd/thread_pool.h"
#include "lessons/common/sharded_gradient.h"

using ag::Tensor;

namespace {

struct Batch {
    Tensor ids, targets;
    std::vector<int64_t> starts;
};

Batch random_batch(uint64_t seed) {
    ag::Generator gen(seed);
    Batch b;
    b.starts = {0};
    std::vector<double> ids, targets;
    for (int s = 0; s < 5; ++s) {  // 5 sequences of 3-9 tokens: shards of 2 and 3 sequences
        const int64_t len = 3 + gen.randint(7);
        for (int64_t t = 0; t < len; ++t) {
            ids.push_back(static_cast<double>(gen.randint(68)));
            targets.push_back(static_cast<double>(gen.randint(68)));
        }
        b.starts.push_back(b.starts.back() + len);
    }
    b.ids = Tensor::from({b.starts.back()}, ids);
    b.targets = Tensor::from({b.starts.back()}, targets);
    return b;
}

std::vector<std::vector<double>> grads_of(const nn::Module& m) {
    std::vector<std::vector<double>> out;
    for (const Tensor& p : m.parameters()) out.push_back(p.grad().to_vector());
    return out;
}

}  // namespace

TEST_CASE("ShardedGradient gives the whole batch's loss and gradient", "[lessons][sharded_gradient]") {
    for (const nn::LMConfig& cfg : {nn::LMConfig::gpt(), nn::LMConfig::modern_lm()}) {
        INFO(nn::to_string(cfg.model));
        nn::LanguageModel whole(cfg, 3), sharded(cfg, 3);
        const Batch b = random_batch(4);
        const Tensor loss = ag::cross_entropy(whole.forward(b.ids, nn::Packing::from_starts(b.starts)), b.targets);
        loss.backward();
        lessons::ShardedGradient gradient(sharded);
        const double sharded_loss = gradient.forward_backward(b.ids, b.targets, b.starts);
        CHECK(sharded_loss == Approx(loss.item()).epsilon(1e-14));
        const auto g1 = grads_of(whole), g2 = grads_of(sharded);
        REQUIRE(g1.size() == g2.size());
        double worst = 0.0;
        for (size_t i = 0; i < g1.size(); ++i)
            for (size_t j = 0; j < g1[i].size(); ++j) worst = std::max(worst, std::abs(g1[i][j] - g2[i][j]));
        CHECK(worst < 1e-14);
        // a second call adds, as backward() does
        gradient.forward_backward(b.ids, b.targets, b.starts);
        CHECK(sharded.parameters()[0].grad().to_vector()[0] == Approx(2 * g2[0][0]).margin(1e-15));
    }
}

TEST_CASE("ShardedGradient's replicas share the model's numbers and give the same bits on 1 and 2 threads",
          "[lessons][sharded_gradient]") {
    std::vector<std::vector<double>> by_threads[2];
    for (int threads : {1, 2}) {
        const ag::ThreadCountGuard use(threads);
        nn::LanguageModel model(nn::LMConfig::modern_lm(), 8);
        lessons::ShardedGradient gradient(model);
        const Batch b = random_batch(9);
        gradient.forward_backward(b.ids, b.targets, b.starts);
        by_threads[threads - 1] = grads_of(model);
        // an update of the model's numbers is seen by the replicas: the loss changes
        const double first = gradient.forward_backward(b.ids, b.targets, b.starts);
        model.parameters()[0].data()[static_cast<int64_t>(b.ids.to_vector()[0]) * 64] += 1.0;
        CHECK(gradient.forward_backward(b.ids, b.targets, b.starts) != first);
    }
    CHECK(by_threads[0] == by_threads[1]);
}

TEST_CASE("ShardedGradient leaves frozen parameters alone and refuses a bad batch", "[lessons][sharded_gradient]") {
    nn::LanguageModel model(nn::LMConfig::modern_lm(), 5);
    Tensor frozen = model.parameters().front();
    frozen.requires_grad_(false);
    lessons::ShardedGradient gradient(model);
    const Batch b = random_batch(6);
    gradient.forward_backward(b.ids, b.targets, b.starts);
    CHECK_FALSE(frozen.grad().defined());
    CHECK(model.parameters().back().grad().defined());

    CHECK_THROWS_WITH(lessons::ShardedGradient(model, 0), "ShardedGradient: 0 shards");
    CHECK_THROWS_WITH(gradient.forward_backward(b.ids.narrow(0, 1, b.ids.size(0) - 1), b.targets, b.starts),
                      Catch::Contains("ShardedGradient: ids") && Catch::Contains("packed rows"));
}

TEST_CASE("ShardedGradient sums any number of shards, empty ones included", "[lessons][sharded_gradient]") {
    const nn::LMConfig cfg = nn::LMConfig::gpt();
    const Batch five = random_batch(11);
    Batch one;  // a single sequence: with 2 shards, the second is empty
    one.starts = {0, five.starts[1]};
    one.ids = five.ids.narrow(0, 0, one.starts[1]);
    one.targets = five.targets.narrow(0, 0, one.starts[1]);
    for (const auto& [b, shards] :
         {std::pair{&five, 1}, std::pair{&five, 3}, std::pair{static_cast<const Batch*>(&one), 2}}) {
        INFO(shards << " shards, " << b->starts.size() - 1 << " sequences");
        nn::LanguageModel whole(cfg, 2), sharded(cfg, 2);
        ag::cross_entropy(whole.forward(b->ids, nn::Packing::from_starts(b->starts)), b->targets).backward();
        lessons::ShardedGradient gradient(sharded, shards);
        gradient.forward_backward(b->ids, b->targets, b->starts);
        const auto g1 = grads_of(whole), g2 = grads_of(sharded);
        double worst = 0.0;
        for (size_t i = 0; i < g1.size(); ++i)
            for (size_t j = 0; j < g1[i].size(); ++j) worst = std::max(worst, std::abs(g1[i][j] - g2[i][j]));
        CHECK(worst < 1e-14);
    }
}

namespace {

// An optimiser that records, at each step, whether its kernels would split
// between threads (outside a parallel region) or stay on the calling thread.
class SplitRecorder : public optim::Optimizer {
public:
    explicit SplitRecorder(std::vector<Tensor> params) : Optimizer(std::move(params), 0.0) {}
    void step() override { kernels_split.push_back(!ag::detail::in_parallel_region()); }
    std::vector<bool> kernels_split;
};

}  // namespace

TEST_CASE("ShardedGradient::step runs the update on the threads the shards ran on", "[lessons][sharded_gradient]") {
    // 2 threads, 14 steps: the schedule's first burst (steps 8-12) runs the
    // shards one after another, every other step side by side
    const ag::ThreadCountGuard use(2);
    nn::LanguageModel model(nn::LMConfig::modern_lm(), 8);
    lessons::ShardedGradient gradient(model);
    SplitRecorder recorder(model.parameters());
    const Batch b = random_batch(12);
    std::vector<bool> side_by_side;
    for (int s = 0; s < 14; ++s) {
        const int64_t before = gradient.schedule().steps(true);
        recorder.zero_grad();
        gradient.forward_backward(b.ids, b.targets, b.starts);
        side_by_side.push_back(gradient.schedule().steps(true) > before);
        gradient.step(recorder);
    }
    REQUIRE(gradient.schedule().steps(false) > 0);
    REQUIRE(gradient.schedule().steps(true) > 0);
    INFO("after shards one after another the update stays on the calling thread; after side by side it splits");
    CHECK(recorder.kernels_split == side_by_side);
}

TEST_CASE("ShardedGradient's timing adds up each shard's phases, each step's slowest shard and the sum",
          "[lessons][sharded_gradient]") {
    const ag::ThreadCountGuard use(2);
    nn::LanguageModel model(nn::LMConfig::gpt(), 4);
    lessons::ShardedGradient gradient(model);
    lessons::ShardedGradient::Timing timing;
    gradient.set_timing(&timing);
    const Batch b = random_batch(13);
    for (int s = 0; s < 3; ++s) gradient.forward_backward(b.ids, b.targets, b.starts);
    REQUIRE(timing.forward.size() == 2);
    REQUIRE(timing.backward.size() == 2);
    double all = 0;
    for (size_t r = 0; r < 2; ++r) {
        INFO("shard " << r);
        CHECK(timing.forward[r].seconds > 0);
        CHECK(timing.backward[r].seconds > 0);
        const double shard = timing.forward[r].seconds + timing.backward[r].seconds;
        INFO("each step's slowest shard took at least as long as shard " << r << " did in that step");
        CHECK(timing.slowest_seconds >= shard);
        all += shard;
    }
    INFO("the slowest of two shards, step by step: less than both together");
    CHECK(timing.slowest_seconds < all);
    CHECK(timing.sum_seconds > 0);

    // without timing nothing is added
    gradient.set_timing(nullptr);
    const lessons::ShardedGradient::Timing before = timing;
    gradient.forward_backward(b.ids, b.targets, b.starts);
    CHECK(timing.slowest_seconds == before.slowest_seconds);
    CHECK(timing.sum_seconds == before.sum_seconds);
    CHECK(timing.forward[0].seconds == before.forward[0].seconds);
}

TEST_CASE("shard_sequences deals the longest sequence first to the shard with the fewest tokens",
          "[lessons][sharded_gradient]") {
    using lessons::shard_sequences;
    using Shards = std::vector<std::vector<int64_t>>;
    // lengths 3, 8, 2, 7, 4: 8 -> shard 0, 7 -> 1, 4 -> 1 (7 < 8), 3 -> 0
    // (8 < 11), 2 -> 0 (a tie at 11: the lower shard). 13 and 11 tokens;
    // the boundary nearest the middle (11 or 13) would give 11 and 13 too,
    // but as sequences 0-1 and 2-4.
    CHECK(shard_sequences({0, 3, 11, 13, 20, 24}, 2) == Shards{{0, 1, 2}, {3, 4}});
    // sequences of one length: the earlier first, so they alternate
    CHECK(shard_sequences({0, 5, 10, 15, 20}, 2) == Shards{{0, 2}, {1, 3}});
    // 9, 1, 1, 1, 1, 1 tokens: the long one alone, as the best cut has it
    CHECK(shard_sequences({0, 9, 10, 11, 12, 13, 14}, 2) == Shards{{0}, {1, 2, 3, 4, 5}});
    // 2, 3, 3, 2, 2, 2 tokens: no cut gives 7 and 7, dealing does
    CHECK(shard_sequences({0, 2, 5, 8, 10, 12, 14}, 2) == Shards{{0, 1, 4}, {2, 3, 5}});
    // three shards; one long sequence; a shard left empty; one shard
    CHECK(shard_sequences({0, 1, 19, 20}, 3) == Shards{{1}, {0}, {2}});
    CHECK(shard_sequences({0, 20}, 2) == Shards{{0}, {}});
    CHECK(shard_sequences({0, 4, 4, 7}, 1) == Shards{{0, 1, 2}});
}

TEST_CASE("shard_sequences: every sequence once, in batch order, the shards' tokens at most one sequence apart",
          "[lessons][sharded_gradient]") {
    ag::Generator gen(11);
    for (int trial = 0; trial < 200; ++trial) {
        const int shards = 1 + static_cast<int>(gen.randint(3));
        std::vector<int64_t> starts = {0};
        int64_t longest = 0;
        for (int64_t b = 0, B = 1 + gen.randint(40); b < B; ++b) {
            const int64_t len = gen.randint(21);  // 0 … 20 tokens
            starts.push_back(starts.back() + len);
            longest = std::max(longest, len);
        }
        INFO("trial " << trial << ", " << shards << " shards, " << starts.size() - 1 << " sequences");
        const auto dealt = lessons::shard_sequences(starts, shards);
        REQUIRE(dealt.size() == static_cast<size_t>(shards));
        std::vector<int> seen(starts.size() - 1, 0);
        int64_t fewest = starts.back(), most = 0;
        for (const auto& shard : dealt) {
            CHECK(std::is_sorted(shard.begin(), shard.end()));
            int64_t tokens = 0;
            for (const int64_t b : shard) {
                ++seen[static_cast<size_t>(b)];
                tokens += starts[static_cast<size_t>(b) + 1] - starts[static_cast<size_t>(b)];
            }
            fewest = std::min(fewest, tokens);
            most = std::max(most, tokens);
        }
        CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
        CHECK(most - fewest <= longest);
    }
}

TEST_CASE("ShardedGradient refuses sequence starts that do not run from 0 to N without decreasing",
          "[lessons][sharded_gradient]") {
    nn::LanguageModel model(nn::LMConfig::gpt(), 3);
    lessons::ShardedGradient gradient(model);
    const Tensor ids = Tensor::zeros({6}), targets = Tensor::zeros({6});
    CHECK_THROWS_WITH(gradient.forward_backward(ids, targets, {0, 4, 2, 6}),
                      Catch::Contains("without decreasing") && Catch::Contains("N = 6"));
    CHECK_THROWS_WITH(gradient.forward_backward(ids, targets, {1, 3, 6}), Catch::Contains("from 0"));
    CHECK_THROWS_WITH(gradient.forward_backward(ids, targets, {0, 3, 5}), Catch::Contains("for 5 packed rows"));
}

// ShardSchedule, fed made-up step times (seconds per token).
namespace {

// Records `steps` steps, each taking `side` seconds per token when run side
// by side and `serial` when run one after another; returns how many ran
// side by side.
int64_t run_steps(lessons::ShardSchedule& schedule, int64_t steps, double side, double serial) {
    int64_t side_by_side = 0;
    for (int64_t i = 0; i < steps; ++i) {
        const bool way = schedule.side_by_side();
        side_by_side += way;
        schedule.record(way ? side : serial);
    }
    return side_by_side;
}

}  // namespace

TEST_CASE("ShardSchedule probes the way not taken in bursts and takes the faster way", "[lessons][sharded_gradient]") {
    using lessons::ShardSchedule;
    const auto burst = static_cast<int64_t>(ShardSchedule::kRecent);
    const int64_t every = ShardSchedule::kProbeEvery, recheck = ShardSchedule::kRecheck;
    ShardSchedule schedule;
    INFO("side by side until the first burst");
    CHECK(run_steps(schedule, ShardSchedule::kFirstProbe, 1.0, 2.0) == ShardSchedule::kFirstProbe);
    INFO("the first burst runs one after another, all of it, even when its first step is faster");
    CHECK_FALSE(schedule.side_by_side());
    schedule.record(0.5);
    CHECK(run_steps(schedule, burst - 1, 1.0, 2.0) == 0);
    INFO("the burst kept side by side (median 2.0 > 1.0): the next burst " << every << " steps later");
    CHECK(run_steps(schedule, every, 1.0, 2.0) == every);
    INFO("a busy core: the burst finds one after another faster, and it is taken after the burst");
    CHECK(run_steps(schedule, burst, 1.0, 0.8) == 0);
    CHECK(run_steps(schedule, recheck, 1.0, 0.8) == 0);
    INFO("a change of way is checked again " << recheck << " steps later; the check keeps it");
    CHECK(run_steps(schedule, burst, 1.0, 0.8) == burst);
    INFO("the busy process stops: one after another stays until the next burst shows side by side faster");
    CHECK(run_steps(schedule, every, 0.5, 0.8) == 0);
    CHECK(run_steps(schedule, burst, 0.5, 0.8) == burst);
    CHECK(run_steps(schedule, recheck, 0.5, 0.8) == recheck);
    INFO("the check after the change (one after another, slower) keeps side by side");
    CHECK(run_steps(schedule, burst, 0.5, 0.8) == 0);
    CHECK(run_steps(schedule, 10, 0.5, 0.8) == 10);
    CHECK(schedule.steps(true) + schedule.steps(false) ==
          ShardSchedule::kFirstProbe + 2 * every + 2 * recheck + 5 * burst + 10);
}

TEST_CASE("ShardSchedule follows the way taken when it slows, but not for one or two slow steps",
          "[lessons][sharded_gradient]") {
    using lessons::ShardSchedule;
    const auto burst = static_cast<int64_t>(ShardSchedule::kRecent);
    ShardSchedule schedule;
    // The first burst: one after another at 1.0 against side by side at 0.5.
    run_steps(schedule, ShardSchedule::kFirstProbe + burst, 0.5, 1.0);
    REQUIRE(schedule.side_by_side());
    for (int i = 0; i < 2; ++i) {
        INFO("slow side-by-side step " << i + 1 << " of 2 in the last 5 (a preempted step)");
        schedule.record(10.0);
        CHECK(schedule.side_by_side());
    }
    INFO("a third slow step of the last five: the median is slow, and one after another (1.0) is taken");
    schedule.record(10.0);
    CHECK_FALSE(schedule.side_by_side());
    INFO("the slowdown passes: a burst " << ShardSchedule::kRecheck << " steps later goes back to side by side");
    CHECK(run_steps(schedule, ShardSchedule::kRecheck, 0.5, 1.0) == 0);
    CHECK(run_steps(schedule, burst, 0.5, 1.0) == burst);
    CHECK(schedule.side_by_side());
}

TEST_CASE("ShardSchedule measures the other way again before leaving the way taken on an old figure",
          "[lessons][sharded_gradient]") {
    using lessons::ShardSchedule;
    const auto burst = static_cast<int64_t>(ShardSchedule::kRecent);
    for (const double serial_now : {3.0, 1.0}) {
        INFO("one after another runs at " << serial_now << " when measured again");
        ShardSchedule schedule;
        // The first burst: one after another at 1.0 against side by side at
        // 0.5; then 100 steps side by side, so that 1.0 is 100 steps old.
        run_steps(schedule, ShardSchedule::kFirstProbe + burst, 0.5, 1.0);
        REQUIRE(run_steps(schedule, 100, 0.5, 1.0) == 100);
        // Three slow steps side by side (2.0): its median is now slower than
        // one after another's old 1.0.
        for (int i = 0; i < 3; ++i) schedule.record(2.0);
        INFO("no change of way on a figure 100 steps old: a burst one after another first");
        CHECK(run_steps(schedule, burst, 2.0, serial_now) == 0);
        if (serial_now > 2.0) {
            INFO("slower now than side by side's 2.0: side by side stays");
            CHECK(run_steps(schedule, 10, 2.0, serial_now) == 10);
        } else {
            INFO("faster: it is taken after the burst, and checked again " << ShardSchedule::kRecheck
                                                                           << " steps later");
            CHECK(run_steps(schedule, ShardSchedule::kRecheck, 2.0, serial_now) == 0);
            CHECK(run_steps(schedule, burst, 2.0, serial_now) == burst);
        }
    }
}

TEST_CASE("ShardedGradient gives the same bits when its steps run the shards one after another",
          "[lessons][sharded_gradient]") {
    // kFirstProbe + kRecent steps at 2 threads take the first burst (one
    // after another); at 1 thread every step is serial anyway.
    std::vector<std::vector<double>> by_threads[2];
    const Batch b = random_batch(12);
    const int64_t burst = static_cast<int64_t>(lessons::ShardSchedule::kRecent);
    const int64_t steps = lessons::ShardSchedule::kFirstProbe + burst;
    for (int threads : {1, 2}) {
        const ag::ThreadCountGuard use(threads);
        nn::LanguageModel model(nn::LMConfig::modern_lm(), 13);
        lessons::ShardedGradient gradient(model);
        for (int64_t step = 0; step < steps; ++step) gradient.forward_backward(b.ids, b.targets, b.starts);
        by_threads[threads - 1] = grads_of(model);
        if (threads == 2) {
            INFO("at 2 threads: the first steps side by side, then the first burst one after another");
            CHECK(gradient.schedule().steps(true) == lessons::ShardSchedule::kFirstProbe);
            CHECK(gradient.schedule().steps(false) == burst);
        } else {
            INFO("at 1 thread there is no choice to make: no step is counted");
            CHECK(gradient.schedule().steps(false) + gradient.schedule().steps(true) == 0);
        }
    }
    CHECK(by_threads[0] == by_threads[1]);
}
