#include "lessons/common/model_cache.h"

#include <stdexcept>

#include <fmt/format.h>

#include "nn/checkpoint.h"
#include "nn/json.h"

namespace lessons {
namespace {

// Bump when the meaning of a cached file changes (training code, models).
constexpr int kCacheVersion = 1;

// FNV-1a over every sentence's token ids, lengths included: two corpora
// with the same fingerprint are, for practical purposes, the same corpus.
struct Fnv1a {
    uint64_t h = 1469598103934665603ull;
    void mix(uint64_t v) {
        for (int byte = 0; byte < 8; ++byte) {
            h ^= (v >> (8 * byte)) & 0xff;
            h *= 1099511628211ull;
        }
    }
};

std::string fingerprint(const std::vector<farm::Sentence>& sentences) {
    Fnv1a f;
    for (const farm::Sentence& s : sentences) {
        f.mix(s.ids.size());
        for (int64_t id : s.ids) f.mix(static_cast<uint64_t>(id));
    }
    return fmt::format("{:016x}/{}", f.h, sentences.size());
}

json::Value logs_to_json(const std::vector<EpochLog>& logs) {
    json::Array out;
    for (const EpochLog& log : logs) {
        json::Value entry;
        entry["epoch"] = log.epoch;
        entry["train_loss"] = log.train_loss;
        entry["seconds"] = log.seconds;
        entry["tokens_per_second"] = log.tokens_per_second;
        entry["step_losses"] = json::Array(log.step_losses.begin(), log.step_losses.end());
        out.push_back(std::move(entry));
    }
    return out;
}

std::vector<EpochLog> logs_from_json(const json::Value& value) {
    std::vector<EpochLog> logs;
    for (const json::Value& entry : value.as_array()) {
        EpochLog log;
        log.epoch = entry.at("epoch").as_int();
        log.train_loss = entry.at("train_loss").as_number();
        log.seconds = entry.at("seconds").as_number();
        log.tokens_per_second = entry.at("tokens_per_second").as_number();
        for (const json::Value& loss : entry.at("step_losses").as_array()) log.step_losses.push_back(loss.as_number());
        logs.push_back(std::move(log));
    }
    return logs;
}

// What a cache file must record for this run: every input that changes
// the trained numbers, as one JSON object.
std::string cache_key(const nn::LMConfig& config, uint64_t init_seed, const std::vector<farm::Sentence>& train,
                      const LmTrainOptions& options) {
    json::Value key;
    key["version"] = kCacheVersion;
    key["config"] = json::parse(config.to_json());
    key["init_seed"] = std::to_string(init_seed);   // as text: a uint64 need not fit a double
    key["train"] = fingerprint(train);
    json::Value& o = key["options"];
    o["epochs"] = options.epochs;
    o["batch_size"] = options.batch_size;
    o["lr"] = options.lr;
    o["beta1"] = options.beta1;
    o["beta2"] = options.beta2;
    o["eps"] = options.eps;
    o["weight_decay"] = options.weight_decay;
    o["shuffle_seed"] = std::to_string(options.shuffle_seed);
    o["first_epoch"] = options.first_epoch;
    o["cosine"] = options.cosine;
    o["warmup_steps"] = options.warmup_steps;
    o["lr_min"] = options.lr_min;
    return json::dump(key);
}

}  // namespace

CachedLm cached_lm(const std::filesystem::path& out_dir, const std::string& name, const nn::LMConfig& config,
                   uint64_t init_seed, const std::vector<farm::Sentence>& train, const LmTrainOptions& options,
                   Progress* progress) {
    if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
                            std::string::npos)
        throw std::invalid_argument(fmt::format("cached_lm: bad cache name '{}'", name));
    CachedLm run;
    run.file = out_dir / "models" / (name + ".safetensors");
    run.model = std::make_unique<nn::LanguageModel>(config, init_seed);
    const std::string key = cache_key(config, init_seed, train, options);

    std::error_code missing;
    if (std::filesystem::exists(run.file, missing)) {
        try {
            const nn::Checkpoint ckpt = nn::load_safetensors(run.file.string());
            const auto found = ckpt.metadata.find("cache_key");
            if (found == ckpt.metadata.end() || found->second != key) {
                run.status = fmt::format("cache {} was made by another run (stale): retrained", run.file.string());
            } else {
                nn::load_into(*run.model, ckpt);
                run.logs = logs_from_json(json::parse(ckpt.metadata.at("logs")));
                run.status = "loaded from " + run.file.string();
                run.from_cache = true;
                return run;
            }
        } catch (const std::exception& e) {
            run.status = fmt::format("cache unusable ({}): retrained", e.what());
            run.model = std::make_unique<nn::LanguageModel>(config, init_seed);   // load_into may not have run
        }
    } else {
        run.status = "trained";
    }

    run.logs = train_lm(*run.model, train, options, progress);
    std::filesystem::create_directories(run.file.parent_path());
    nn::save(*run.model, run.file.string(),
             {{"model", config.model},
              {"config", config.to_json()},
              {"cache_key", key},
              {"logs", json::dump(logs_to_json(run.logs))}});
    return run;
}

CachedLm cached_lm(const std::filesystem::path& out_dir, const nn::LMConfig& config, uint64_t init_seed,
                   const std::vector<farm::Sentence>& train, const LmTrainOptions& options, Progress* progress) {
    Fnv1a f;
    for (char c : cache_key(config, init_seed, train, options)) f.mix(static_cast<unsigned char>(c));
    return cached_lm(out_dir, fmt::format("{}-{:016x}", config.model, f.h), config, init_seed, train, options,
                     progress);
}

}  // namespace lessons
