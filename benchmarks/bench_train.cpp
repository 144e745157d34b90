// Training throughput: the work of anchors.md's table. One epoch of
// language-model training on the farm corpus (batches of 32 sentences,
// right-padded): forward, masked cross-entropy, backward, AdamW step.
// tokens/s = non-pad target tokens / wall time, at 1 and 2 threads, for
// GPT and ModernLM at the lesson settings.
//
//   bench_train [--steps N] [--threads N] [--model gpt|modern_lm]
//   (default: a whole epoch, 625 steps; 1 and 2 threads; both models)
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/core.h>

#include "data/batching.h"
#include "data/farm_language.h"
#include "nn/data_parallel.h"
#include "nn/language_model.h"
#include "nn/optim.h"

namespace {

struct Result {
    double seconds = 0, tokens = 0, loss = 0;
};

Result run(const nn::LMConfig& cfg, const std::vector<farm::LmBatch>& batches, int64_t steps) {
    nn::LanguageModel model(cfg, 0);
    optim::AdamW opt(model.parameters(), 1e-3, 0.9, 0.95, 1e-8, 0.01);
    nn::DataParallel parallel(model);
    Result r;
    const auto start = std::chrono::steady_clock::now();
    for (int64_t s = 0; s < steps; ++s) {
        const farm::LmBatch& b = batches[static_cast<size_t>(s) % batches.size()];
        // only the real rows: the packed batch (padding changes no real token's output)
        opt.zero_grad();
        r.loss = parallel.forward_backward(b.packed_ids, b.packed_targets, b.starts);
        opt.step();
        r.tokens += static_cast<double>(b.tokens);
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    int64_t steps = -1;
    std::vector<int> thread_counts = {1, 2};
    std::vector<nn::LMConfig> models = {nn::LMConfig::gpt(), nn::LMConfig::modern_lm()};
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--steps" && i + 1 < argc) {
            steps = std::atoll(argv[++i]);
        } else if (flag == "--threads" && i + 1 < argc) {
            thread_counts = {std::atoi(argv[++i])};
        } else if (flag == "--model" && i + 1 < argc) {
            const std::string m = argv[++i];
            models = {m == "gpt" ? nn::LMConfig::gpt() : nn::LMConfig::modern_lm()};
        } else {
            fmt::print(stderr, "usage: bench_train [--steps N] [--threads N] [--model gpt|modern_lm]\n");
            return 2;
        }
    }
    const farm::Corpora corpora = farm::make_corpora(0);
    ag::Generator shuffle(0);
    const auto batches = farm::make_lm_batches(corpora.train, 32, &shuffle);
    if (steps <= 0) steps = static_cast<int64_t>(batches.size());
    fmt::print("training throughput: {} steps of 32 sentences (one epoch = {} steps)\n", steps, batches.size());
    fmt::print("{:<10} {:>7} {:>12} {:>10} {:>10} {:>10}\n", "model", "threads", "tokens/s", "seconds",
               "s/epoch", "last loss");
    for (const nn::LMConfig& cfg : models)
        for (int threads : thread_counts) {
            ag::set_num_threads(threads);
            const Result r = run(cfg, batches, steps);
            const double per_epoch = r.seconds * static_cast<double>(batches.size()) / static_cast<double>(steps);
            fmt::print("{:<10} {:>7} {:>12.0f} {:>10.2f} {:>10.2f} {:>10.4f}\n", cfg.model, threads,
                       r.tokens / r.seconds, r.seconds, per_epoch, r.loss);
        }
}
