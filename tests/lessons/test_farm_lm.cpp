// farm_lm end to end, in process: train a full-size model on a few
// sentences (--limit keeps it fast), evaluate it (text and JSON), sample
// from it; and every kind of bad input ends with one clear line on stderr
// and exit status 2.
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include "catch.h"

#include "lesson_helpers.h"
#include "lessons/common/evaluation.h"
#include "nn/checkpoint.h"
#include "tools/farm_lm/commands.h"

using Catch::Contains;
using Catch::EndsWith;
using Catch::StartsWith;

namespace {

struct Result {
    int status = 0;
    std::string out, err;
};

// farm_lm as main() runs it, with stdout and stderr captured.
Result run_farm_lm(const std::vector<std::string>& args) {
    std::FILE* out = std::tmpfile();
    std::FILE* err = std::tmpfile();
    Result r;
    r.status = farm_lm::run(args, out, err);
    r.out = test::read_stream(out);
    r.err = test::read_stream(err);
    std::fclose(out);
    std::fclose(err);
    return r;
}

size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

// farm_lm given bad input: exit status 2 and one line on stderr that
// starts with "farm_lm" and says `says`. Returns the run for more checks.
Result check_refused(const std::vector<std::string>& args, const std::string& says) {
    const Result r = run_farm_lm(args);
    INFO(fmt::format("farm_lm {}\nstdout: {}\nstderr: {}", fmt::join(args, " "), r.out, r.err));
    CHECK(r.status == 2);
    CHECK(lines(r.err) == 1);
    CHECK_THAT(r.err, StartsWith("farm_lm") && Contains(says));
    return r;
}

// One small checkpoint per test process (ctest runs each test case in its
// own; a plain run of lesson_tests shares it): a full-size ModernLM trained on
// 32 sentences (one step), measured on 32 test sentences and 32
// prefixes per k.
struct Trained {
    std::filesystem::path dir = test::scratch_path("farm_lm");
    std::string checkpoint = (dir / "modern.safetensors").string();
    Result train;
    Trained() {
        std::filesystem::create_directories(dir);
        train = run_farm_lm({"train", "--model", "modern_lm", "--epochs", "1", "--limit", "32", "--out", checkpoint});
    }
    ~Trained() { std::filesystem::remove_all(dir); }
};

const Trained& trained() {
    static const Trained t;
    return t;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> result;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) result.push_back(line);
    return result;
}

// A FIFO at `path`: what --out and --json must never replace (nor, as
// root, a device such as /dev/null; the tests leave those alone).
void make_fifo(const std::filesystem::path& path) { REQUIRE(::mkfifo(path.c_str(), 0600) == 0); }

}  // namespace

TEST_CASE("farm_lm train: epochs, test perplexity, agreement, a checkpoint with its config", "[lessons][farm_lm]") {
    const Trained& t = trained();
    INFO(t.train.out << t.train.err);
    REQUIRE(t.train.status == 0);
    CHECK_THAT(t.train.out, StartsWith("farm_lm train: modern_lm, 99,648 parameters"));
    CHECK_THAT(t.train.out, Contains("perplexity on the test set (data seed 0)"));
    CHECK_THAT(t.train.out, Contains("saved " + t.checkpoint));
    CHECK(lines(t.train.err) == 1);  // stderr is not a terminal: one line per epoch
    CHECK_THAT(t.train.err, StartsWith("epoch 1/1  loss "));

    const nn::Checkpoint ckpt = nn::load_safetensors(t.checkpoint);
    CHECK(ckpt.metadata.at("model") == "modern_lm");
    CHECK(nn::LMConfig::from_json(ckpt.metadata.at("config")).to_json() == nn::LMConfig::modern_lm().to_json());
    CHECK(ckpt.metadata.at("epochs") == "1");
    CHECK(ckpt.metadata.at("train_sentences") == "32");
}

