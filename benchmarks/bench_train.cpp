// Training throughput: the work of docs/reference_figures.md's table. One
// epoch of language-model training on the farm corpus (batches of 32
// sentences, right-padded): forward, masked cross-entropy, backward, AdamW
// step. tokens/s = non-pad target tokens / wall time, at 1 and 2 threads,
// for GPT and ModernLM at the lesson settings.
//
//   bench_train [--steps N] [--threads N] [--model gpt|modern_lm]
//   (default: a whole epoch, 625 steps; 1 and 2 threads; both models;
//   bench_train --help says the same)
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "data/batching.h"
#include "data/farm_language.h"
#include "lessons/common/cli.h"
#include "lessons/common/sharded_gradient.h"
#include "nn/language_model.h"
#include "nn/optim.h"

namespace {

struct Result {
    double seconds = 0, tokens = 0, loss = 0;
};

Result run(const nn::LMConfig& cfg, const std::vector<farm::LmBatch>& batches, int64_t steps) {
    nn::LanguageModel model(cfg, 0);
    optim::AdamW opt(model.parameters(), 1e-3, 0.9, 0.95, 1e-8, 0.01);
    lessons::ShardedGradient sharded(model);
    Result r;
    const auto start = std::chrono::steady_clock::now();
    for (int64_t s = 0; s < steps; ++s) {
        const farm::LmBatch& b = batches[static_cast<size_t>(s) % batches.size()];
        // only the real rows: the packed batch (padding changes no real token's output)
        opt.zero_grad();
        r.loss = sharded.forward_backward(b.packed_ids, b.packed_targets, b.starts);
        opt.step();
        r.tokens += static_cast<double>(b.tokens);
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    int64_t steps = 0;     // 0: a whole epoch
    int only_threads = 0;  // 0: 1 and 2
    std::string model;     // empty: both
    CLI::App app("Language-model training throughput (tokens/s) of GPT and ModernLM on the farm corpus.",
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
    if (const auto status = lessons::parse_command_line(app, argc, argv, "bench_train")) return *status;
    std::vector<int> thread_counts = {1, 2};
    if (only_threads > 0) thread_counts = {only_threads};
    std::vector<nn::LMConfig> models = {nn::LMConfig::gpt(), nn::LMConfig::modern_lm()};
    if (!model.empty()) models = {model == "gpt" ? nn::LMConfig::gpt() : nn::LMConfig::modern_lm()};
    const farm::Corpora corpora = farm::make_corpora(0);
    ag::Generator shuffle(0);
    const auto batches = farm::make_lm_batches(corpora.train, 32, &shuffle);
    if (steps <= 0) steps = static_cast<int64_t>(batches.size());
    fmt::print("training throughput: {} steps of 32 sentences (one epoch = {} steps)\n", steps, batches.size());
    fmt::print("{:<10} {:>7} {:>12} {:>10} {:>10} {:>10}\n", "model", "threads", "tokens/s", "seconds", "s/epoch",
               "last loss");
    for (const nn::LMConfig& cfg : models)
        for (int threads : thread_counts) {
            ag::set_num_threads(threads);
            const Result r = run(cfg, batches, steps);
            const double per_epoch = r.seconds * static_cast<double>(batches.size()) / static_cast<double>(steps);
            fmt::print("{:<10} {:>7} {:>12.0f} {:>10.2f} {:>10.2f} {:>10.4f}\n", nn::to_string(cfg.model), threads,
                       r.tokens / r.seconds, r.seconds, per_epoch, r.loss);
        }
}
