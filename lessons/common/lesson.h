#pragma once
// A lesson program: its parts, each following one section of the lecture,
// run under the shared command line (cli.h) and reported through Report.
//
//   int main(int argc, char** argv) { return run_lesson(argc, argv, my_lesson()); }
#include <functional>
#include <string>
#include <vector>

#include "lessons/common/cli.h"
#include "lessons/common/report.h"

namespace lessons {

struct Part {
    std::string section;  // "§1"
    std::string title;
    std::string shows;  // one sentence: what this part shows
    std::function<void(Report&, const Options&)> run;
    // The files that compute it, from the repository's top folder
    // ("lessons/rope/rotation.cpp"): the page names them, the code to read.
    std::vector<std::string> sources{};
};

// Whether a lesson trains or measures on the farm language, and so takes
// --language (cli.h).
enum class FarmLanguage { not_used, used };

struct Lesson {
    std::string name;     // "00_autograd_recap", the program's name
    std::string title;    // "Autograd recap"
    std::string section;  // the lecture section(s) it follows: "§1"
    int default_seeds = 1;
    std::vector<Part> parts;           // part N is parts[N-1]
    std::vector<ProgramFlag> flags{};  // the lesson's own flags (cli.h)
    FarmLanguage farm_language = FarmLanguage::not_used;
};

CommandLine command_line(const Lesson& lesson);

// Print the lesson's header, then run the chosen part (or all, in order),
// each opened by report.section(); a lesson flag missing from `options`
// takes its default. Exceptions from a part propagate.
void run_parts(const Lesson& lesson, const Options& options, Report& report);

// The whole program: parse the arguments, set the thread count, run the
// parts, write the lesson's pages into --out (book.h: NN_<name>.html and
// .json, index.html) and --json (through a temporary file and a rename).
// Exit status, as farm_lm's: 2 for bad input, one line on stderr naming it
// (a bad argument, an --out or --json that cannot be written, both found
// before any part runs, or a UsageError from a part: a flag the data cannot
// honour); 0 for --help (CLI11's help on stdout); 1 for anything else (an
// exception from a part, a file that fails to write), also one line.
int run_lesson(int argc, const char* const* argv, const Lesson& lesson);

}  // namespace lessons