TEST_CASE("farm_lm train --init gpt2: GPT-2's initialisation, recorded in the checkpoint's config",
          "[lessons][farm_lm]") {
    const auto dir = test::scratch_path("farm_lm_init");
    std::filesystem::create_directories(dir);
    const std::string checkpoint = (dir / "gpt2.safetensors").string();
    const Result r = run_farm_lm(
        {"train", "--model", "gpt", "--init", "gpt2", "--epochs", "1", "--limit", "32", "--out", checkpoint});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, StartsWith("farm_lm train: gpt, 111,360 parameters") && Contains("full attention, gpt2 init"));
    const nn::LMConfig cfg = nn::LMConfig::from_json(nn::load_safetensors(checkpoint).metadata.at("config"));
    CHECK(cfg.init == nn::Init::Gpt2);
    std::filesystem::remove_all(dir);
}

TEST_CASE("farm_lm eval: the same numbers as train, and JSON that reads back", "[lessons][farm_lm]") {
    const Trained& t = trained();
    REQUIRE(t.train.status == 0);
    const std::string json_path = (t.dir / "eval.json").string();
    const Result r = run_farm_lm({"eval", t.checkpoint, "--limit", "32", "--json", json_path});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());

    const auto v = nlohmann::ordered_json::parse(test::read_text(json_path));
    CHECK(v.at("model") == "modern_lm");
    CHECK(v.at("parameters") == 99648);
    CHECK(v.at("config").get<nn::LMConfig>().to_json() == nn::LMConfig::modern_lm().to_json());
    CHECK(v.at("perplexity").at("sentences") == 32);
    const double ppl = v.at("perplexity").at("value").get<double>();
    const double at_training = std::stod(nn::load_safetensors(t.checkpoint).metadata.at("test_perplexity"));
    CHECK(ppl == Approx(at_training).margin(1e-6));
    CHECK(std::isfinite(ppl));
    CHECK(ppl > 1.0);
    const auto& agreement = v.at("agreement");
    REQUIRE(agreement.size() == 6);
    for (size_t k = 1; k <= 6; ++k) {
        CHECK(agreement[k - 1].at("k") == k);
        CHECK(agreement[k - 1].at("prefixes") == 32);
        const double p = agreement[k - 1].at("p_correct").get<double>();
        CHECK((p > 0.0 && p < 1.0));
    }
    CHECK_THAT(r.out, Contains(fmt::format("{:.4f}", ppl)));
}

TEST_CASE("farm_lm eval --data: one sentence per line, with or without <s> and </s>", "[lessons][farm_lm]") {
    const Trained& t = trained();
    REQUIRE(t.train.status == 0);
    const auto bare = t.dir / "bare.txt", marked = t.dir / "marked.txt";
    test::write_text(bare, "the dog runs\n\n  the cats near the hen eat the corn quickly  \nthe pig sleeps today\n");
    test::write_text(
        marked, "<s> the dog runs </s>\n<s> the cats near the hen eat the corn quickly\nthe pig sleeps today </s>\n");

    std::vector<farm::Sentence> three(3);
    three[0].ids = farm::encode("<s> the dog runs </s>");
    three[1].ids = farm::encode("<s> the cats near the hen eat the corn quickly </s>");
    three[2].ids = farm::encode("<s> the pig sleeps today </s>");
    nn::LanguageModel model(nn::LMConfig::modern_lm(), 0);
    nn::load_into(model, nn::load_safetensors(t.checkpoint));
    const double expected = lessons::perplexity(model, three);

    for (const auto& file : {bare, marked}) {
        const std::string json_path = (t.dir / "data.json").string();
        const Result r =
            run_farm_lm({"eval", t.checkpoint, "--data", file.string(), "--limit", "8", "--json", json_path});
        INFO(file << "\n" << r.out << r.err);
        REQUIRE(r.status == 0);
        const auto v = nlohmann::ordered_json::parse(test::read_text(json_path));
        CHECK(v.at("perplexity").at("on") == file.string());
        CHECK(v.at("perplexity").at("sentences") == 3);
        CHECK(v.at("perplexity").at("tokens") == 4 + 10 + 5);
        CHECK(v.at("perplexity").at("value").get<double>() == Approx(expected).epsilon(1e-12));
    }
}

