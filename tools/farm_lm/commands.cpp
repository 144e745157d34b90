#include "tools/farm_lm/commands.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "lessons/common/book.h"
#include "lessons/common/cli.h"
#include "lessons/common/evaluation.h"
#include "lessons/common/report.h"
#include "lessons/common/training.h"
#include "nn/checkpoint.h"

namespace farm_lm {

// What the tool takes from the lessons' shared code (lessons/common/).
using lessons::add_threads, lessons::maybe_empty_text, lessons::output_file, lessons::positive_number,
    lessons::same_file, lessons::take_last_value, lessons::text_value, lessons::usage_error, lessons::UsageError,
    lessons::whole_number;  // cli.h
using lessons::AgreementResult, lessons::agreement_per_k, lessons::generate, lessons::generation_context,
    lessons::grammar_perplexity, lessons::kMaxSequence, lessons::perplexity, lessons::Sampling;  // evaluation.h
using lessons::count_of;                                                                         // report.h
using lessons::Diverged, lessons::EpochLog, lessons::LmTrainOptions, lessons::train_lm;          // training.h
using lessons::format_duration, lessons::group_thousands, lessons::Progress;                     // progress.h
using lessons::book::write_atomically;                                                           // book.h

namespace {

constexpr int64_t kAgreementPrefixes = 500;  // per k, docs/farm_language.md
constexpr int64_t kMaxCount = 1'000'000;     // upper bound of counting flags
constexpr int64_t kMaxSamples = 1'000;       // sample --count
// eval --data: a farm sentence is a few dozen words; a line that long is
// not one, and a file without a newline is not read whole into memory.
constexpr size_t kMaxLineBytes = 16 * 1024;
constexpr size_t kShownWordBytes = 40;  // of an unknown word in a message

// Something the user gave is wrong (a file, a word, a run that diverges):
// farm_lm prints the message on one line and exits with status 2. A
// mistake in the flags that only shows once they meet the model or the
// data (a config that does not validate, a warmup longer than the run) is
// a lessons::UsageError: its message also points to --help, like CLI11's.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// ---- the command line ------------------------------------------------------

// Every value the commands read; CLI11 fills it, each flag declared once in
// make_app() with its help and its check.
struct Flags {
    // train
    std::string model, pos, pairing, init, out;
    int64_t kv_heads = 0, window = -1;  // 0 and -1: the model's own
    int64_t epochs = LmTrainOptions{}.epochs, warmup = 0;
    double lr = LmTrainOptions{}.lr;
    bool cosine = false;
    // eval and sample
    std::string checkpoint, data, json;
    std::string prompt;
    bool greedy = false;
    double temperature = 1.0;
    int64_t max_tokens = 40, count = 1;
    // several commands
    uint64_t seed = 0, data_seed = 0;
    std::string language;  // empty: the lecture's (eval: the checkpoint's)
    double zipf = 0;       // > 0: the family's language of that exponent instead
    int64_t limit = 0;     // 0: every sentence
    int threads = 0;       // 0: the engine's default
};

// A name nn:: knows (positions, pairings): nn's own parser is the check.
template <class Parse>
CLI::Validator parsed_by(Parse parse) {
    return CLI::Validator(
        [parse](std::string& text) -> std::string {
            try {
                parse(text);
                return {};
            } catch (const std::invalid_argument& e) {
                return e.what();
            }
        },
        "");
}

CLI::Validator counting(int64_t min) { return CLI::Range(min, kMaxCount).description(""); }

std::unique_ptr<CLI::App> make_app(Flags& f) {
    auto app = std::make_unique<CLI::App>(
        "A playground for the farm-language models: GPT (lecture 2) and ModernLM (§7).", "farm_lm");
    take_last_value(*app);  // as in the lessons; the commands inherit it
    app->require_subcommand(1);
    app->set_help_flag("-h,--help", "show this help (every command's flags)");
    app->footer(
        "A flag given twice keeps its last value. An output is checked before the work\n"
        "starts: its folder must take a new file, an existing one must be a regular\n"
        "file (never a device or a FIFO), and eval never writes over its inputs.\n"
        "exit status: 0 done; 2 a bad flag, output, checkpoint, data file or word, or a\n"
        "training run that diverges (one line on stderr says which); 1 any other error.");
    const auto threads = [&](CLI::App* command) { add_threads(*command, f.threads); };
    const auto limit = [&](CLI::App* command) {
        command->add_option("--limit", f.limit, "use only N sentences of each set (training, test, each agreement k)")
            ->type_name("N")
            ->transform(whole_number())
            ->check(counting(1));
    };
    const auto data_seed = [&](CLI::App* command) {
        command->add_option("--data-seed", f.data_seed, "the corpora and the agreement sets (default 0)")
            ->type_name("S")
            ->transform(whole_number());
    };
    const auto language = [&](CLI::App* command, const char* default_text) {
        CLI::Option* named =
            command
                ->add_option("--language", f.language,
                             fmt::format("the farm language: lecture (calibrated to the lecture's perplexities) or "
                                         "uniform (every choice uniform) (default {})",
                                         default_text))
                ->type_name("L")
                ->check(CLI::IsMember({"lecture", "uniform"}));
        command
            ->add_option("--zipf", f.zipf,
                         "instead of --language: the language of the same family whose every choice follows "
                         "Zipf's law with exponent S, 0 < S <= 16 (docs/farm_language.md; the lecture's is one)")
            ->type_name("S")
            ->transform(positive_number(16))
            ->excludes(named);
    };
    const auto checkpoint = [&](CLI::App* command) {
        command->add_option("checkpoint", f.checkpoint, "a checkpoint written by farm_lm train or a lesson")
            ->type_name("CKPT")
            ->required()
            ->check(CLI::ExistingFile);
    };
    const int max_heads = static_cast<int>(std::max(nn::LMConfig::gpt().n_heads, nn::LMConfig::modern_lm().n_heads));

    CLI::App* train = app->add_subcommand("train", "train a model on the farm corpus, report it and save a checkpoint");
    train->footer("GPT is lecture 2's model: learned positions, 4 heads, no window.");
    train->add_option("--model", f.model, "gpt (111,360 parameters) or modern_lm (99,648)")
        ->type_name("M")
        ->required()
        ->check(CLI::IsMember({"gpt", "modern_lm"}));
    train->add_option("--kv-heads", f.kv_heads, "KV heads: 4 = MHA, 2 = GQA (modern_lm's default), 1 = MQA (§5)")
        ->type_name("N")
        ->transform(whole_number())
        ->check(CLI::Range(1, max_heads));
    train->add_option("--pos", f.pos, "rope (modern_lm's default), learned, sinusoidal or none (§4, §7.3)")
        ->type_name("P")
        ->check(parsed_by(nn::pos_encoding_from_string));
    train->add_option("--pairing", f.pairing, "RoPE pairing: half (default, Llama) or interleaved (RoFormer)")
        ->type_name("P")
        ->check(parsed_by(nn::rope_pairing_from_string));
    train->add_option("--window", f.window, "sliding window of W visible tokens; 0 = full attention (§6)")
        ->type_name("W")
        ->transform(whole_number())
        ->check(counting(0));
    train
        ->add_option("--init", f.init,
                     "the weights' initialisation: pytorch (default, PyTorch's layer defaults) or gpt2 "
                     "(GPT-2's N(0, 0.02) for every weight matrix and embedding, biases 0)")
        ->type_name("I")
        ->check(parsed_by(nn::init_from_string));
    train->add_option("--epochs", f.epochs, "passes over the 20,000 training sentences (default 5)")
        ->type_name("N")
        ->transform(whole_number())
        ->check(counting(1));
    train->add_option("--lr", f.lr, "AdamW learning rate (default 0.001), constant unless --cosine")
        ->type_name("X")
        ->transform(positive_number(HUGE_VAL));
    CLI::Option* cosine =
        train->add_flag("--cosine", f.cosine, "linear warmup, then a cosine decay to lr/10 at the last step");
    train->add_option("--warmup", f.warmup, "warmup steps for --cosine (default 0)")
        ->type_name("N")
        ->transform(whole_number())
        ->check(counting(0))
        ->needs(cosine);
    train->add_option("--seed", f.seed, "initialisation and batch order (default 0)")
        ->type_name("S")
        ->transform(whole_number());
    data_seed(train);
    language(train, "lecture");
    train->add_option("--out", f.out, "the checkpoint to write (safetensors, with the config)")
        ->type_name("FILE")
        ->required()
        ->check(text_value())
        ->check(output_file());
    limit(train);
    threads(train);

    CLI::App* eval = app->add_subcommand("eval", "test perplexity and agreement per k of a checkpoint");
    checkpoint(eval);
    eval->add_option("--data", f.data,
                     fmt::format("perplexity of FILE's sentences instead of the test set's (one per line of at "
                                 "most {} KiB, words separated by spaces, <s> and </s> added where missing, blank "
                                 "lines skipped)",
                                 kMaxLineBytes / 1024))
        ->type_name("FILE")
        ->check(CLI::ExistingFile);
    eval->add_option("--json", f.json, "also write the results to FILE as JSON (not the checkpoint or --data)")
        ->type_name("FILE")
        ->check(text_value())
        ->check(output_file());
    data_seed(eval);
    language(eval, "the one farm_lm train recorded in the checkpoint, else lecture");
    limit(eval);
    threads(eval);

    CLI::App* sample = app->add_subcommand("sample", "continue a prompt with a checkpoint's model (KV cache)");
    checkpoint(sample);
    sample
        ->add_option("--prompt", f.prompt,
                     "the start of a sentence, e.g. \"the dogs near the cat\" (default: nothing, a whole sentence "
                     "is generated)")
        ->type_name("TEXT")
        ->check(maybe_empty_text());
    CLI::Option* greedy = sample->add_flag("--greedy", f.greedy, "take the most likely token at each step");
    sample->add_option("--temperature", f.temperature, "sample from softmax(logits / T) (default 1)")
        ->type_name("T")
        ->transform(positive_number(HUGE_VAL))
        ->excludes(greedy);
    sample->add_option("--seed", f.seed, "the sampling seed (default 0)")->type_name("S")->transform(whole_number());
    sample
        ->add_option("--max-tokens", f.max_tokens,
                     fmt::format("new tokens at most, 1 … {} (default 40); a sentence stops at </s>, or once the "
                                 "model has read its context (max_len tokens with learned positions, {} otherwise)",
                                 kMaxSequence, kMaxSequence))
        ->type_name("N")
        ->transform(whole_number())
        ->check(CLI::Range(int64_t{1}, kMaxSequence).description(""));
    sample->add_option("--count", f.count, fmt::format("how many continuations, 1 … {} (default 1)", kMaxSamples))
        ->type_name("N")
        ->transform(whole_number())
        ->check(CLI::Range(int64_t{1}, kMaxSamples).description(""));
    threads(sample);

    app->add_subcommand("help", "show this help (also --help)")->allow_extras();
    return app;
}

// ---- data -----------------------------------------------------------------

// What a model is measured on (see commands.h for the seeds).
struct EvalSets {
    std::vector<farm::Sentence> sentences;                // perplexity
    std::string sentences_from;                           // "the test set (data seed 0)" or a file
    std::vector<std::vector<farm::Sentence>> agreement;   // [k - 1], k = 1..6
    farm::Language language = farm::Language::lecture();  // what the sets were drawn from
};

std::vector<farm::Sentence> first(std::vector<farm::Sentence> sentences, int64_t limit) {
    if (limit > 0 && static_cast<int64_t>(sentences.size()) > limit) sentences.resize(static_cast<size_t>(limit));
    return sentences;
}

std::vector<std::vector<farm::Sentence>> agreement_sets(uint64_t data_seed, const farm::Language& language,
                                                        int64_t limit) {
    return farm::make_agreement_sets(data_seed + 1, language,
                                     limit > 0 ? std::min(limit, kAgreementPrefixes) : kAgreementPrefixes);
}

// --zipf, --language, else `otherwise` (eval: the checkpoint's).
farm::Language language_of(const Flags& f, const farm::Language& otherwise) {
    if (f.zipf > 0) return farm::Language::with_exponent(f.zipf);
    return f.language.empty() ? otherwise : farm::Language::named(f.language);
}

// Whitespace-separated words to ids; an unknown word is the user's mistake,
// reported with where it was found ("x.txt line 3", "the prompt"), escaped
// (a data file may hold any bytes: "\xff\x01ab", never raw binary on the
// terminal) and cut to its first kShownWordBytes.
std::vector<int64_t> words_to_ids(const std::string& text, const std::string& where) {
    std::vector<int64_t> ids;
    std::istringstream words(text);
    for (std::string word; words >> word;) {
        try {
            ids.push_back(farm::encode(word).at(0));
        } catch (const std::invalid_argument&) {
            const std::string shown =
                word.size() > kShownWordBytes
                    ? fmt::format("{:?}... ({} bytes)", word.substr(0, kShownWordBytes), word.size())
                    : fmt::format("{:?}", word);
            throw InputError(fmt::format("{}: unknown word {} (not in the farm language's 68 tokens)", where, shown));
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

// One line of `file` into `line` (without its '\n'); false at the end of
// the file. A line longer than kMaxLineBytes is refused as soon as that
// many bytes are read (std::getline would read it whole first).
bool read_line(std::istream& file, std::string& line, const std::string& where) {
    line.clear();
    int c = file.get();
    if (c == std::char_traits<char>::eof()) return false;
    for (; c != std::char_traits<char>::eof() && c != '\n'; c = file.get()) {
        if (line.size() == kMaxLineBytes)
            throw InputError(
                fmt::format("{}: longer than {} KiB (a sentence is a few dozen words)", where, kMaxLineBytes / 1024));
        line += static_cast<char>(c);
    }
    return true;
}

// --data FILE: one sentence per line, <s> and </s> added where missing.
std::vector<farm::Sentence> read_sentences(const std::string& path, const nn::LMConfig& cfg) {
    std::ifstream file(path);
    if (!file) throw InputError(fmt::format("cannot read the data file '{}'", path));
    std::vector<farm::Sentence> sentences;
    std::string line;
    for (int64_t line_number = 1;; ++line_number) {
        const std::string where = fmt::format("{} line {}", path, line_number);
        if (!read_line(file, line, where)) break;
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
    return fmt::format("{}, {} parameters: {}", nn::to_string(c.model),
                       group_thousands(static_cast<double>(parameters)), nn::describe(c));
}

struct Loaded {
    nn::LMConfig cfg;
    std::unique_ptr<nn::LanguageModel> model;
    farm::Language language = farm::Language::lecture();  // trained on (metadata; lesson caches: the lecture's)
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
    if (const auto language = ckpt.metadata.find("language"); language != ckpt.metadata.end()) {
        try {
            loaded.language = farm::Language::named(language->second);
        } catch (const std::invalid_argument& e) {
            throw InputError(fmt::format("'{}': {}", path, e.what()));
        }
    }
    loaded.model = std::make_unique<nn::LanguageModel>(loaded.cfg, 0);
    try {
        nn::load_into(*loaded.model, ckpt);
    } catch (const std::exception& e) {
        throw InputError(fmt::format("'{}': {}", path, e.what()));
    }
    // Finite weights can still overflow on the way (1e308 in a norm's gain):
    // one short sentence through the model, so that no measure or sample
    // is computed from NaN.
    ag::NoGradGuard no_grad;
    const std::vector<int64_t> probe = farm::encode("<s> the farmer sees the cow </s>");
    const std::vector<double> logits = loaded.model
                                           ->forward(ag::Tensor::from({1, static_cast<int64_t>(probe.size())},
                                                                      std::vector<double>(probe.begin(), probe.end())))
                                           .to_vector();
    if (!std::all_of(logits.begin(), logits.end(), [](double z) { return std::isfinite(z); }))
        throw InputError(fmt::format(
            "'{}': its weights are finite but the model's outputs are not (a weight so large that the forward "
            "pass overflows); the checkpoint is unusable",
            path));
    return loaded;
}

// ---- measuring --------------------------------------------------------------

struct Measures {
    double perplexity = 0;
    double floor = 0;    // the language's own perplexity on the test set (0 for --data)
    int64_t tokens = 0;  // predicted tokens the perplexity averages over
    std::vector<AgreementResult> agreement;
};

Measures measure(const nn::LanguageModel& model, const EvalSets& sets, bool test_set) {
    Measures m;
    m.perplexity = perplexity(model, sets.sentences);
    if (test_set) m.floor = grammar_perplexity(sets.sentences, sets.language);
    for (const farm::Sentence& s : sets.sentences) m.tokens += static_cast<int64_t>(s.ids.size()) - 1;
    m.agreement = agreement_per_k(model, sets.agreement);
    return m;
}

void print_measures(std::FILE* out, const EvalSets& sets, const Measures& m) {
    fmt::print(out, "perplexity on {}: {:.4f} ({} sentences, {} predicted tokens)\n", sets.sentences_from, m.perplexity,
               sets.sentences.size(), m.tokens);
    if (m.floor > 0)
        fmt::print(out, "the {} language's own perplexity on them, the floor no model goes below: {:.4f}\n",
                   sets.language.name(), m.floor);
    fmt::print(out,
               "agreement at the verb ({} prefixes per k, every attractor of the other number; "
               "k = 4-6 are longer than any training sentence):\n",
               sets.agreement.front().size());
    fmt::print(out, "  {:>2}  {:>8}  {:>8}  {:>10}\n", "k", "distance", "accuracy", "p(correct)");
    for (size_t k = 1; k <= m.agreement.size(); ++k)
        fmt::print(out, "  {:>2}  {:>8}  {:>8.3f}  {:>10.3f}\n", k, 3 * k, m.agreement[k - 1].accuracy,
                   m.agreement[k - 1].p_correct);
}

void set_threads(const Flags& f) {
    if (f.threads > 0) ag::set_num_threads(f.threads);
}

// ---- train --------------------------------------------------------------------

nn::LMConfig config_from(const Flags& f) {
    nn::LMConfig cfg =
        nn::model_kind_from_string(f.model) == nn::ModelKind::Gpt ? nn::LMConfig::gpt() : nn::LMConfig::modern_lm();
    try {
        if (f.kv_heads > 0) cfg.n_kv_heads = f.kv_heads;
        if (!f.pos.empty()) cfg.pos = nn::pos_encoding_from_string(f.pos);
        if (!f.pairing.empty()) cfg.rope_pairing = nn::rope_pairing_from_string(f.pairing);
        if (f.window >= 0) cfg.window = f.window;
        if (!f.init.empty()) cfg.init = nn::init_from_string(f.init);
        cfg.validate();
    } catch (const std::invalid_argument& e) {  // the config's own checks
        throw UsageError(e.what());
    }
    return cfg;
}

int train(const Flags& f, std::FILE* out, std::FILE* err) {
    const nn::LMConfig cfg = config_from(f);
    const std::string& path = f.out;

    LmTrainOptions options;
    options.epochs = f.epochs;
    options.lr = f.lr;
    options.cosine = f.cosine;
    options.lr_min = options.lr / 10;
    options.warmup_steps = f.warmup;
    const uint64_t seed = f.seed;
    options.shuffle_seed = seed;
    const uint64_t data_seed = f.data_seed;
    const int64_t limit = f.limit;
    set_threads(f);

    const farm::Language language = language_of(f, farm::Language::lecture());
    const farm::Corpora corpora = farm::make_corpora(data_seed, language);
    const std::vector<farm::Sentence> training = first(corpora.train, limit);
    const int64_t steps =
        options.epochs * ((static_cast<int64_t>(training.size()) + options.batch_size - 1) / options.batch_size);
    if (options.warmup_steps > steps)
        throw UsageError(fmt::format("--warmup {} is longer than the run ({} steps)", options.warmup_steps, steps));
    const EvalSets sets{first(corpora.test, limit), fmt::format("the test set (data seed {})", data_seed),
                        agreement_sets(data_seed, language, limit), language};

    nn::LanguageModel model(cfg, seed);
    fmt::print(out, "farm_lm train: {}\n", describe(cfg, model.num_parameters()));
    fmt::print(out,
               "{} of {} sentences of the {} language in batches of {}, AdamW lr {:g} ({}), seed {}, data seed {}\n",
               count_of(options.epochs, "epoch"), group_thousands(static_cast<double>(training.size())),
               language.name(), options.batch_size, options.lr,
               options.cosine ? fmt::format("warmup {} steps, cosine to {:g}", options.warmup_steps, options.lr_min)
                              : std::string("constant"),
               seed, data_seed);
    std::fflush(out);

    // A run that diverges is refused, not saved: the same flags diverge
    // again (the run is deterministic), so it is the user's input to change
    // (exit 2), like any other flag that cannot work.
    Progress progress(err, ::isatty(::fileno(err)) == 1);
    std::vector<EpochLog> logs;
    Measures m;
    try {
        logs = train_lm(model, training, options, &progress);
        m = measure(model, sets, true);
        // The last step can diverge unseen: its loss was taken before its update.
        if (!std::isfinite(m.perplexity))
            throw Diverged(fmt::format("training diverged: the test perplexity is {}", m.perplexity));
    } catch (const Diverged& e) {
        throw InputError(fmt::format("{}; nothing saved: try a smaller --lr than {:g}", e.what(), options.lr));
    }
    fmt::print(out, "  {:>5}  {:>10}  {:>9}  {:>8}\n", "epoch", "train loss", "tokens/s", "seconds");
    double seconds = 0;
    for (const EpochLog& log : logs) {
        fmt::print(out, "  {:>5}  {:>10.4f}  {:>9.0f}  {:>8.1f}\n", log.epoch, log.train_loss, log.tokens_per_second,
                   log.seconds);
        seconds += log.seconds;
    }
    fmt::print(out, "training took {}\n", format_duration(seconds));
    print_measures(out, sets, m);

    // The config rebuilds the model (docs/models.md); the rest says how it was made.
    nn::save(model, path,
             {{"model", nn::to_string(cfg.model)},
              {"config", cfg.to_json()},
              {"epochs", std::to_string(options.epochs)},
              {"lr", fmt::format("{:g}", options.lr)},
              {"schedule", options.cosine ? fmt::format("cosine, warmup {}", options.warmup_steps) : "constant"},
              {"seed", std::to_string(seed)},
              {"data_seed", std::to_string(data_seed)},
              {"language", language.name()},
              {"train_sentences", std::to_string(training.size())},
              {"test_perplexity", fmt::format("{:.6f}", m.perplexity)}});
    fmt::print(out, "saved {}\n", path);
    return 0;
}

// ---- eval -----------------------------------------------------------------------

nlohmann::ordered_json measures_json(const std::string& path, const Loaded& loaded, const EvalSets& sets,
                                     const Measures& m, uint64_t data_seed) {
    nlohmann::ordered_json agreement = nlohmann::ordered_json::array();
    for (size_t k = 1; k <= m.agreement.size(); ++k)
        agreement.push_back({{"k", k},
                             {"prefixes", sets.agreement[k - 1].size()},
                             {"accuracy", m.agreement[k - 1].accuracy},
                             {"p_correct", m.agreement[k - 1].p_correct}});
    return {{"checkpoint", path},
            {"model", nn::to_string(loaded.cfg.model)},
            {"config", loaded.cfg},
            {"parameters", loaded.model->num_parameters()},
            {"data_seed", data_seed},
            {"language", sets.language.name()},
            {"perplexity",
             {{"on", sets.sentences_from},
              {"sentences", sets.sentences.size()},
              {"tokens", m.tokens},
              {"value", m.perplexity},
              {"floor", m.floor > 0 ? nlohmann::ordered_json(m.floor) : nlohmann::ordered_json()}}},
            {"agreement", std::move(agreement)}};
}

int eval(const Flags& f, std::FILE* out) {
    const std::string& path = f.checkpoint;
    const uint64_t data_seed = f.data_seed;
    const int64_t limit = f.limit;
    const std::string& json_path = f.json;
    set_threads(f);
    // Checked before anything is read: writing the results over the
    // checkpoint (or the data) would destroy what they were measured on.
    if (!json_path.empty())
        for (const auto& [flag, input] : {std::pair{"the checkpoint", path}, std::pair{"the --data file", f.data}})
            if (!input.empty() && same_file(json_path, input))
                throw UsageError(
                    fmt::format("--json '{}' is {} it reads; writing it would destroy it", json_path, flag));

    const Loaded loaded = load_model(path);
    EvalSets sets;
    sets.language = language_of(f, loaded.language);
    if (!f.data.empty()) {
        sets.sentences_from = f.data;
        sets.sentences = read_sentences(sets.sentences_from, loaded.cfg);
    } else {
        sets.sentences = first(farm::make_corpora(data_seed, sets.language).test, limit);
        sets.sentences_from = fmt::format("the test set (data seed {})", data_seed);
    }
    sets.agreement = agreement_sets(data_seed, sets.language, limit);

    fmt::print(out, "farm_lm eval {}: {}\n", path, describe(loaded.cfg, loaded.model->num_parameters()));
    const Measures m = measure(*loaded.model, sets, f.data.empty());
    print_measures(out, sets, m);
    if (!json_path.empty()) {
        // A reader (or a run killed half-way) sees the old file or the new one.
        write_atomically(json_path, measures_json(path, loaded, sets, m, data_seed)
                                            .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                                        "\n");
        fmt::print(out, "wrote {}\n", json_path);
    }
    return 0;
}

// ---- sample -----------------------------------------------------------------------

int sample(const Flags& f, std::FILE* out) {
    const std::string& path = f.checkpoint;
    const Sampling sampling = f.greedy ? Sampling::greedy() : Sampling::with_temperature(f.temperature);
    ag::Generator gen(f.seed);
    const int64_t max_tokens = f.max_tokens;
    const int64_t count = f.count;
    set_threads(f);

    // The prompt: words of the farm language, <s> added in front.
    std::vector<int64_t> prompt = words_to_ids(f.prompt, "the prompt");
    check_markers(prompt, false, "the prompt");  // no </s>: there would be nothing left to continue
    if (prompt.empty() || prompt.front() != farm::BOS) prompt.insert(prompt.begin(), farm::BOS);

    const Loaded loaded = load_model(path);
    if (static_cast<int64_t>(prompt.size()) > generation_context(loaded.cfg))
        throw InputError(fmt::format("the prompt has {} tokens; the model reads at most {}", prompt.size(),
                                     generation_context(loaded.cfg)));
    for (int64_t i = 0; i < count; ++i)
        fmt::print(out, "{}\n", farm::decode(generate(*loaded.model, prompt, max_tokens, sampling, gen)));
    return 0;
}

}  // namespace

std::string usage() {
    Flags unused;
    return make_app(unused)->help("", CLI::AppFormatMode::All);
}

int run(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
    Flags flags;
    const std::unique_ptr<CLI::App> app = make_app(flags);
    // Errors name the command they are about: "farm_lm train: ...".
    std::string who = "farm_lm";
    for (const CLI::App* command : app->get_subcommands([](const CLI::App*) { return true; }))
        if (!args.empty() && args.front() == command->get_name() && args.front() != "help") who += " " + args.front();
    try {
        // Before a command CLI11 only says that one is required: name what
        // was given instead.
        const bool is_help =
            !args.empty() && (args.front() == "help" || args.front() == "-h" || args.front() == "--help");
        if (!args.empty() && who == "farm_lm" && !is_help)
            throw UsageError(args.front().rfind("-", 0) == 0
                                 ? fmt::format("unknown flag '{}' (a command comes first: train, eval, sample or help)",
                                               args.front())
                                 : fmt::format("unknown command '{}' (train, eval, sample or help)", args.front()));
        std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
        app->parse(reversed);
        if (app->got_subcommand("help")) {
            fmt::print(out, "{}", usage());
            return 0;
        }
        if (app->got_subcommand("train")) return train(flags, out, err);
        if (app->got_subcommand("eval")) return eval(flags, out);
        return sample(flags, out);
    } catch (const CLI::CallForHelp&) {
        // The whole manual for farm_lm --help, one command's for farm_lm train --help.
        fmt::print(out, "{}", who == "farm_lm" ? usage() : app->help());
        return 0;
    } catch (const CLI::ParseError& e) {
        fmt::print(err, "{}\n", usage_error(who, e.what()));
        return 2;
    } catch (const UsageError& e) {
        fmt::print(err, "{}\n", usage_error(who, e.what()));
        return 2;
    } catch (const InputError& e) {
        fmt::print(err, "{}: {}\n", who, e.what());
        return 2;
    } catch (const std::exception& e) {
        fmt::print(err, "{}: error: {}\n", who, e.what());
        return 1;
    }
}

}  // namespace farm_lm
