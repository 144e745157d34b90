// Training throughput: the work of docs/reference_figures.md's table. One
// epoch of language-model training on the farm corpus (batches of 32
// sentences, packed one after another without padding): forward,
// cross-entropy, backward, AdamW step. tokens/s = target tokens / wall time, at 1 and 2 threads,
// for GPT and ModernLM at the lesson settings, against the machine's limit:
// the FMA peak measured by benchmarks/peak.h divided by the FLOPs a token
// costs (flops_per_token below) is the most tokens/s the cores could train.
//
//   bench_train [--steps N] [--threads N] [--model gpt|modern_lm] [--repeat N]
//               [--profile] [--beside-busy] [--pytorch PYTHON]
//   (default: a whole epoch, 625 steps; 1 and 2 threads; both models; one
//   run each; PyTorch's figures when /usr/bin/python3 imports torch;
//   bench_train --help says the same)
//
// --repeat N runs each row N times back to back (a fresh model each time)
// and prints the min, median and max tokens/s. --profile then runs each row
// once more with the engine's timers on (autograd/profile.h) and prints
// where a step's time goes: forward, backward, the sum of the shards'
// gradients, the optimizer, and inside forward and backward the GEMM, the
// storage pool and the graph; then each op's forward and backward, slowest
// first, so the next thing to make faster is the first row of that table.
// The timed runs have the timers off. Under a row of N >= 2 threads, an
// "N x 1" row: N independent models trained side by side, one per thread
// (run_side_by_side), the ceiling of data-parallel training on this
// machine, and the N-thread row as a fraction of it: what sharing one
// gradient costs, set apart from what the machine gives N busy cores.
// Above that, each N-thread run's tokens/s beside a cache line's round
// trip between the cores measured just before it
// (bench::core_round_trip_ns): data-parallel steps move lines between the
// cores, and on a virtual machine their distance is the host's choice.
// --beside-busy times every row while a child process spins on one core
// (BusyProcess below): issue 14's "2 threads are never slower than 1
// beside a busy process", measured.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "autograd/profile.h"
#include "benchmarks/peak.h"
#include "data/batching.h"
#include "data/farm_language.h"
#include "lessons/common/cli.h"
#include "lessons/common/independent_runs.h"
#include "lessons/common/sharded_gradient.h"
#include "nn/language_model.h"
#include "nn/optim.h"

extern char** environ;

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

// ---------------------------------------------------------------- FLOPs

// Weights that take part in a matrix product, each once per token: every
// Linear's weight matrix, the output head included. Embedding rows are
// looked up (no arithmetic); biases, norm gains and the pointwise ops
// (GELU, SwiGLU's product, RoPE, softmax) cost a few flops per number, not
// per weight, and are left out (about 1% here).
int64_t product_weights(const nn::LMConfig& c) {
    const int64_t d = c.d_model, kv = c.n_kv_heads * c.head_dim();
    const int64_t attention = d * d + 2 * d * kv + d * d;                      // W_q, W_k, W_v, W_o (GQA: kv < d)
    const int64_t ffn = (c.model == nn::ModelKind::Gpt ? 2 : 3) * d * c.d_ff;  // GPT: fc, proj; SwiGLU: gate, up, down
    return c.n_layers * (attention + ffn) + d * c.vocab;
}

// The keys a query sees, averaged over every token of the batches: a
// sequence of T rows has query t (0-based) see min(t + 1, W) keys (causal,
// W the window if any). The fused attention op computes exactly these
// pairs (never the masked half of T×T), so this is the work it does. For
// equal lengths T it is (T + 1) / 2.
double mean_keys_seen(const nn::LMConfig& c, const std::vector<farm::LmBatch>& batches) {
    double keys = 0, tokens = 0;
    for (const farm::LmBatch& b : batches)
        for (size_t s = 0; s + 1 < b.starts.size(); ++s) {
            const int64_t T = b.starts[s + 1] - b.starts[s];
            for (int64_t t = 0; t < T; ++t)
                keys += static_cast<double>(c.window > 0 ? std::min(t + 1, c.window) : t + 1);
            tokens += static_cast<double>(T);
        }
    return tokens > 0 ? keys / tokens : 0.0;
}

