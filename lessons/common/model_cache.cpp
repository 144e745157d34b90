#include "lessons/common/model_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "autograd/engine.h"
#include "lessons/common/cli.h"
#include "lessons/common/independent_runs.h"
#include "lessons/common/report.h"
#include "nn/checkpoint.h"
#include "nn/json_strict.h"

namespace lessons {

using Json = nlohmann::ordered_json;

// Each struct's fields are described once, here: the structured bindings
// name every data member, so a field added to LmTrainOptions or EpochLog
// stops this file compiling until it is written below too, and so a new
// training option cannot be left out of the cache key.
void to_json(Json& j, const LmTrainOptions& o) {
    const auto& [epochs, batch_size, lr, beta1, beta2, eps, weight_decay, shuffle_seed, first_epoch, cosine,
                 warmup_steps, lr_min] = o;
    j = {{"epochs", epochs},
         {"batch_size", batch_size},
         {"lr", lr},
         {"beta1", beta1},
         {"beta2", beta2},
         {"eps", eps},
         {"weight_decay", weight_decay},
         {"shuffle_seed", shuffle_seed},
         {"first_epoch", first_epoch},
         {"cosine", cosine},
         {"warmup_steps", warmup_steps},
         {"lr_min", lr_min}};
}

void to_json(Json& j, const EpochLog& log) {
    const auto& [epoch, train_loss, seconds, tokens_per_second, step_losses] = log;
    j = {{"epoch", epoch},
         {"train_loss", train_loss},
         {"seconds", seconds},
         {"tokens_per_second", tokens_per_second},
         {"step_losses", step_losses}};
}

void from_json(const Json& j, EpochLog& log) {
    auto& [epoch, train_loss, seconds, tokens_per_second, step_losses] = log;
    j.at("epoch").get_to(epoch);
    j.at("train_loss").get_to(train_loss);
    j.at("seconds").get_to(seconds);
    j.at("tokens_per_second").get_to(tokens_per_second);
    j.at("step_losses").get_to(step_losses);
}

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

// What a cache file must record for this run: every input that changes
// the trained numbers, as one JSON object.
std::string cache_key(const nn::LMConfig& config, uint64_t init_seed, const std::vector<farm::Sentence>& train,
                      const LmTrainOptions& options) {
    const Json key = {{"version", kCacheVersion},
                      {"config", config},
                      {"init_seed", init_seed},
                      {"train", fingerprint(train)},
                      {"options", options}};
    return key.dump();
}

// The lock file beside a cache entry.
std::filesystem::path lock_file(const std::filesystem::path& entry) { return entry.string() + ".lock"; }

// An exclusive flock(2) on <entry>.lock, held while a run looks at, trains
// and writes its cache entry: a second run of the same entry (two lessons
// sharing out/, or one lesson started twice) waits, then finds the file
// the first one wrote and loads it, instead of training it again beside
// it. The lock is the kernel's, so a run that dies releases it. The empty
// lock file stays: removing it would let a third run lock a new file
// while the second still holds the old one.
class EntryLock {
public:
    explicit EntryLock(const std::filesystem::path& entry) : path_(lock_file(entry).string()) {
        fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd_ < 0) fail("cannot create");
        if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
        waited_ = errno == EWOULDBLOCK;
        int result;
        do {
            result = ::flock(fd_, LOCK_EX);
        } while (result != 0 && errno == EINTR);  // a signal while waiting: wait on
        if (result != 0) fail("cannot lock");
    }
    EntryLock(const EntryLock&) = delete;
    EntryLock& operator=(const EntryLock&) = delete;
    ~EntryLock() { ::close(fd_); }  // and the lock with it
    // Another run held the entry when this one came.
    bool waited() const { return waited_; }

private:
    [[noreturn]] void fail(const char* what) {
        const int error = errno;
        if (fd_ >= 0) ::close(fd_);
        throw std::runtime_error(
            fmt::format("cached_lm: {} the lock file {}: {}", what, path_, std::generic_category().message(error)));
    }
    std::string path_;
    int fd_ = -1;
    bool waited_ = false;
};

// The file of run `name` in out_dir's cache.
std::filesystem::path entry_file(const std::filesystem::path& out_dir, const std::string& name) {
    return model_cache_dir(out_dir) / (name + ".safetensors");
}

// Whether a loaded cache file was made by the run whose key this is.
bool made_by(const nn::Checkpoint& ckpt, const std::string& key) {
    const auto found = ckpt.metadata.find("cache_key");
    return found != ckpt.metadata.end() && found->second == key;
}

}  // namespace

