#include "lessons/common/cli.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <locale>
#include <memory>
#include <sstream>
#include <system_error>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace lessons {
namespace {

namespace fs = std::filesystem;

// A CLI::Range whose bounds the help text already gives in words.
CLI::Validator quiet_range(int min, int max) {
    CLI::Validator range = CLI::Range(min, max);
    range.description("");
    return range;
}

// Does `folder` take a new file? Making one is the only sure answer:
// access(2) tells root yes for every folder, and /proc says yes to access
// and no to a new file. The probe has a unique name and is removed at once.
bool takes_new_file(const fs::path& folder) {
    std::string probe = (folder / ".write_check_XXXXXX").string();
    const int fd = ::mkstemp(probe.data());
    if (fd < 0) return false;
    ::close(fd);
    ::unlink(probe.c_str());
    return true;
}

// What a lesson's --json must not replace, or "": its own model cache
// (out/models/, the checkpoints and locks the lesson reads and writes), and
// an existing file that does not hold JSON (a report written before starts
// with '{'; a checkpoint or a data file named by mistake does not).
std::string json_target_problem(const fs::path& json, const fs::path& out) {
    std::error_code models_error, target_error;
    const fs::path models = fs::weakly_canonical(model_cache_dir(fs::absolute(out)), models_error);
    const fs::path target = fs::weakly_canonical(fs::absolute(json), target_error);
    if (target_error) return fmt::format("'{}' cannot be resolved: {}", json.string(), target_error.message());
    if (!models_error && !models.empty() &&  // an empty path would be a prefix of every path
        std::mismatch(models.begin(), models.end(), target.begin(), target.end()).first == models.end())
        return fmt::format("'{}' is in the lessons' model cache {}/: choose a file outside it", json.string(),
                           model_cache_dir(out).string());
    if (fs::is_regular_file(target, target_error)) {
        std::ifstream in(target, std::ios::binary);
        char c = 0;
        while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
        }
        if (in && c != '{')
            return fmt::format("'{}' exists and does not hold JSON: --json replaces only a report written before",
                               json.string());
    }
    return {};
}

// The lessons' command line, every flag declared once: the parser, the
// checks and the help all come from here.
std::unique_ptr<CLI::App> lesson_app(const CommandLine& cli, Options& o) {
    auto app = std::make_unique<CLI::App>(cli.about, cli.program);
    take_last_value(*app);

    const int n_parts = static_cast<int>(cli.parts.size());
    CLI::Option* part =
        app->add_option("--part", o.part,
                        n_parts > 0 ? fmt::format("run only part N, 1-{} (default: every part, in order)", n_parts)
                                    : std::string("run only part N (default: every part, in order)"))
            ->type_name("N")
            ->transform(whole_number());
    if (n_parts > 0)
        part->check(quiet_range(1, n_parts));
    else
        part->check(CLI::Validator([program = cli.program](std::string&) { return program + " has no parts"; }, ""));
    app->add_option("--seeds", o.seeds, fmt::format("run seeds 0 … N-1 (default {})", cli.default_seeds))
        ->type_name("N")
        ->transform(whole_number())
        ->check(quiet_range(1, INT_MAX));
    app->add_flag("--quick", o.quick, "tiny settings that finish in seconds (used by the tests)")
        ->disable_flag_override();
    add_threads(*app, o.threads);
    app->add_option("--json", o.json, "write every reported number to FILE as JSON")
        ->type_name("FILE")
        ->check(text_value())
        ->check(output_file());
    app->add_option("--out", o.out, "figures and cached checkpoints (default out/)")
        ->type_name("DIR")
        ->check(text_value())
        ->check(output_folder());
    if (cli.farm_language) {
        app->add_option("--language", o.language,
                        "the farm language: lecture (default, calibrated to the lecture's perplexities) or uniform "
                        "(every choice uniform; docs/farm_language.md)")
            ->type_name("L")
            ->check(CLI::IsMember({"lecture", "uniform"}));
    }
    for (const ProgramFlag& flag : cli.flags) {
        o.flags[flag.name] = flag.value;
        app->add_option("--" + flag.name, o.flags[flag.name],
                        fmt::format("{}, {} … {} (default {})", flag.help, flag.min, flag.max, flag.value))
            ->type_name("N")
            ->transform(whole_number())
            ->check(CLI::Range(flag.min, flag.max).description(""));
    }
    app->set_help_flag("-h,--help", "show this help");

    std::string footer = n_parts > 0 ? "parts:\n" : "";
    for (int p = 0; p < n_parts; ++p) footer += fmt::format("  {}  {}\n", p + 1, cli.parts[static_cast<size_t>(p)]);
    app->footer(footer);
    return app;
}

// A decimal number, the whole text ("0.001", "1e-3", not " 1", "+1" or
// "1e"), read in the classic locale whatever the program's: a stream, as
// std::from_chars for double is missing from libc++ (Apple Clang's) before
// LLVM 20. Out of range (1e999) fails the stream.
bool read_decimal(const std::string& text, double& x) {
    if (text.empty() || text.front() == '+') return false;
    std::istringstream in(text);
    in.imbue(std::locale::classic());
    in >> std::noskipws >> x;
    return !in.fail() && in.peek() == std::char_traits<char>::eof();
}

}  // namespace