TEST_CASE("farm_lm sample: continues the prompt, greedy or sampled", "[lessons][farm_lm]") {
    const Trained& t = trained();
    REQUIRE(t.train.status == 0);
    const Result greedy = run_farm_lm({"sample", t.checkpoint, "--prompt", "the dogs near the cat", "--greedy"});
    INFO(greedy.out << greedy.err);
    REQUIRE(greedy.status == 0);
    CHECK(lines(greedy.out) == 1);
    CHECK_THAT(greedy.out, StartsWith("<s> the dogs near the cat "));
    CHECK(run_farm_lm({"sample", t.checkpoint, "--prompt", "<s> the dogs near the cat", "--greedy"}).out == greedy.out);

    const Result sampled = run_farm_lm({"sample", t.checkpoint, "--prompt", "the dogs", "--temperature", "0.8",
                                        "--seed", "3", "--count", "3", "--max-tokens", "5"});
    INFO(sampled.out << sampled.err);
    REQUIRE(sampled.status == 0);
    CHECK(lines(sampled.out) == 3);
    CHECK(run_farm_lm({"sample", t.checkpoint, "--prompt", "the dogs", "--temperature", "0.8", "--seed", "3", "--count",
                       "3", "--max-tokens", "5"})
              .out == sampled.out);
}

TEST_CASE("farm_lm: CLI11's help on stdout with status 0", "[lessons][farm_lm]") {
    // farm_lm --help and farm_lm help: every command with its flags.
    for (const auto& args : std::vector<std::vector<std::string>>{{"--help"}, {"help"}, {"-h"}}) {
        const Result r = run_farm_lm(args);
        INFO(fmt::format("farm_lm {}\n{}", fmt::join(args, " "), r.out));
        CHECK(r.status == 0);
        CHECK_THAT(r.out, StartsWith("A playground for the farm-language models"));
        for (const char* word : {"Usage: farm_lm [OPTIONS] SUBCOMMAND", "train", "eval", "sample", "--kv-heads",
                                 "--warmup N Needs: --cosine", "--data FILE", "--greedy Excludes: --temperature",
                                 "--max-tokens", "exit status: 0 done"})
            CHECK_THAT(r.out, Contains(word));
        CHECK(r.err.empty());
    }
    // One command's help, even after other flags.
    const Result train = run_farm_lm({"train", "--model", "gpt", "--help"});
    CHECK(train.status == 0);
    CHECK_THAT(train.out, Contains("Usage: farm_lm train [OPTIONS]") && Contains("--kv-heads"));
    CHECK_THAT(train.out, !Contains("--temperature"));
    CHECK(train.err.empty());

    const Result nothing = run_farm_lm({});
    CHECK(nothing.status == 2);
    CHECK(lines(nothing.err) == 1);
    CHECK_THAT(nothing.err, StartsWith("farm_lm: A subcommand is required"));
}

