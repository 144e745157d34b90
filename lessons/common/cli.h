#pragma once
// The command line every lesson (and the tools built on them) shares:
//
//   --part N      run only part N (default: every part, in order)
//   --seeds N     how many seeds, 0 … N-1 (default: the program's own)
//   --quick       tiny settings that finish in seconds (used by the tests)
//   --threads N   OpenMP threads for the kernels (results do not depend on it)
//   --json FILE   write every reported number to FILE
//   --out DIR     figures and cached checkpoints (default out/)
//   --help        usage on stdout
//
// A value may also be written --flag=value. Anything else (an unknown flag,
// a missing or non-numeric value, a part out of range, seeds or threads
// below 1) is an error: the program prints it with the usage and exits 2.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace lessons {

struct Options {
    int part = 0;              // 0: every part
    int seeds = 1;
    bool quick = false;
    int threads = 0;           // 0: OpenMP's default
    std::string json;          // empty: no JSON file
    std::string out = "out";
    bool help = false;
};

// What a program tells the parser and the usage text about itself.
struct CommandLine {
    std::string program;               // "00_autograd_recap"
    std::string about;                 // one line under the usage line
    std::vector<std::string> parts;    // part i+1's description; may be empty
    int default_seeds = 1;
};

struct ParsedOptions {
    Options options;
    std::string error;                 // empty when the arguments are valid
    bool ok() const { return error.empty(); }
};

// args: argv[1 …], without the program name.
ParsedOptions parse_options(const std::vector<std::string>& args, const CommandLine& cli);
std::string usage(const CommandLine& cli);

// out/<name>, creating out/ first if it does not exist yet.
std::filesystem::path output_path(const Options& options, std::string_view name);

}  // namespace lessons