CachedLm cached_lm(const std::filesystem::path& out_dir, const std::string& name, const nn::LMConfig& config,
                   uint64_t init_seed, const std::vector<farm::Sentence>& train, const LmTrainOptions& options,
                   Progress* progress) {
    if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
                            std::string::npos)
        throw std::invalid_argument(fmt::format("cached_lm: bad cache name '{}'", name));
    CachedLm run;
    run.file = entry_file(out_dir, name);
    run.model = std::make_unique<nn::LanguageModel>(config, init_seed);
    const std::string key = cache_key(config, init_seed, train, options);

    std::filesystem::create_directories(run.file.parent_path());
    // An entry or lock that is not a regular file (a folder, a FIFO) would
    // stop the run only when the trained model is saved: refuse it first.
    for (const std::filesystem::path& path : {run.file, lock_file(run.file)})
        if (std::error_code error;
            std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error))
            throw UsageError(
                fmt::format("the model cache's {} exists and is not a regular file: remove it, or give "
                            "another --out",
                            path.string()));
    const EntryLock lock(run.file);
    std::error_code missing;
    if (std::filesystem::exists(run.file, missing)) {
        try {
            const nn::Checkpoint ckpt = nn::load_safetensors(run.file.string());
            if (!made_by(ckpt, key)) {
                run.status = fmt::format("cache {} was made by another run (stale): retrained", run.file.string());
            } else {
                nn::load_into(*run.model, ckpt);
                run.logs = nn::parse_strict_json(ckpt.metadata.at("logs")).get<std::vector<EpochLog>>();
                run.status = "loaded from " + run.file.string() +
                             (lock.waited() ? " (another run was training it: this one waited)" : "");
                run.from_cache = true;
                return run;
            }
        } catch (const std::exception& e) {
            run.status = fmt::format("cache unusable ({}): retrained", e.what());
            run.model = std::make_unique<nn::LanguageModel>(config, init_seed);  // load_into may not have run
        }
    } else {
        run.status = "trained";
    }

    run.logs = train_lm(*run.model, train, options, progress);
    nn::save(*run.model, run.file.string(),
             {{"model", nn::to_string(config.model)},
              {"config", config.to_json()},
              {"cache_key", key},
              {"logs", Json(run.logs).dump()}});
    return run;
}

// <model>-<16 hex digits of the cache key's hash>: the file name of a run.
static std::string run_name(const nn::LMConfig& config, uint64_t init_seed, const std::vector<farm::Sentence>& train,
                            const LmTrainOptions& options) {
    Fnv1a f;
    for (char c : cache_key(config, init_seed, train, options)) f.mix(static_cast<unsigned char>(c));
    return fmt::format("{}-{:016x}", nn::to_string(config.model), f.h);
}

CachedLm cached_lm(const std::filesystem::path& out_dir, const nn::LMConfig& config, uint64_t init_seed,
                   const std::vector<farm::Sentence>& train, const LmTrainOptions& options, Progress* progress) {
    return cached_lm(out_dir, run_name(config, init_seed, train, options), config, init_seed, train, options, progress);
}

// Whether out_dir's entry for this run loads and was made by it (what
// cached_lm checks before it trusts the file; no lock: a wrong guess only
// moves the run out of, or into, the side-by-side rounds).
static bool holds(const std::filesystem::path& out_dir, const LmRun& run, const std::vector<farm::Sentence>& train,
                  const LmTrainOptions& options) {
    try {
        const std::filesystem::path file = entry_file(out_dir, run_name(run.config, run.init_seed, train, options));
        return made_by(nn::load_safetensors(file.string()), cache_key(run.config, run.init_seed, train, options));
    } catch (const std::exception&) {
        return false;
    }
}

std::vector<CachedLm> cached_lms(const std::filesystem::path& out_dir, const std::vector<LmRun>& runs,
                                 const std::vector<farm::Sentence>& train, const LmTrainOptions& options,
                                 Progress* progress) {
    std::vector<CachedLm> result(runs.size());
    std::vector<size_t> to_train;
    for (size_t i = 0; i < runs.size(); ++i)
        if (!holds(out_dir, runs[i], train, options)) to_train.push_back(i);
    // Whole rounds of one run per thread; a run left over trains alone on
    // every thread afterwards (side by side with nothing it would have one).
    const size_t threads = static_cast<size_t>(ag::num_threads());
    to_train.resize(threads >= 2 ? to_train.size() / threads * threads : 0);
    if (!to_train.empty()) {
        std::mutex report;  // one run's line at a time
        run_independent(std::vector<int64_t>(to_train.size(), 1), [&](size_t t) {
            const size_t i = to_train[t];
            result[i] = cached_lm(out_dir, runs[i].config, runs[i].init_seed, train, options);
            const std::lock_guard<std::mutex> lock(report);
            if (progress && !result[i].logs.empty()) {
                const EpochLog& last = result[i].logs.back();
                double seconds = 0;
                for (const EpochLog& log : result[i].logs) seconds += log.seconds;
                progress->line(
                    fmt::format("{} seed {} ({}): {} side by side, loss {:.4f}  {} tok/s  {}",
                                nn::to_string(runs[i].config.model), runs[i].init_seed, nn::describe(runs[i].config),
                                count_of(static_cast<int64_t>(result[i].logs.size()), "epoch"), last.train_loss,
                                group_thousands(last.tokens_per_second), format_duration(seconds)));
            }
        });
    }
    for (size_t i = 0; i < runs.size(); ++i)
        if (!result[i].model)
            result[i] = cached_lm(out_dir, runs[i].config, runs[i].init_seed, train, options, progress);
    return result;
}

}  // namespace lessons
