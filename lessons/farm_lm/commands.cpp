#include "lessons/farm_lm/commands.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "lessons/common/evaluation.h"
#include "lessons/common/training.h"
#include "lessons/farm_lm/args.h"
#include "nn/checkpoint.h"
#include "nn/json.h"

namespace lessons::farm_lm {
namespace {

constexpr int64_t kAgreementPrefixes = 500;  // per k, farm_language.md
constexpr int64_t kMaxCount = 1'000'000;     // upper bound of counting flags

// ---- the usage text ------------------------------------------------------

const char* const kUsage = R"(usage: farm_lm <command> [options]
A playground for the farm-language models: GPT (lecture 2) and ModernLM (§7).

commands:
  train    train a model on the farm corpus, report it and save a checkpoint
  eval     test perplexity and agreement per k of a checkpoint
  sample   continue a prompt with a checkpoint's model (KV cache)
  help     show this help (also --help)

farm_lm train --model gpt|modern_lm --out FILE.safetensors [options]
  --model M          gpt (111,360 parameters) or modern_lm (99,648)
  --kv-heads N       KV heads: 4 = MHA, 2 = GQA (modern_lm's default), 1 = MQA (§5)
  --pos P            rope (modern_lm's default), learned, sinusoidal or none (§4, §7.3)
  --pairing P        RoPE pairing: half (default, Llama) or interleaved (RoFormer)
  --window W         sliding window of W visible tokens; 0 = full attention (§6)
  --epochs N         passes over the 20,000 training sentences (default 5)
  --lr X             AdamW learning rate (default 0.001), constant unless --cosine
  --cosine           linear warmup, then a cosine decay to lr/10 at the last step
  --warmup N         warmup steps for --cosine (default 0)
  --seed S           initialisation and batch order (default 0)
  --data-seed S      the corpora and the agreement sets (default 0)
  --out FILE         the checkpoint to write (safetensors, with the config)
  GPT is lecture 2's model: learned positions, 4 heads, no window.

farm_lm eval CKPT [--data FILE] [--json FILE] [--data-seed S]
  --data FILE        perplexity of FILE's sentences instead of the test set's:
                     one sentence per line, farm-language words separated by
                     spaces; <s> and </s> are added where missing; blank lines
                     are skipped
  --json FILE        also write the results to FILE as JSON

farm_lm sample CKPT [--prompt TEXT] [--greedy | --temperature T] [options]
  --prompt TEXT      the start of a sentence, e.g. "the dogs near the cat"
                     (default: nothing, a whole sentence is generated)
  --greedy           take the most likely token at each step
  --temperature T    sample from softmax(logits / T) (default 1)
  --seed S           the sampling seed (default 0)
  --max-tokens N     new tokens at most (default 40); a sentence stops at </s>
  --count N          how many continuations (default 1)

every command:
  --threads N        OpenMP threads for the kernels; results do not depend on it
train and eval:
  --limit N          use only N sentences of each set (training, test, each
                     agreement k): for quick checks and the tests

exit status: 0 done; 2 a bad flag, checkpoint, data file or word (one line
on stderr says which); 1 any other error.
)";

// ---- data -----------------------------------------------------------------

// What a model is measured on (see commands.h for the seeds).
struct EvalSets {
    std::vector<farm::Sentence> sentences;               // perplexity
    std::string sentences_from;                          // "the test set (data seed 0)" or a file
    std::vector<std::vector<farm::Sentence>> agreement;  // [k - 1], k = 1..6
};

std::vector<farm::Sentence> first(std::vector<farm::Sentence> sentences, int64_t limit) {
    if (limit > 0 && static_cast<int64_t>(sentences.size()) > limit) sentences.resize(static_cast<size_t>(limit));
    return sentences;
}

std::vector<std::vector<farm::Sentence>> agreement_sets(uint64_t data_seed, int64_t limit) {
    return farm::make_agreement_sets(data_seed + 1,
                                     limit > 0 ? std::min(limit, kAgreementPrefixes) : kAgreementPrefixes);
}

// Whitespace-separated words to ids; an unknown word is the user's mistake,
// reported with where it was found ("x.txt line 3", "the prompt").
std::vector<int64_t> words_to_ids(const std::string& text, const std::string& where) {
    std::vector<int64_t> ids;
    std::istringstream words(text);
    for (std::string word; words >> word;) {
        try {
            ids.push_back(farm::encode(word).at(0));
        } catch (const std::invalid_argument&) {
            throw InputError(fmt::format("{}: unknown word '{}' (not in the farm language's 68 tokens)", where, word));
        }
    }
    return ids;
}

// Checks the words a user gave for one sentence (before <s> and </s> are
// added): <s> may only open it and </s> only close it (where it may), and
// <pad> never appears (a pad is masked out, an inner </s> ends nothing).
void check_markers(const std::vector<int64_t>& ids, bool eos_may_close, const std::string& where) {
    for (size_t t = 0; t < ids.size(); ++t) {
        const int64_t id = ids[t];
        const bool closes = eos_may_close && t + 1 == ids.size();
        if (id == farm::PAD || (id == farm::BOS && t != 0) || (id == farm::EOS && !closes))
            throw InputError(fmt::format("{}: '{}' cannot stand at word {}", where, farm::token(id), t + 1));
    }
}

// --data FILE: one sentence per line, <s> and </s> added where missing.
std::vector<farm::Sentence> read_sentences(const std::string& path, const nn::LMConfig& cfg) {
    std::ifstream file(path);
    if (!file) throw InputError(fmt::format("cannot read the data file '{}'", path));
    std::vector<farm::Sentence> sentences;
    int64_t line_number = 0;
    for (std::string line; std::getline(file, line);) {
        ++line_number;
        const std::string where = fmt::format("{} line {}", path, line_number);
        std::vector<int64_t> ids = words_to_ids(line, where);
        if (ids.empty()) continue;  // a blank line
        check_markers(ids, true, where);
        if (ids.front() != farm::BOS) ids.insert(ids.begin(), farm::BOS);
        if (ids.back() != farm::EOS) ids.push_back(farm::EOS);
        // The model reads all but the last token: with learned positions at
        // most max_len of them.
        if (cfg.pos == nn::PosEncoding::Learned && static_cast<int64_t>(ids.size()) - 1 > cfg.max_len)
            throw InputError(fmt::format("{}: {} tokens, longer than the model's context of {} + 1", where, ids.size(),
                                         cfg.max_len));
        farm::Sentence s;
        s.ids = std::move(ids);
        sentences.push_back(std::move(s));
    }
    if (sentences.empty()) throw InputError(fmt::format("the data file '{}' has no sentences", path));
    return sentences;
}

// ---- models -----------------------------------------------------------------

std::string describe(const nn::LMConfig& c, int64_t parameters) {
    std::string positions = nn::to_string(c.pos);
    if (c.pos == nn::PosEncoding::Rope) positions += " " + nn::to_string(c.rope_pairing);
    const std::string attention = c.window > 0 ? fmt::format("window {}", c.window) : "full attention";
    return fmt::format("{}, {} parameters: d {}, {} layers, {} query / {} KV heads, {} positions, {}", c.model,
                       group_thousands(static_cast<double>(parameters)), c.d_model, c.n_layers, c.n_heads, c.n_kv_heads,
                       positions, attention);
}

struct Loaded {
    nn::LMConfig cfg;
    std::unique_ptr<nn::LanguageModel> model;
};

// A checkpoint written by farm_lm or a lesson: the config in its metadata
// rebuilds the model, then the weights are copied in. Every problem with
// the file is the user's (exit 2).
Loaded load_model(const std::string& path) {
    nn::Checkpoint ckpt;
    try {
        ckpt = nn::load_safetensors(path);
    } catch (const std::exception& e) {
        throw InputError(e.what());
    }
    const auto config = ckpt.metadata.find("config");
    if (config == ckpt.metadata.end())
        throw InputError(
            fmt::format("'{}' has no model config in its metadata (not a language-model checkpoint?)", path));
    Loaded loaded;
    try {
        loaded.cfg = nn::LMConfig::from_json(config->second);
    } catch (const std::exception& e) {
        throw InputError(fmt::format("'{}': its model config does not parse: {}", path, e.what()));
    }
    if (loaded.cfg.vocab != farm::VOCAB_SIZE)
        throw InputError(fmt::format("'{}': a model of {} tokens, not the farm language's {}", path, loaded.cfg.vocab,
                                     farm::VOCAB_SIZE));
    loaded.model = std::make_unique<nn::LanguageModel>(loaded.cfg, 0);
    try {
        nn::load_into(*loaded.model, ckpt);
    } catch (const std::exception& e) {
        throw InputError(fmt::format("'{}': {}", path, e.what()));
    }
    return loaded;
}

// ---- measuring --------------------------------------------------------------

struct Measures {
    double perplexity = 0;
    int64_t tokens = 0;  // predicted tokens the perplexity averages over
    std::vector<AgreementResult> agreement;
};

Measures measure(const nn::LanguageModel& model, const EvalSets& sets) {
    Measures m;
    m.perplexity = perplexity(model, sets.sentences);
    for (const farm::Sentence& s : sets.sentences) m.tokens += static_cast<int64_t>(s.ids.size()) - 1;
    m.agreement = agreement_per_k(model, sets.agreement);
    return m;
}

void print_measures(std::FILE* out, const EvalSets& sets, const Measures& m) {
    fmt::print(out, "perplexity on {}: {:.4f} ({} sentences, {} predicted tokens)\n", sets.sentences_from, m.perplexity,
               sets.sentences.size(), m.tokens);
    fmt::print(out,
               "agreement at the verb ({} prefixes per k, every attractor of the other number; "
               "k = 4-6 are longer than any training sentence):\n",
               sets.agreement.front().size());
    fmt::print(out, "  {:>2}  {:>8}  {:>8}  {:>10}\n", "k", "distance", "accuracy", "p(correct)");
    for (size_t k = 1; k <= m.agreement.size(); ++k)
        fmt::print(out, "  {:>2}  {:>8}  {:>8.3f}  {:>10.3f}\n", k, 3 * k, m.agreement[k - 1].accuracy,
                   m.agreement[k - 1].p_correct);
}

void set_threads(const Args& a) {
    if (a.has("--threads")) ag::set_num_threads(static_cast<int>(a.integer("--threads", 0, 1, 1024)));
}

void no_positional(const Args& a) {
    if (!a.positional().empty()) throw UsageError(fmt::format("unexpected argument '{}'", a.positional().front()));
}

std::string checkpoint_argument(const Args& a, const char* command) {
    if (a.positional().size() != 1)
        throw UsageError(a.positional().empty() ? fmt::format("a checkpoint is needed: farm_lm {} CKPT", command)
                                                : fmt::format("unexpected argument '{}'", a.positional()[1]));
    return a.positional().front();
}

// ---- train --------------------------------------------------------------------

nn::LMConfig config_from(const Args& a) {
    const std::string name = a.text("--model", "");
    if (name.empty()) throw UsageError("--model is needed: gpt or modern_lm");
    if (name != "gpt" && name != "modern_lm")
        throw UsageError(fmt::format("--model must be gpt or modern_lm, got '{}'", name));
    nn::LMConfig cfg = name == "gpt" ? nn::LMConfig::gpt() : nn::LMConfig::modern_lm();
    try {
        cfg.n_kv_heads = a.integer("--kv-heads", cfg.n_kv_heads, 1, cfg.n_heads);
        if (a.has("--pos")) cfg.pos = nn::pos_encoding_from_string(a.text("--pos", ""));
        if (a.has("--pairing")) cfg.rope_pairing = nn::rope_pairing_from_string(a.text("--pairing", ""));
        cfg.window = a.integer("--window", cfg.window, 0, kMaxCount);
        cfg.validate();
    } catch (const std::invalid_argument& e) {  // the config's own checks
        throw UsageError(e.what());
    }
    return cfg;
}

int train(const Args& a, std::FILE* out, std::FILE* err) {
    no_positional(a);
    const nn::LMConfig cfg = config_from(a);
    const std::string path = a.text("--out", "");
    if (path.empty()) throw UsageError("--out FILE.safetensors is needed (where to save the checkpoint)");
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    if (!folder.empty() && !std::filesystem::is_directory(folder))
        throw InputError(fmt::format("--out: the folder '{}' does not exist", folder.string()));

    LmTrainOptions options;
    options.epochs = a.integer("--epochs", options.epochs, 1, kMaxCount);
    options.lr = a.positive("--lr", options.lr);
    options.cosine = a.has("--cosine");
    options.lr_min = options.lr / 10;
    options.warmup_steps = a.integer("--warmup", 0, 0, kMaxCount);
    if (options.warmup_steps > 0 && !options.cosine) throw UsageError("--warmup goes with --cosine");
    const uint64_t seed = a.seed("--seed", 0);
    options.shuffle_seed = seed;
    const uint64_t data_seed = a.seed("--data-seed", 0);
    const int64_t limit = a.integer("--limit", 0, 1, kMaxCount);
    set_threads(a);

    const farm::Corpora corpora = farm::make_corpora(data_seed);
    const std::vector<farm::Sentence> training = first(corpora.train, limit);
    const int64_t steps =
        options.epochs * ((static_cast<int64_t>(training.size()) + options.batch_size - 1) / options.batch_size);
    if (options.warmup_steps > steps)
        throw UsageError(fmt::format("--warmup {} is longer than the run ({} steps)", options.warmup_steps, steps));
    const EvalSets sets{first(corpora.test, limit), fmt::format("the test set (data seed {})", data_seed),
                        agreement_sets(data_seed, limit)};

    nn::LanguageModel model(cfg, seed);
    fmt::print(out, "farm_lm train: {}\n", describe(cfg, model.num_parameters()));
    fmt::print(out, "{} epoch{} of {} sentences in batches of {}, AdamW lr {:g} ({}), seed {}, data seed {}\n",
               options.epochs, options.epochs == 1 ? "" : "s", group_thousands(static_cast<double>(training.size())),
               options.batch_size, options.lr,
               options.cosine ? fmt::format("warmup {} steps, cosine to {:g}", options.warmup_steps, options.lr_min)
                              : std::string("constant"),
               seed, data_seed);
    std::fflush(out);

    Progress progress(err, ::isatty(::fileno(err)) == 1);
    const std::vector<EpochLog> logs = train_lm(model, training, options, &progress);
    fmt::print(out, "  {:>5}  {:>10}  {:>9}  {:>8}\n", "epoch", "train loss", "tokens/s", "seconds");
    double seconds = 0;
    for (const EpochLog& log : logs) {
        fmt::print(out, "  {:>5}  {:>10.4f}  {:>9.0f}  {:>8.1f}\n", log.epoch, log.train_loss, log.tokens_per_second,
                   log.seconds);
        seconds += log.seconds;
    }
    fmt::print(out, "training took {}\n", format_duration(seconds));

    const Measures m = measure(model, sets);
    print_measures(out, sets, m);

    // The config rebuilds the model (models.md); the rest says how it was made.
    nn::save(model, path,
             {{"model", cfg.model},
              {"config", cfg.to_json()},
              {"epochs", std::to_string(options.epochs)},
              {"lr", fmt::format("{:g}", options.lr)},
              {"schedule", options.cosine ? fmt::format("cosine, warmup {}", options.warmup_steps) : "constant"},
              {"seed", std::to_string(seed)},
              {"data_seed", std::to_string(data_seed)},
              {"train_sentences", std::to_string(training.size())},
              {"test_perplexity", fmt::format("{:.6f}", m.perplexity)}});
    fmt::print(out, "saved {}\n", path);
    return 0;
}

// ---- eval -----------------------------------------------------------------------

json::Value measures_json(const std::string& path, const Loaded& loaded, const EvalSets& sets, const Measures& m,
                          uint64_t data_seed) {
    json::Array agreement;
    for (size_t k = 1; k <= m.agreement.size(); ++k)
        agreement.push_back(json::Object{{"k", k},
                                         {"prefixes", sets.agreement[k - 1].size()},
                                         {"accuracy", m.agreement[k - 1].accuracy},
                                         {"p_correct", m.agreement[k - 1].p_correct}});
    return json::Object{{"checkpoint", path},
                        {"model", loaded.cfg.model},
                        {"config", json::parse(loaded.cfg.to_json())},
                        {"parameters", loaded.model->num_parameters()},
                        {"data_seed", data_seed},
                        {"perplexity", json::Object{{"on", sets.sentences_from},
                                                    {"sentences", sets.sentences.size()},
                                                    {"tokens", m.tokens},
                                                    {"value", m.perplexity}}},
                        {"agreement", std::move(agreement)}};
}

int eval(const Args& a, std::FILE* out) {
    const std::string path = checkpoint_argument(a, "eval");
    const uint64_t data_seed = a.seed("--data-seed", 0);
    const int64_t limit = a.integer("--limit", 0, 1, kMaxCount);
    const std::string json_path = a.text("--json", "");
    set_threads(a);

    const Loaded loaded = load_model(path);
    EvalSets sets;
    if (a.has("--data")) {
        sets.sentences_from = a.text("--data", "");
        sets.sentences = read_sentences(sets.sentences_from, loaded.cfg);
    } else {
        sets.sentences = first(farm::make_corpora(data_seed).test, limit);
        sets.sentences_from = fmt::format("the test set (data seed {})", data_seed);
    }
    sets.agreement = agreement_sets(data_seed, limit);

    fmt::print(out, "farm_lm eval {}: {}\n", path, describe(loaded.cfg, loaded.model->num_parameters()));
    const Measures m = measure(*loaded.model, sets);
    print_measures(out, sets, m);
    if (!json_path.empty()) {
        std::ofstream file(json_path);
        file << json::dump(measures_json(path, loaded, sets, m, data_seed), 2) << "\n";
        if (!file.flush()) throw std::runtime_error(fmt::format("cannot write '{}'", json_path));
        fmt::print(out, "wrote {}\n", json_path);
    }
    return 0;
}

// ---- sample -----------------------------------------------------------------------

int sample(const Args& a, std::FILE* out) {
    const std::string path = checkpoint_argument(a, "sample");
    if (a.has("--greedy") && a.has("--temperature")) throw UsageError("give --greedy or --temperature, not both");
    const Sampling sampling =
        a.has("--greedy") ? Sampling::greedy() : Sampling::with_temperature(a.positive("--temperature", 1.0));
    ag::Generator gen(a.seed("--seed", 0));
    const int64_t max_tokens = a.integer("--max-tokens", 40, 1, kMaxCount);
    const int64_t count = a.integer("--count", 1, 1, kMaxCount);
    set_threads(a);

    // The prompt: words of the farm language, <s> added in front.
    std::vector<int64_t> prompt = words_to_ids(a.text("--prompt", ""), "the prompt");
    check_markers(prompt, false, "the prompt");  // no </s>: there would be nothing left to continue
    if (prompt.empty() || prompt.front() != farm::BOS) prompt.insert(prompt.begin(), farm::BOS);

    const Loaded loaded = load_model(path);
    const nn::LMConfig& cfg = loaded.cfg;
    if (cfg.pos == nn::PosEncoding::Learned && static_cast<int64_t>(prompt.size()) > cfg.max_len)
        throw InputError(
            fmt::format("the prompt has {} tokens; the model reads at most {}", prompt.size(), cfg.max_len));
    for (int64_t i = 0; i < count; ++i)
        fmt::print(out, "{}\n", farm::decode(generate(*loaded.model, prompt, max_tokens, sampling, gen)));
    return 0;
}

int dispatch(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
    const std::string command = args.front();
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    const std::set<std::string> common = {"--threads"};
    const auto with = [&](std::set<std::string> flags) {
        flags.insert(common.begin(), common.end());
        return flags;
    };
    if (command == "train")
        return train(Args(rest,
                          with({"--model", "--kv-heads", "--pos", "--pairing", "--window", "--epochs", "--lr",
                                "--warmup", "--seed", "--data-seed", "--out", "--limit"}),
                          {"--cosine"}),
                     out, err);
    if (command == "eval") return eval(Args(rest, with({"--data", "--json", "--data-seed", "--limit"}), {}), out);
    if (command == "sample")
        return sample(
            Args(rest, with({"--prompt", "--temperature", "--seed", "--max-tokens", "--count"}), {"--greedy"}), out);
    throw UsageError(fmt::format("unknown command '{}' (train, eval, sample or help)", command));
}

}  // namespace

std::string usage() { return kUsage; }

int run(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
    if (args.empty()) {
        fmt::print(err, "{}", usage());
        return 2;
    }
    const auto is_help = [](const std::string& s) { return s == "--help" || s == "-h"; };
    if (args.front() == "help" || std::any_of(args.begin(), args.end(), is_help)) {
        fmt::print(out, "{}", usage());
        return 0;
    }
    const std::string& command = args.front();
    const std::string who =
        command == "train" || command == "eval" || command == "sample" ? "farm_lm " + command : std::string("farm_lm");
    try {
        return dispatch(args, out, err);
    } catch (const UsageError& e) {
        fmt::print(err, "{}: {} (farm_lm --help shows the usage)\n", who, e.what());
        return 2;
    } catch (const InputError& e) {
        fmt::print(err, "{}: {}\n", who, e.what());
        return 2;
    } catch (const std::exception& e) {
        fmt::print(err, "{}: error: {}\n", who, e.what());
        return 1;
    }
}

}  // namespace lessons::farm_lm
