#pragma once
// Trained language models cached in --out DIR/models/: a model that a lesson
// trains (the pre-trained GPT of lesson 01, the ModernLMs of 03-05) is
// trained once and loaded by later runs.
//
//     auto run = cached_lm(options.out, "gpt_seed0", nn::LMConfig::gpt(), 0,
//                          corpora.train, LmTrainOptions{}, &progress);
//     run.model->...;   run.logs[4].train_loss;   run.status  ("trained", …)
//
// The cache file records what made the model: the configuration, the
// initialisation seed, every training option, a fingerprint of the training
// sentences and the cache's format version. A file made any other way
// (stale), or that does not load (corrupt, truncated, changed after it was
// written, not a checkpoint), is reported in `status` and replaced by a
// fresh training run; nothing else is ever trusted. The training logs (loss
// per epoch and per step) are kept in the file, so a cached run still has
// its loss curve.
//
// Runs at once are safe: a run holds a lock on its entry (<file>.lock)
// while it reads, trains and writes it, so a second run of the same entry,
// in another process or thread, waits and then loads the first one's
// model; files are written whole (nn::write_file_atomically).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "data/farm_language.h"
#include "lessons/common/training.h"
#include "nn/language_model.h"

namespace lessons {

struct CachedLm {
    std::unique_ptr<nn::LanguageModel> model;
    std::vector<EpochLog> logs;  // the training run's logs (stored in the cache file)
    std::string status;          // "trained", "loaded from <file>" (+ that it waited), or why the cache was rebuilt
    bool from_cache = false;
    std::filesystem::path file;
};

// The model nn::LanguageModel(config, init_seed) after train_lm(train,
// options), from out_dir/models/<name>.safetensors when that file holds
// exactly this run, else trained now and saved there. name: letters,
// digits, '_', '-' and '.' only (std::invalid_argument otherwise).
CachedLm cached_lm(const std::filesystem::path& out_dir, const std::string& name, const nn::LMConfig& config,
                   uint64_t init_seed, const std::vector<farm::Sentence>& train, const LmTrainOptions& options,
                   Progress* progress = nullptr);

// The same, named after the run itself: <model>-<16 hex digits of a hash
// of everything the file records>. Two lessons that train exactly the same run (say the
// default ModernLM, seed 0, 5 epochs) share one file.
CachedLm cached_lm(const std::filesystem::path& out_dir, const nn::LMConfig& config, uint64_t init_seed,
                   const std::vector<farm::Sentence>& train, const LmTrainOptions& options,
                   Progress* progress = nullptr);

// One of the runs a lesson compares: a configuration and its initialisation
// seed (the training sentences and options are the lesson's, for all).
struct LmRun {
    nn::LMConfig config;
    uint64_t init_seed = 0;
};

// cached_lm(out_dir, run.config, run.init_seed, train, options) for every
// run, in order: the same models, logs and statuses, but the runs the cache
// does not hold yet are trained side by side (run_independent), one per
// thread, in whole rounds of ag::num_threads() runs; their epochs would
// interleave, so `progress` gets one line per run as it ends. A run left
// over (one run to train, or 3 on 2 threads) trains alone on every thread
// and shows its epochs on `progress`, as cached_lm does.
std::vector<CachedLm> cached_lms(const std::filesystem::path& out_dir, const std::vector<LmRun>& runs,
                                 const std::vector<farm::Sentence>& train, const LmTrainOptions& options,
                                 Progress* progress = nullptr);

}  // namespace lessons