TEST_CASE("farm_lm: the language a model is trained on is recorded, and eval measures on it", "[lessons][farm_lm]") {
    const Trained& t = trained();
    REQUIRE(t.train.status == 0);
    CHECK_THAT(t.train.out, Contains("sentences of the lecture language"));
    CHECK(nn::load_safetensors(t.checkpoint).metadata.at("language") == "lecture");
    const std::string uniform = (t.dir / "uniform.safetensors").string();
    const Result trained_uniform = run_farm_lm(
        {"train", "--model", "gpt", "--epochs", "1", "--limit", "32", "--language", "uniform", "--out", uniform});
    INFO(trained_uniform.out << trained_uniform.err);
    REQUIRE(trained_uniform.status == 0);
    CHECK(nn::load_safetensors(uniform).metadata.at("language") == "uniform");
    // The floor printed is the language's own on the 32 test sentences.
    farm::Corpora corpora = farm::make_corpora(0, farm::Language::uniform());
    corpora.test.resize(32);
    const double floor = lessons::grammar_perplexity(corpora.test, farm::Language::uniform());
    CHECK_THAT(trained_uniform.out, Contains(fmt::format("the uniform language's own perplexity on them, the floor "
                                                         "no model goes below: {:.4f}",
                                                         floor)));
    // eval: the checkpoint's language unless told otherwise; the test sets differ.
    const Result same = run_farm_lm({"eval", uniform, "--limit", "32"});
    const Result other = run_farm_lm({"eval", uniform, "--limit", "32", "--language", "lecture"});
    const Result zipf = run_farm_lm({"eval", uniform, "--limit", "32", "--zipf", "2"});
    REQUIRE(same.status == 0);
    REQUIRE(other.status == 0);
    REQUIRE(zipf.status == 0);
    CHECK_THAT(same.out, Contains(fmt::format("{:.4f}", floor)));
    const double at_training = std::stod(nn::load_safetensors(uniform).metadata.at("test_perplexity"));
    CHECK_THAT(same.out, Contains(fmt::format("{:.4f} (32 sentences", at_training)));
    CHECK_THAT(other.out, Contains("the lecture language's own perplexity"));
    CHECK_THAT(zipf.out, Contains("the zipf 2 language's own perplexity"));
    CHECK_THAT(other.out, !Contains(fmt::format("{:.4f} (32 sentences", at_training)));
    // A checkpoint whose recorded language is none of the family's is refused.
    const std::string unknown = (t.dir / "unknown_language.safetensors").string();
    nn::LanguageModel model(nn::LMConfig::modern_lm(), 0);
    nn::save(model, unknown,
             {{"model", "modern_lm"}, {"config", nn::LMConfig::modern_lm().to_json()}, {"language", "zipf 99"}});
    check_refused({"eval", unknown}, "unknown farm language \"zipf 99\"");
    check_refused({"train", "--model", "gpt", "--language", "english", "--out", "x"},
                  "--language: english not in {lecture,uniform}");
    check_refused({"train", "--model", "gpt", "--zipf", "0", "--out", "x"}, "--zipf: wants a number > 0");
    check_refused({"train", "--model", "gpt", "--zipf", "17", "--out", "x"}, "--zipf");
    check_refused({"eval", uniform, "--zipf", "2", "--language", "lecture"}, "--language excludes --zipf");
}