ParsedOptions parse_options(const std::vector<std::string>& args, const CommandLine& cli) {
    ParsedOptions parsed;
    parsed.options.seeds = cli.default_seeds;
    const auto app = lesson_app(cli, parsed.options);
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
    try {
        app->parse(reversed);
        // CLI11 checks only the values given; the default folder can be as
        // unwritable (a file named out, a read-only working directory).
        std::string out = parsed.options.out;
        if (app->count("--out") == 0)
            if (const std::string problem = output_folder()(out); !problem.empty()) parsed.error = "--out: " + problem;
        if (!parsed.options.json.empty() && parsed.error.empty())
            if (const std::string problem = json_target_problem(parsed.options.json, parsed.options.out);
                !problem.empty())
                parsed.error = "--json: " + problem;
    } catch (const CLI::CallForHelp&) {
        parsed.options.help = true;
    } catch (const CLI::ParseError& e) {
        parsed.error = e.what();
    }
    return parsed;
}

std::string usage(const CommandLine& cli) {
    Options unused;
    return lesson_app(cli, unused)->help();
}

std::filesystem::path output_path(const Options& options, std::string_view name) {
    std::filesystem::create_directories(options.out);
    return std::filesystem::path(options.out) / name;
}

std::filesystem::path model_cache_dir(const std::filesystem::path& out) { return out / "models"; }

// ---- shared with farm_lm, grade and bench_train -----------------------------

std::string usage_error(std::string_view who, std::string_view message) {
    return fmt::format("{}: {} ({} --help shows the usage)", who, message, who);
}

std::optional<int> parse_command_line(CLI::App& app, int argc, const char* const* argv, std::string_view who) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        fmt::print("{}", app.help());
        return 0;
    } catch (const CLI::ParseError& e) {
        fmt::print(stderr, "{}\n", usage_error(who, e.what()));
        return 2;
    }
    return std::nullopt;
}

void take_last_value(CLI::App& app) { app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast); }

CLI::Option* add_threads(CLI::App& app, int& threads, const std::string& help) {
    return app.add_option("--threads", threads, fmt::format("{} (1 … {}: 4 × the cores)", help, max_threads()))
        ->type_name("N")
        ->transform(whole_number())
        ->check(quiet_range(1, max_threads()));
}

int max_threads() {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return static_cast<int>(std::min(4u * cores, static_cast<unsigned>(INT_MAX)));
}

CLI::Validator whole_number() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            uint64_t n = 0;
            const char* end = text.data() + text.size();
            const auto [stop, error] = std::from_chars(text.data(), end, n);
            if (text.empty() || error != std::errc() || stop != end)
                return fmt::format("wants a whole number, got '{}'", text);
            text = std::to_string(n);  // "010" is ten: CLI11 gets "10", not C's octal
            return {};
        },
        "");
}

CLI::Validator positive_number(double max) {
    return CLI::Validator(
        [max](std::string& text) -> std::string {
            double x = 0;
            if (!read_decimal(text, x) || !std::isfinite(x) || x <= 0)
                return fmt::format("wants a number > 0, got '{}'", text);
            if (x > max) return fmt::format("must be at most {:g}, got {}", max, text);
            // CLI11 converts through long double, which can round a decimal
            // differently from a direct conversion; a hexadecimal float is
            // exact in both, so the value is the one read here.
            text = fmt::format("{:a}", x);
            return {};
        },
        "");
}

// CLI11 takes the next argument as the value even when it is a flag:
// "--json --quick" would write a file named "--quick". A value that starts
// with "--" is a forgotten value (a file of that name is ./--quick).
CLI::Validator text_value() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            if (text.empty()) return "needs a value";
            return maybe_empty_text()(text);
        },
        "");
}

CLI::Validator maybe_empty_text() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            if (text.rfind("--", 0) == 0) return fmt::format("needs a value, got the flag '{}'", text);
            return {};
        },
        "");
}

CLI::Validator output_file() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            const fs::path path(text);
            std::error_code error;
            const fs::file_status status = fs::status(path, error);  // through symlinks: /dev/stdout is a device
            if (fs::is_directory(status)) return fmt::format("'{}' is a folder", text);
            if (fs::exists(status) && !fs::is_regular_file(status))
                return fmt::format("'{}' exists and is not a regular file (a device, FIFO or socket is never replaced)",
                                   text);
            const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
            if (!fs::exists(folder, error)) return fmt::format("the folder '{}' does not exist", folder.string());
            if (!fs::is_directory(folder, error)) return fmt::format("'{}' is not a folder", folder.string());
            if (!takes_new_file(folder)) return fmt::format("cannot write in the folder '{}'", folder.string());
            return {};
        },
        "");
}

CLI::Validator output_folder() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            // The nearest folder on the way that exists: the run creates the
            // rest inside it (the file-system root always exists).
            const fs::path wanted = fs::absolute(text);
            fs::path nearest = wanted;
            std::error_code error;
            while (!fs::exists(nearest, error)) nearest = nearest.parent_path();
            const std::string name = nearest == wanted ? text : nearest.string();
            if (!fs::is_directory(nearest, error))
                return nearest == wanted ? fmt::format("'{}' exists and is not a folder", text)
                                         : fmt::format("'{}' is not a folder", name);
            if (!takes_new_file(nearest)) return fmt::format("cannot write in the folder '{}'", name);
            return {};
        },
        "");
}

bool same_file(const fs::path& a, const fs::path& b) {
    std::error_code error;
    if (fs::exists(a, error) && fs::exists(b, error)) return fs::equivalent(a, b, error);
    return fs::absolute(a).lexically_normal() == fs::absolute(b).lexically_normal();
}

}  // namespace lessons