struct FlopCount {
    int64_t weights = 0;   // product_weights
    double keys = 0;       // mean keys a query sees
    double products = 0;   // 6 × weights
    double attention = 0;  // 12 · n_layers · keys · d
    double per_token() const { return products + attention; }
};

// Training FLOPs per token (forward + backward), the usual count:
//  - each product weight: 2 flops in the forward (a multiply-add), 4 in the
//    backward (one multiply-add for dX = dY·Wᵀ, one for dW = Xᵀ·dY): 6 × weights;
//  - attention, per layer, a query seeing n keys: the scores Q·Kᵀ and the
//    weighted sum P·V are 2·n·d flops each (n·d multiply-adds over all
//    heads: heads × head_dim = d), 4·n·d in the forward, and the backward
//    does each twice (dQ and dK; dP and dV): 3 × (2·n·d + 2·n·d) = 12·n·d.
// Issue 14's "about 634k FLOP/token for GPT and 588k for ModernLM" is this
// count with every query against all T keys of its sequence (the full T×T
// scores: E[T²]/E[T] ≈ 11.4 keys instead of the causal ≈ 6.2), 8k FLOP more
// per token; the fused attention op never computes the masked half.
FlopCount flops_per_token(const nn::LMConfig& c, const std::vector<farm::LmBatch>& batches) {
    FlopCount f;
    f.weights = product_weights(c);
    f.keys = mean_keys_seen(c, batches);
    f.products = 6.0 * static_cast<double>(f.weights);
    f.attention = 12.0 * static_cast<double>(c.n_layers) * f.keys * static_cast<double>(c.d_model);
    return f;
}

// ---------------------------------------------------------------- runs

struct Result {
    double seconds = 0, tokens = 0, loss = 0;
    int64_t one_after_another = 0;  // steps whose shards ran on one thread (ShardSchedule)
};

// Where the time of the profiled run's steps went (seconds, summed over steps).
struct Profile {
    int64_t steps = 0;
    double step = 0, forward_backward = 0, optimizer = 0;
    lessons::ShardedGradient::Timing timing;
};

Result run(const nn::LMConfig& cfg, const std::vector<farm::LmBatch>& batches, int64_t steps,
           Profile* profile = nullptr) {
    nn::LanguageModel model(cfg, 0);
    optim::AdamW opt(model.parameters(), 1e-3, 0.9, 0.95, 1e-8, 0.01);
    lessons::ShardedGradient sharded(model);
    if (profile) sharded.set_timing(&profile->timing);
    Result r;
    const auto start = clock_type::now();
    for (int64_t s = 0; s < steps; ++s) {
        const farm::LmBatch& b = batches[static_cast<size_t>(s) % batches.size()];
        if (!profile) {
            // only the real rows: the packed batch (padding changes no real token's output)
            opt.zero_grad();
            r.loss = sharded.forward_backward(b.packed_ids, b.packed_targets, b.starts);
            sharded.step(opt);
        } else {  // the same step, timed part by part
            const auto t0 = clock_type::now();
            opt.zero_grad();
            const auto t1 = clock_type::now();
            r.loss = sharded.forward_backward(b.packed_ids, b.packed_targets, b.starts);
            const auto t2 = clock_type::now();
            sharded.step(opt);
            const auto t3 = clock_type::now();
            profile->optimizer += std::chrono::duration<double>((t1 - t0) + (t3 - t2)).count();
            profile->forward_backward += std::chrono::duration<double>(t2 - t1).count();
            profile->step += std::chrono::duration<double>(t3 - t0).count();
            ++profile->steps;
        }
        r.tokens += static_cast<double>(b.tokens);
    }
    r.seconds = seconds_since(start);
    r.one_after_another = sharded.schedule().steps(false);
    return r;
}