TEST_CASE("farm_lm: bad input is one line on stderr and exit status 2", "[lessons][farm_lm]") {
    const Trained& t = trained();
    REQUIRE(t.train.status == 0);
    const std::string missing = (t.dir / "missing.safetensors").string();
    const std::string truncated = (t.dir / "truncated.safetensors").string();
    const std::string no_config = (t.dir / "no_config.safetensors").string();
    const std::string bad_config = (t.dir / "bad_config.safetensors").string();
    const std::string config_twice = (t.dir / "config_twice.safetensors").string();
    const std::string vocab_twice = (t.dir / "vocab_twice.safetensors").string();
    {
        const std::string bytes = test::read_text(t.checkpoint);
        std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
        nn::LanguageModel model(nn::LMConfig::modern_lm(), 0);
        nn::save(model, no_config, {{"model", "modern_lm"}});
        nn::save(model, bad_config, {{"model", "modern_lm"}, {"config", "{\"model\": \"modern_lm\""}});
        // A key twice: two configs in the header; two vocabularies in the config.
        const std::string config = nn::LMConfig::modern_lm().to_json();
        const std::string header =
            fmt::format(R"({{"__metadata__":{{"config":{0},"config":{0}}}}})", nlohmann::json(config).dump());
        std::string length(8, '\0');
        for (size_t i = 0; i < 8; ++i) length[i] = static_cast<char>(header.size() >> (8 * i));
        std::ofstream(config_twice, std::ios::binary) << length << header;
        nn::save(model, vocab_twice, {{"config", "{\"vocab\":68," + config.substr(1)}});
    }
    const auto bad_data = t.dir / "bad.txt";
    test::write_text(bad_data, "the dog runs\nthe cow moos loudly\n");

    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Case> cases = {
        {{"frobnicate"}, "unknown command 'frobnicate'"},
        {{"train", "--model", "modern_lm", "--out", "x.safetensors", "--bogus"}, "not expected: --bogus"},
        {{"--bogus", "train"}, "unknown flag '--bogus'"},
        {{"train", "--model", "llama", "--out", "x.safetensors"}, "--model: llama not in {gpt,modern_lm}"},
        {{"train", "--out", "x.safetensors"}, "--model is required"},
        {{"train", "--model", "modern_lm"}, "--out"},
        {{"train", "--model", "modern_lm", "--epochs", "two", "--out", "x"}, "--epochs: wants a whole number"},
        {{"train", "--model", "modern_lm", "--epochs", "0", "--out", "x"}, "--epochs: Value 0 not in range 1 to"},
        {{"train", "--model", "modern_lm", "--kv-heads", "5", "--out", "x"}, "--kv-heads: Value 5 not in range 1 to 4"},
        {{"train", "--model", "modern_lm", "--seed", "-1", "--out", "x"}, "--seed: wants a whole number, got '-1'"},
        {{"train", "--model", "modern_lm", "--warmup", "10", "--out", "x"}, "--warmup requires --cosine"},
        {{"train", "--model", "modern_lm", "--cosine", "--warmup", "2", "--epochs", "1", "--limit", "32", "--out", "x"},
         "--warmup 2 is longer than the run (1 steps)"},
        {{"train", "--model", "modern_lm", "--threads", "0", "--out", "x"}, "--threads: Value 0 not in range 1 to"},
        {{"train", "--model", "modern_lm", "--kv-heads", "3", "--out", "x"}, "n_kv_heads 3"},
        {{"train", "--model", "gpt", "--pos", "rope", "--out", "x"}, "learned positions"},
        {{"train", "--model", "modern_lm", "--pos", "absolute", "--out", "x"}, "absolute"},
        {{"train", "--model", "gpt", "--init", "xavier", "--out", "x"},
         "--init: init 'xavier': expected pytorch or gpt2"},
        {{"train", "--model", "modern_lm", "--lr", "-1", "--out", "x"}, "--lr: wants a number > 0"},
        {{"train", "--model", "modern_lm", "--out", (t.dir / "no" / "x").string()}, "does not exist"},
        {{"eval"}, "checkpoint is required"},
        {{"eval", missing}, "missing.safetensors"},
        {{"eval", truncated}, "truncated.safetensors"},
        {{"eval", no_config}, "no model config"},
        {{"eval", bad_config}, "does not parse"},
        {{"eval", config_twice}, "the header is not valid JSON (duplicate key \"config\")"},
        {{"eval", vocab_twice}, "its model config does not parse: model config: not JSON (duplicate key \"vocab\")"},
        {{"eval", t.checkpoint, "--data", bad_data.string()}, "bad.txt line 2: unknown word \"moos\""},
        {{"eval", t.checkpoint, "--data", (t.dir / "none.txt").string()}, "--data: File does not exist"},
        {{"eval", t.checkpoint, "--json", "--limit", "3"}, "--json: needs a value, got the flag '--limit'"},
        {{"eval", t.checkpoint, "extra"}, "not expected: extra"},
        {{"sample", t.checkpoint, "--prompt", "the dgos near"}, "the prompt: unknown word \"dgos\""},
        {{"sample", t.checkpoint, "--prompt", "the dog </s>"}, "'</s>' cannot stand at word 3"},
        {{"sample", t.checkpoint, "--greedy", "--temperature", "2"}, "--greedy excludes --temperature"},
        {{"sample", t.checkpoint, "--temperature", "2", "--greedy"}, "--greedy excludes --temperature"},
        {{"sample", t.checkpoint, "--count", "0"}, "--count: Value 0 not in range 1 to 1000"},
        {{"sample", t.checkpoint, "--count"}, "--count: 1 required N missing"},
    };
    for (const Case& c : cases) check_refused(c.args, c.says);
}

