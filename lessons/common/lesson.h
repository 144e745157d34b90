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
};

struct Lesson {
    std::string name;     // "00_autograd_recap", the program's name
    std::string title;    // "Autograd recap"
    std::string section;  // the lecture section(s) it follows: "§1"
    int default_seeds = 1;
    std::vector<Part> parts;           // part N is parts[N-1]
    std::vector<ProgramFlag> flags{};  // the lesson's own flags (cli.h)
};

CommandLine command_line(const Lesson& lesson);

// Print the lesson's header, then run the chosen part (or all, in order),
// each opened by report.section(); a lesson flag missing from `options`
// takes its default. Exceptions from a part propagate.
void run_parts(const Lesson& lesson, const Options& options, Report& report);

// The whole program: parse the arguments (a bad one: one line on stderr
// naming it, return 2; --help: CLI11's help on stdout, return 0), set the
// thread count, run the parts, write the lesson's pages into --out
// (book.h: NN_<name>.html and .json, index.html) and --json. An exception
// from a part, or a file that cannot be written, prints a one-line error on
// stderr and returns 1.
int run_lesson(int argc, const char* const* argv, const Lesson& lesson);

}  // namespace lessons