// `runs` fresh models trained side by side, one per thread, each on its
// thread alone (lessons::run_independent, the way the lessons train the
// several models they compare): no gradient is shared and no step waits
// for another, so this is the most the machine gives data-parallel
// training at that many threads. tokens/s = every run's tokens / the wall
// time until the last one ends.
Result run_side_by_side(const nn::LMConfig& cfg, const std::vector<farm::LmBatch>& batches, int64_t steps, int runs) {
    std::vector<Result> results(static_cast<size_t>(runs));
    const auto start = clock_type::now();
    lessons::run_independent(std::vector<int64_t>(results.size(), 1),
                             [&](size_t i) { results[i] = run(cfg, batches, steps); });
    Result all;
    all.seconds = seconds_since(start);
    for (const Result& r : results) all.tokens += r.tokens;
    all.loss = results.front().loss;  // each run is the 1-thread run
    return all;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ---------------------------------------------------------------- profile table

// One table: a step's parts in ms per step and as a share of the step. The
// shards run side by side at 2 threads, so their parts (forward, backward)
// are the mean over the threads that ran them: with the serial parts
// (gradient sum, optimizer) and the waiting they add up to the step.
void print_profile(const std::string& model, int threads, const Profile& p) {
    const double steps = static_cast<double>(p.steps);
    const size_t shards = p.timing.forward.size();
    const double side_by_side = static_cast<double>(std::min<size_t>(shards, static_cast<size_t>(threads)));
    const double step_ms = 1e3 * p.step / steps;
    fmt::print("\nprofile: {}, {} thread{}, {} steps, {:.3f} ms per step (engine timers on)\n", model, threads,
               threads == 1 ? "" : "s", p.steps, step_ms);
    if (side_by_side > 1)
        fmt::print("(the {} shards run side by side: forward and backward are per thread, the mean of the {})\n",
                   shards, shards);
    fmt::print("{:<40} {:>9} {:>7}\n", "part of a step", "ms/step", "share");
    const auto row = [&](const std::string& what, double seconds, const std::string& note = "") {
        const double ms = 1e3 * seconds / steps;
        fmt::print("{:<40} {:>9.3f} {:>6.1f}%{}\n", what, ms, 100.0 * ms / step_ms, note);
    };
    double shard_seconds = 0;
    ag::profile::Counters both;  // forward and backward, for the ops' table
    for (const auto& [name, phases] :
         {std::pair{"forward (model and loss)", &p.timing.forward}, std::pair{"backward", &p.timing.backward}}) {
        double seconds = 0;
        ag::profile::Counters engine;
        for (const auto& phase : *phases) {
            seconds += phase.seconds;
            engine += phase.engine;
        }
        both += engine;
        seconds /= side_by_side;
        shard_seconds += seconds;
        const double gemm = engine.gemm_seconds / side_by_side, alloc = engine.alloc_seconds / side_by_side,
                     graph = engine.graph_seconds / side_by_side;
        const bool fwd = phases == &p.timing.forward;
        row(name, seconds);
        row("  GEMM", gemm,
            fmt::format("  {} products, {:.1f} GFLOP/s", engine.gemm_calls / p.steps,
                        engine.gemm_seconds > 0 ? engine.gemm_flops / engine.gemm_seconds * 1e-9 : 0.0));
        row("  allocation (storage pool)", alloc, fmt::format("  {} blocks", engine.allocations / p.steps));
        row(fwd ? "  graph (record: nodes)" : "  graph (topological sort)", graph,
            fwd ? fmt::format("  {} nodes", engine.nodes / p.steps) : "");
        row(fwd ? "  other ops (pointwise, norms, attention)" : "  other ops' backward, accumulation",
            seconds - gemm - alloc - graph);
    }
    row("sum of the shards' gradients", p.timing.sum_seconds);
    row("optimizer (zero_grad, AdamW step)", p.optimizer);
    const double waiting = p.forward_backward - p.timing.sum_seconds - shard_seconds;
    if (side_by_side > 1) {
        // Each shard on its own thread (run() makes 2 shards, so at 2
        // threads and more): every step waits for its slowest shard. The
        // slowest one's excess over the mean, step by step (which shard is
        // the slower one changes from step to step), is imbalance: uneven
        // work, or a core that runs slower (another process or VM on it).
        // The rest is the shards' set-up (zero_grad, their slices of the
        // batch) and the threads' start and join.
        std::string each;  // each shard's mean
        for (size_t r = 0; r < shards; ++r)
            each += fmt::format("{}{:.3f}", r ? " / " : "  shards: ",
                                1e3 * (p.timing.forward[r].seconds + p.timing.backward[r].seconds) / steps);
        const double imbalance = p.timing.slowest_seconds - shard_seconds;
        row("waiting for the slowest shard", imbalance, each + " ms");
        row("shard set-up, threads' start and join", waiting - imbalance);
    } else {
        row("rest (shard set-up)", waiting);
    }

    // The ops, slowest first: forward and backward per step (the mean over
    // the shards side by side, as above), each with its GEMM and allocations.
    std::vector<std::pair<std::string, ag::profile::OpTime>> slowest(both.ops.begin(), both.ops.end());
    const auto total = [](const ag::profile::OpTime& t) { return t.forward_seconds + t.backward_seconds; };
    std::stable_sort(slowest.begin(), slowest.end(),
                     [&](const auto& a, const auto& b) { return total(a.second) > total(b.second); });
    fmt::print("{:<26} {:>9} {:>11} {:>11} {:>7}\n", "op (with its GEMM)", "calls", "forward ms", "backward ms",
               "share");
    for (const auto& [op, t] : slowest) {
        const double fwd = 1e3 * t.forward_seconds / side_by_side / steps,
                     bwd = 1e3 * t.backward_seconds / side_by_side / steps;
        fmt::print("{:<26} {:>9} {:>11.3f} {:>11.3f} {:>6.1f}%\n", op, t.calls / p.steps, fwd, bwd,
                   100.0 * (fwd + bwd) / step_ms);
    }
}

// ---------------------------------------------------------------- a busy machine

// Another program that keeps one core busy, as a student's machine has: a
// child process that spins from construction to destruction. (The child
// of a threaded process may only make async-signal-safe calls: it loops,
// and exits on its own if bench_train dies without killing it, once it
// sees itself adopted by another parent.)
class BusyProcess {
public:
    BusyProcess() {
        const pid_t parent = getpid();
        pid_ = fork();
        if (pid_ < 0) throw std::runtime_error("--beside-busy: cannot start the busy process (fork failed)");
        if (pid_ == 0) {
            for (volatile uint64_t i = 0;; i = i + 1)
                if ((i & 0xffffff) == 0 && getppid() != parent) _exit(0);
        }
    }
    ~BusyProcess() {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    BusyProcess(const BusyProcess&) = delete;
    BusyProcess& operator=(const BusyProcess&) = delete;
    pid_t pid() const { return pid_; }

private:
    pid_t pid_;
};

// ---------------------------------------------------------------- PyTorch

// Runs argv[0] (looked up on PATH) with stdout and stderr on /dev/null;
// returns its exit status, or -1 when it could not be started or died.
int run_quietly(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) return -1;
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

// (model, dtype, threads) → PyTorch's best tokens/s, from benchmarks/pytorch
// in the same sitting; empty (and one line saying why) when it cannot run.
using TorchFigures = std::map<std::tuple<std::string, std::string, int>, double>;

TorchFigures pytorch_figures(const std::string& python, const std::vector<std::string>& models,
                             const std::vector<int>& threads, int64_t steps, int repeat) {
    if (python == "none") {
        fmt::print("PyTorch: not measured (--pytorch none)\n");
        return {};
    }
    if (run_quietly({python, "-c", "import torch"}) != 0) {
        fmt::print("PyTorch: not measured ({} cannot import torch; benchmarks/pytorch/README.md)\n", python);
        return {};
    }
    const std::filesystem::path json =
        std::filesystem::temp_directory_path() / fmt::format("bench_train_pytorch_{}.json", getpid());
    std::vector<std::string> args = {python, std::string(BENCH_PYTORCH_DIR) + "/bench_train.py", "--model"};
    args.insert(args.end(), models.begin(), models.end());
    args.insert(args.end(), {"--dtype", "float32", "float64", "--threads"});
    for (int t : threads) args.push_back(std::to_string(t));
    args.insert(args.end(),
                {"--steps", std::to_string(steps), "--repeats", std::to_string(repeat), "--json", json.string()});
    fmt::print("PyTorch: running benchmarks/pytorch/bench_train.py ({} steps, best of {}) ...\n", steps, repeat);
    std::fflush(stdout);
    const int status = run_quietly(args);
    TorchFigures figures;
    try {
        if (status != 0) throw std::runtime_error(fmt::format("exit status {}", status));
        std::ifstream in(json);
        const nlohmann::json results = nlohmann::json::parse(in);
        for (const auto& r : results.at("best"))
            figures[{r.at("model").get<std::string>(), r.at("dtype").get<std::string>(), r.at("threads").get<int>()}] =
                r.at("tokens_per_s").get<double>();
    } catch (const std::exception& e) {
        fmt::print("PyTorch: benchmarks/pytorch/bench_train.py failed ({}); no PyTorch figures\n", e.what());
        figures.clear();
    }
    std::error_code ignored;
    std::filesystem::remove(json, ignored);
    return figures;
}

}  // namespace

int main(int argc, char** argv) {
    int64_t steps = 0;     // 0: a whole epoch
    int only_threads = 0;  // 0: 1 and 2
    int repeat = 1;
    bool profile = false, beside_busy = false;
    std::string model;  // empty: both
    std::string python = "/usr/bin/python3";
    CLI::App app(
        "Language-model training throughput (tokens/s) of GPT and ModernLM on the farm corpus, "
        "against the FLOP limit of this machine's measured FMA peak.",
        "bench_train");
    app.set_help_flag("-h,--help", "show this help");
    app.add_option("--steps", steps, "training steps of 32 sentences (default: a whole epoch, 625 steps)")
        ->type_name("N")
        ->transform(lessons::whole_number())
        ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()).description(""));
    lessons::add_threads(app, only_threads, "measure at N threads only (default: 1 and 2)");
    app.add_option("--model", model, "measure one model only (default: both)")
        ->type_name("M")
        ->check(CLI::IsMember({"gpt", "modern_lm"}));
    app.add_option("--repeat", repeat, "back-to-back runs of each row: min, median and max tokens/s (default 1)")
        ->type_name("N")
        ->transform(lessons::whole_number())
        ->check(CLI::Range(1, 1000).description(""));
    app.add_flag("--profile", profile,
                 "then one more run of each row with the engine's timers on: where a step's time goes");
    app.add_flag("--beside-busy", beside_busy,
                 "time the rows (and profiles) beside another process that keeps one core busy (the peak "
                 "and PyTorch are measured without it)");
    app.add_option("--pytorch", python,
                   "interpreter for benchmarks/pytorch, when it imports torch (default /usr/bin/python3; "
                   "none: skip PyTorch)")
        ->type_name("PYTHON")
        ->transform(lessons::text_value());
    if (const auto status = lessons::parse_command_line(app, argc, argv, "bench_train")) return *status;
    std::vector<int> thread_counts = {1, 2};
    if (only_threads > 0) thread_counts = {only_threads};
    std::vector<nn::LMConfig> models = {nn::LMConfig::gpt(), nn::LMConfig::modern_lm()};
    if (!model.empty()) models = {model == "gpt" ? nn::LMConfig::gpt() : nn::LMConfig::modern_lm()};
    // The uniform language: the one benchmarks/pytorch/farm_data.py draws
    // (its sentences, not the same ones, have the same lengths on average).
    const farm::Corpora corpora = farm::make_corpora(0, farm::Language::uniform());
    ag::Generator shuffle(0);
    const auto batches = farm::make_lm_batches(corpora.train, 32, &shuffle);
    if (steps <= 0) steps = static_cast<int64_t>(batches.size());

    // The limit: the FMA peak at each thread count.
    bench::Peak peak(thread_counts);
    fmt::print("peak: FMA loop in double precision ({} lanes a vector, benchmarks/peak.h): {}\n", bench::vector_lanes(),
               peak.readings());

    // What a token costs, over the batches the runs train on.
    const std::vector<farm::LmBatch> used(batches.begin(),
                                          batches.begin() + std::min(steps, static_cast<int64_t>(batches.size())));
    double rows = 0, sequences = 0;
    for (const farm::LmBatch& b : used) {
        rows += static_cast<double>(b.tokens);
        sequences += static_cast<double>(b.starts.size() - 1);
    }
    fmt::print("FLOPs per token, forward + backward: 6 x product weights + attention 12 x layers x keys seen x d\n");
    fmt::print("(over the {} steps' batches: sequences of {:.2f} tokens on average; row t sees t + 1 keys, causal)\n",
               used.size(), rows / sequences);
    fmt::print("{:<10} {:>9} {:>12} {:>10} {:>10} {:>12}\n", "model", "weights", "6 x weights", "keys seen",
               "attention", "FLOP/token");
    std::map<std::string, FlopCount> cost;
    for (const nn::LMConfig& cfg : models) {
        const FlopCount f = flops_per_token(cfg, used);
        cost[nn::to_string(cfg.model)] = f;
        fmt::print("{:<10} {:>9} {:>12.0f} {:>10.2f} {:>10.0f} {:>12.0f}\n", nn::to_string(cfg.model), f.weights,
                   f.products, f.keys, f.attention, f.per_token());
    }

    std::vector<std::string> names;
    for (const nn::LMConfig& cfg : models) names.push_back(nn::to_string(cfg.model));
    const TorchFigures torch = pytorch_figures(python, names, thread_counts, steps, repeat);

    // The busy process for the rows, and again for the profiles (one line
    // and exit status 1 if it cannot start).
    const auto start_busy = [&]() -> std::unique_ptr<BusyProcess> {
        if (!beside_busy) return nullptr;
        try {
            return std::make_unique<BusyProcess>();
        } catch (const std::exception& e) {
            fmt::print(stderr, "bench_train: {}\n", e.what());
            std::exit(1);
        }
    };
    std::unique_ptr<BusyProcess> busy = start_busy();
    fmt::print("\ntraining throughput: {} steps of 32 sentences (one epoch = {} steps), {} run{} each\n", steps,
               batches.size(), repeat, repeat == 1 ? "" : "s");
    if (busy)
        fmt::print("beside a busy process (pid {}, spinning on one core while the rows and profiles run)\n",
                   busy->pid());
    fmt::print("limit = peak / FLOP per token; % of limit for the median run\n");
    fmt::print("{:<10} {:>7} {:>10} {:>10} {:>10} {:>11} {:>10} {:>9} {:>10}\n", "model", "threads", "min tok/s",
               "median", "max", "limit", "% of limit", "s/epoch", "last loss");
    for (const nn::LMConfig& cfg : models)
        for (int threads : thread_counts) {
            ag::set_num_threads(threads);
            // At more than one thread, each run is followed by `threads`
            // independent 1-thread runs side by side (run_side_by_side), so
            // that the two rows see the machine in the same moods.
            // Before each run at more than one thread, the cores' round trip
            // (bench::core_round_trip_ns): where the host has put them then.
            std::vector<double> rates, apart, round_trips;
            Result r, side;
            int64_t one_after_another = 0;
            for (int i = 0; i < repeat; ++i) {
                if (threads > 1) round_trips.push_back(bench::core_round_trip_ns());
                r = run(cfg, batches, steps);
                rates.push_back(r.tokens / r.seconds);
                one_after_another += r.one_after_another;
                if (threads > 1) {
                    side = run_side_by_side(cfg, batches, steps, threads);
                    apart.push_back(side.tokens / side.seconds);
                }
            }
            const double limit = peak.gflops(threads) * 1e9 / cost[nn::to_string(cfg.model)].per_token();
            // A row: the min, median and max of the runs' rates; s/epoch
            // is one epoch's tokens (one model's) at the median rate.
            const double epoch_seconds_per_rate =
                r.tokens * static_cast<double>(batches.size()) / static_cast<double>(steps);
            const auto print_row = [&](const std::string& how, const std::vector<double>& each, double loss) {
                const double middle = median(each);
                fmt::print("{:<10} {:>7} {:>10.0f} {:>10.0f} {:>10.0f} {:>11.0f} {:>9.1f}% {:>9.2f} {:>10.4f}\n",
                           nn::to_string(cfg.model), how, *std::min_element(each.begin(), each.end()), middle,
                           *std::max_element(each.begin(), each.end()), limit, 100.0 * middle / limit,
                           epoch_seconds_per_rate / middle, loss);
                return middle;
            };
            const double mid = print_row(std::to_string(threads), rates, r.loss);
            if (threads > 1) {
                std::vector<std::string> runs;
                for (size_t i = 0; i < rates.size(); ++i)
                    runs.push_back(fmt::format("{:.0f} ({:.0f} ns)", rates[i], round_trips[i]));
                fmt::print(
                    "{:<10} {:>7} each run, tokens/s (a cache line's round trip between the cores just before it): "
                    "{}\n",
                    "", "", fmt::join(runs, ", "));
                fmt::print(
                    "{:<10} {:>7} shards one after another in {} of {} steps (bursts of {} steps in {} probe "
                    "the way not taken; the others take the faster way)\n",
                    "", "", one_after_another, steps * repeat, lessons::ShardSchedule::kRecent,
                    lessons::ShardSchedule::kProbeEvery);
                const double ceiling = print_row(fmt::format("{} x 1", threads), apart, side.loss);
                fmt::print(
                    "{:<10} {:>7} {} independent 1-thread runs side by side (tokens/s of all; how the lessons "
                    "train the models they compare): the {}-thread row's median is {:.0f}% of theirs\n",
                    "", "", threads, threads, 100.0 * mid / ceiling);
            }
            for (const std::string dtype : {"float32", "float64"}) {
                const auto it = torch.find({nn::to_string(cfg.model), dtype, threads});
                if (it != torch.end())
                    fmt::print(
                        "{:<10} {:>7} {:>10.0f}   PyTorch {}, best threading; engine median / PyTorch = {:.2f}\n", "",
                        "", it->second, dtype, mid / it->second);
            }
        }
    // Did the machine hold still while the rows above were timed? (Not
    // with the busy process: it is stopped for this reading and restarted.)
    busy.reset();
    fmt::print("{}", peak.measure_again());

    if (profile) {
        busy = start_busy();
        ag::profile::set_enabled(true);
        for (const nn::LMConfig& cfg : models)
            for (int threads : thread_counts) {
                ag::set_num_threads(threads);
                Profile p;
                run(cfg, batches, steps, &p);
                print_profile(nn::to_string(cfg.model), threads, p);
            }
        ag::profile::set_enabled(false);
    }
}