TEST_CASE("farm_lm: an output that exists and is not a regular file is refused and left alone", "[lessons][farm_lm]") {
    const Trained& t = trained();
    REQUIRE(t.train.status == 0);
    const auto fifo = t.dir / "fifo";
    make_fifo(fifo);
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"train", "--model", "gpt", "--epochs", "1", "--limit", "32", "--out", fifo.string()},
             {"eval", t.checkpoint, "--limit", "8", "--json", fifo.string()}}) {
        CHECK(check_refused(args, "'" + fifo.string() + "' exists and is not a regular file").out.empty());
        CHECK(std::filesystem::is_fifo(fifo));
    }
    check_refused({"train", "--model", "gpt", "--out", t.dir.string()}, "--out: '" + t.dir.string() + "' is a folder");
}

TEST_CASE("farm_lm eval: --json is never one of its inputs, and is written whole", "[lessons][farm_lm]") {
    const Trained& t = trained();
    REQUIRE(t.train.status == 0);
    const std::string before = test::read_text(t.checkpoint);
    const auto data = t.dir / "inputs.txt";
    test::write_text(data, "the dog runs\n");
    const std::string other_spelling = (t.dir / "." / "modern.safetensors").string();
    check_refused({"eval", t.checkpoint, "--limit", "8", "--json", t.checkpoint},
                  "is the checkpoint it reads; writing it would destroy it");
    check_refused({"eval", t.checkpoint, "--limit", "8", "--json", other_spelling},
                  "is the checkpoint it reads; writing it would destroy it");
    check_refused({"eval", t.checkpoint, "--data", data.string(), "--json", data.string()},
                  "is the --data file it reads; writing it would destroy it");
    CHECK(test::read_text(t.checkpoint) == before);
    CHECK(test::read_text(data) == "the dog runs\n");
    CHECK(lessons::same_file(t.checkpoint, other_spelling));
    CHECK(lessons::same_file(t.dir / "a" / ".." / "new.json", t.dir / "new.json"));  // neither exists
    CHECK_FALSE(lessons::same_file(t.checkpoint, data));

    // The results replace an existing file through a rename: no temporary left behind.
    const auto json = t.dir / "replaced.json";
    test::write_text(json, "old");
    REQUIRE(
        run_farm_lm({"eval", t.checkpoint, "--data", data.string(), "--limit", "8", "--json", json.string()}).status ==
        0);
    CHECK(nlohmann::json::parse(test::read_text(json)).at("model") == "modern_lm");
    for (const auto& entry : std::filesystem::directory_iterator(t.dir))
        CHECK_THAT(entry.path().string(), !Contains(".tmp"));
}

TEST_CASE("farm_lm: an output that cannot be written is refused before the work starts", "[lessons][farm_lm]") {
    const Trained& t = trained();
    REQUIRE(t.train.status == 0);
    // A folder that takes no new file (test::unwritable_folder); a regular
    // file is no folder.
    const std::string unwritable = test::unwritable_folder();
    const std::string plain = (t.dir / "inputs_plain.txt").string();
    test::write_text(plain, "x");
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"train", "--model", "gpt", "--epochs", "1", "--limit", "32", "--out", unwritable + "/x.safetensors"},
         "--out: cannot write in the folder '" + unwritable + "'"},
        {{"train", "--model", "gpt", "--epochs", "1", "--limit", "32", "--out", plain + "/x.safetensors"},
         "--out: '" + plain + "' is not a folder"},
        {{"eval", t.checkpoint, "--limit", "8", "--json", unwritable + "/x.json"},
         "--json: cannot write in the folder '" + unwritable + "'"},
        {{"eval", t.checkpoint, "--limit", "8", "--json", (t.dir / "no" / "x.json").string()}, "does not exist"},
    };
    for (const auto& [args, says] : cases)
        CHECK(check_refused(args, says).out.empty());  // nothing trained, nothing measured
}

