#pragma once
// The command line every lesson (and the tools built on them) shares:
//
//   --part N      run only part N (default: every part, in order)
//   --seeds N     how many seeds, 0 … N-1 (default: the program's own)
//   --quick       tiny settings that finish in seconds (used by the tests)
//   --threads N   the engine's threads for the kernels (results do not depend on it)
//   --json FILE   write every reported number to FILE
//   --out DIR     figures and cached checkpoints (default out/)
//   --language L  the farm language, lecture (default) or uniform, in the
//                 lessons that train on it (CommandLine::farm_language)
//   and a program's own whole-number flags (CommandLine::flags)
//   --help        usage on stdout
//
// A value may also be written --flag=value, and a flag given twice keeps
// its last value. Anything else (an unknown flag, a missing or non-numeric
// value, a part out of range, seeds below 1, threads outside 1 …
// max_threads(), a --json or --out that cannot be written) is an error: the
// program prints it on one line and exits 2, before any work.
//
// CLI11 parses (cli.cpp declares each flag once, with its help and its
// check); only the .cpp files that parse include it, so this header names
// its types without including it.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI

namespace lessons {

// A whole-number flag of one program only (lesson 01's --labels N):
// declared in its CommandLine, read with Options::flag("labels").
struct ProgramFlag {
    std::string name;   // without the dashes: "labels"
    std::string help;   // "labelled images per seed in part 1"
    int64_t value = 0;  // the default
    int64_t min = 0, max = 0;
};

struct Options {
    int part = 0;  // 0: every part
    int seeds = 1;
    bool quick = false;
    int threads = 0;   // 0: the engine's default (the hardware's threads)
    std::string json;  // empty: no JSON file
    std::string out = "out";
    std::string language = "lecture";  // farm::Language::named's name
    bool help = false;
    std::map<std::string, int64_t> flags;  // the program's own flags, every one with its value
    // The value of the program's own flag `name` (std::out_of_range if it declared none).
    int64_t flag(const std::string& name) const { return flags.at(name); }
};

// What a program tells the parser and the usage text about itself.
struct CommandLine {
    std::string program;             // "00_autograd_recap"
    std::string about;               // one line under the usage line
    std::vector<std::string> parts;  // part i+1's description; may be empty
    int default_seeds = 1;
    std::vector<ProgramFlag> flags{};  // the program's own flags, after the shared ones
    bool farm_language = false;        // takes --language (it trains or measures on the farm language)
};

struct ParsedOptions {
    Options options;
    std::string error;  // empty when the arguments are valid
    bool ok() const { return error.empty(); }
};

// args: argv[1 …], without the program name.
ParsedOptions parse_options(const std::vector<std::string>& args, const CommandLine& cli);
std::string usage(const CommandLine& cli);  // CLI11's help

// out/<name>, creating out/ first if it does not exist yet.
std::filesystem::path output_path(const Options& options, std::string_view name);

// out/models/: the trained models a lesson caches (model_cache.h), which
// its --json must not overwrite.
std::filesystem::path model_cache_dir(const std::filesystem::path& out);

// ---- what the other command lines (farm_lm, grade, bench_train) share -------

// A value of the command line that is wrong only with the data or the model
// it meets (lesson 01's --labels beyond the class-balanced images there
// are, farm_lm's --warmup longer than the run): thrown before the work it
// would spoil; the program prints it as usage_error, exit status 2.
struct UsageError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// A bad command line's one line on stderr: "<who>: <message> (<who> --help
// shows the usage)".
std::string usage_error(std::string_view who, std::string_view message);

// Parses a program's whole command line into `app` under that contract:
// --help prints CLI11's help on stdout (returns 0), a bad argument prints
// usage_error on stderr (returns 2); nullopt: parsed, go on.
std::optional<int> parse_command_line(CLI::App& app, int argc, const char* const* argv, std::string_view who);

// The one rule for a flag given twice, in the lessons and in farm_lm: the
// last value counts (the options added to `app` afterwards).
void take_last_value(CLI::App& app);

// --threads N: the engine's threads for the kernels, 1 … max_threads();
// `threads` stays 0 (the engine's default) when the flag is not given.
CLI::Option* add_threads(CLI::App& app, int& threads,
                         const std::string& help = "threads for the kernels; results do not depend on it");
// 4 × the cores (std::thread::hardware_concurrency(), at least 1 core):
// more only costs (each thread has its own stack; 2147483647 threads
// ask for 481 GB, 10,000 take a minute for a second's work).
int max_threads();

// Numbers exactly as the user wrote them. CLI11 alone would read "010" as
// octal, "-1" as a huge unsigned seed and a real through long double (a
// different rounding now and then); these checks accept plain decimal
// spellings only and hand CLI11 a spelling it converts exactly.
CLI::Validator whole_number();               // 0, 1, 2, …; then CLI::Range for bounds
CLI::Validator positive_number(double max);  // a finite real in (0, max]
CLI::Validator text_value();                 // not "" and not the next flag
CLI::Validator maybe_empty_text();           // "" too (an empty prompt), not the next flag

// Outputs, checked when the command line is read, before the work: a file a
// program writes (through a temporary file and a rename) may exist only as
// a regular file (a FIFO or a device such as /dev/null is never replaced),
// in a folder that exists and takes a new file; a folder (--out) may exist
// only as a folder that takes a new file, or is created where one can be.
CLI::Validator output_file();
CLI::Validator output_folder();
// Do `a` and `b` name the same file: std::filesystem::equivalent when both
// exist, the same normalised absolute path otherwise (an output must never
// be one of the inputs it is computed from).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace lessons