TEST_CASE("farm_lm: --threads, --max-tokens and --count have caps, given in --help", "[lessons][farm_lm]") {
    const Trained& t = trained();
    REQUIRE(t.train.status == 0);
    const int cap = 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    CHECK(lessons::max_threads() == cap);
    check_refused({"sample", t.checkpoint, "--max-tokens", "9999999"},
                  "--max-tokens: Value 9999999 not in range 1 to 1024");
    check_refused({"sample", t.checkpoint, "--count", "1001"}, "--count: Value 1001 not in range 1 to 1000");
    check_refused({"sample", t.checkpoint, "--threads", "2147483647"},
                  fmt::format("--threads: Value 2147483647 not in range 1 to {}", cap));
    check_refused({"eval", t.checkpoint, "--threads", std::to_string(cap + 1)},
                  fmt::format("--threads: Value {} not in range 1 to {}", cap + 1, cap));
    CHECK(run_farm_lm({"sample", t.checkpoint, "--threads", std::to_string(cap), "--max-tokens", "1024"}).status == 0);
    CHECK_THAT(farm_lm::usage(), Contains("1 … 1024 (default 40)") && Contains("1 … 1000 (default 1)") &&
                                     Contains(fmt::format("1 … {}: 4 × the cores", cap)));
}

TEST_CASE("farm_lm eval --data: a line longer than 16 KiB is refused, naming the file and line", "[lessons][farm_lm]") {
    const Trained& t = trained();
    REQUIRE(t.train.status == 0);
    const auto data = t.dir / "long.txt";
    test::write_text(data, "the dog runs\n" + std::string(16 * 1024 + 1, 'a'));  // no newline at its end either
    check_refused({"eval", t.checkpoint, "--data", data.string()}, "long.txt line 2: longer than 16 KiB");
    test::write_text(data, "the dog runs\n" + std::string(16 * 1024 - 1, ' ') + "\n");  // exactly at the cap: read
    CHECK(run_farm_lm({"eval", t.checkpoint, "--data", data.string(), "--limit", "8"}).status == 0);
}

TEST_CASE("farm_lm sample: what it prints is text --data and --prompt accept", "[lessons][farm_lm]") {
    // An untrained model gives <pad> and <s> 1/68 each: 100 sentences of up
    // to 40 tokens would hold about a hundred of them if they were not masked.
    const Trained& t = trained();
    const std::string untrained = (t.dir / "untrained.safetensors").string();
    nn::save(nn::LanguageModel(nn::LMConfig::modern_lm(), 5), untrained,
             {{"config", nn::LMConfig::modern_lm().to_json()}});
    const Result sampled = run_farm_lm({"sample", untrained, "--count", "100", "--seed", "1"});
    REQUIRE(sampled.status == 0);
    CHECK_THAT(sampled.out, !Contains("<pad>"));
    const auto data = t.dir / "sampled.txt";
    test::write_text(data, sampled.out);
    const Result read = run_farm_lm({"eval", untrained, "--data", data.string(), "--limit", "8"});
    INFO(read.err);
    CHECK(read.status == 0);
    CHECK_THAT(read.out, Contains("(100 sentences,"));
    const std::vector<std::string> printed = lines_of(sampled.out);
    for (std::string line : std::vector<std::string>(printed.begin(), printed.begin() + 10)) {
        if (line.size() > 5 && line.substr(line.size() - 5) == " </s>") line.resize(line.size() - 5);
        const Result again = run_farm_lm({"sample", untrained, "--prompt", line, "--max-tokens", "1"});
        INFO(line << "\n" << again.err);
        CHECK(again.status == 0);
        if (again.status != 0) break;  // one failure says it all
    }
}

TEST_CASE("farm_lm train: a run that diverges is refused, nothing saved, exit status 2", "[lessons][farm_lm]") {
    const Trained& t = trained();
    const auto path = t.dir / "diverged.safetensors";
    // Two steps: the second one's loss has no finite perplexity. One step:
    // only the test perplexity shows it (the loss was taken before the update).
    for (const char* limit : {"64", "32"}) {
        const Result r = run_farm_lm({"train", "--model", "modern_lm", "--epochs", "1", "--limit", limit, "--lr",
                                      "1000", "--out", path.string()});
        INFO(r.out << r.err);
        CHECK(r.status == 2);
        // stderr: the epochs done (one line each, as always), then the error's one line
        const std::vector<std::string> err = lines_of(r.err);
        REQUIRE_FALSE(err.empty());
        CHECK_THAT(err.back(), StartsWith("farm_lm train: training diverged") &&
                                   EndsWith("; nothing saved: try a smaller --lr than 1000"));
        CHECK_THAT(r.out, !Contains("saved"));
        CHECK_FALSE(std::filesystem::exists(path));
    }
}

TEST_CASE("farm_lm: finite weights whose forward pass overflows are refused, not measured as nan",
          "[lessons][farm_lm]") {
    // 1e308 in a norm's gain is a finite number the loader accepts; the
    // model's outputs are NaN, and eval would print "perplexity -nan".
    nn::Checkpoint ckpt = nn::load_safetensors(trained().checkpoint);
    for (auto& [name, tensor] : ckpt.tensors)
        if (name.find("norm.weight") != std::string::npos) {
            tensor.data()[0] = 1e308;
            break;
        }
    const std::string path = (trained().dir / "overflowing.safetensors").string();
    nn::save_safetensors(path, ckpt.tensors, ckpt.metadata);
    for (const char* command : {"eval", "sample"}) {
        const Result r = check_refused({command, path}, "outputs are not");
        CHECK(r.out.find("nan") == std::string::npos);
    }
}

TEST_CASE("farm_lm: an unknown word is shown escaped, never as raw bytes", "[lessons][farm_lm]") {
    const Trained& t = trained();
    REQUIRE(t.train.status == 0);
    const auto data = t.dir / "binary.txt";
    test::write_text(data,
                     "the dog runs\nthe \xff\x01"
                     "ab runs\n");
    const Result r = check_refused({"eval", t.checkpoint, "--data", data.string()},
                                   R"(binary.txt line 2: unknown word "\xff\x01ab")");
    const Result long_word = check_refused({"sample", t.checkpoint, "--prompt", "the " + std::string(1000, 'x')},
                                           "unknown word \"" + std::string(40, 'x') + "\"... (1000 bytes)");
    for (const std::string& err : {r.err, long_word.err})
        for (const char c : err) CHECK((c == '\n' || (c >= ' ' && c <= '~')));
}

TEST_CASE("farm_lm: --prompt \"\" is the empty prompt, and a flag given twice keeps its last value",
          "[lessons][farm_lm]") {
    const Trained& t = trained();
    REQUIRE(t.train.status == 0);
    const Result empty = run_farm_lm({"sample", t.checkpoint, "--prompt", "", "--greedy"});
    INFO(empty.err);
    CHECK(empty.status == 0);
    CHECK(empty.out == run_farm_lm({"sample", t.checkpoint, "--greedy"}).out);
    check_refused({"sample", t.checkpoint, "--prompt", "--greedy"}, "--prompt: needs a value, got the flag '--greedy'");

    // As the lessons' --seeds 3 --seeds 4 (test_lesson_common.cpp).
    const Result twice = run_farm_lm({"sample", t.checkpoint, "--count", "2", "--count", "3", "--max-tokens", "4"});
    CHECK(twice.status == 0);
    CHECK(lines(twice.out) == 3);
    CHECK(run_farm_lm({"sample", t.checkpoint, "--prompt", "the cat", "--prompt", "the dogs", "--greedy"}).out ==
          run_farm_lm({"sample", t.checkpoint, "--prompt", "the dogs", "--greedy"}).out);
}
