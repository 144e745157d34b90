#pragma once
// The grader behind `./grade` (see exercises/README.md): which exercises
// exist, how one exercise's test program is run in isolation, and the
// scoreboard.
//
// Each exercise's tests are one program (exNN_tests). It runs as a child
// process with limits on time, output and memory, and its Catch2 listener
// (grading_listener.cpp) reports each event through a channel the student's
// code cannot forge (report_channel.h). An exercise passes only when the
// program ran every registered test to its end, every one passed, and
// every line of the report is the listener's. A program that crashes,
// aborts, loops forever, ends early, prints or allocates without end, or
// writes into the report fails that exercise only.
#include <cstdint>
#include <string>
#include <vector>

#include "lessons/common/course.h"

namespace grading {

// One exercise: its number, name, lecture section and hint, kept with the
// course's other lists (lessons/common/course.h) so that the course page
// and the grader name the same exercises.
using Exercise = lessons::course::Exercise;

// The 18 exercises, in order.
const std::vector<Exercise>& exercises();

// What `grade ARG…` asks for: "7", "ex07", "07" (a number), "3-9" (a
// range) or part of a name ("rope": every exercise whose name contains
// it). No argument: all.
// Throws std::invalid_argument naming an argument that matches nothing.
std::vector<Exercise> select(const std::vector<std::string>& args);

enum class Status { passed, failed, not_started };
std::string to_string(Status s);  // "passed", "FAILED", "not started"

struct Result {
    Exercise exercise;
    Status status = Status::failed;
    int tests_passed = 0, tests_registered = 0;
    std::string why;                  // one line: "crashed (SIGSEGV) in test '…'", "does not compile", …
    std::vector<std::string> detail;  // the first failing check: test, check, expected vs actual, messages
};

// What one run of an exercise's program may use before it is stopped.
struct Limits {
    double seconds = 120;
    int64_t output_bytes = int64_t{4} << 20;  // stdout and stderr together
    int64_t memory_bytes = int64_t{2} << 30;  // resident (Linux: /proc/PID/statm)
};

// Whether memory_bytes can be enforced here: the resident size is read
// from /proc, which Linux has and macOS does not (there the limit is not
// applied).
bool memory_limit_enforced();

// Runs `command` (argv; command[0] is the program) with its report channel
// open, its output to `log_path`, within `limits`, and turns what it
// reported into a Result.
Result run_exercise(const Exercise& exercise, const std::vector<std::string>& command, const Limits& limits,
                    const std::string& log_path);

// Builds `target` in `build_dir` (cmake --build, one compile per core): an
// exercise's program exNN_tests, or grade_all for every exercise's at once.
// Its output goes to `log_path`. Returns "" on success, else the first
// compiler error lines.
std::string build_target(const std::string& target, const std::string& build_dir, const std::string& log_path);

// The table printed by `grade`: one row per exercise, and under a failed
// one its first failing check and the hint.
std::string scoreboard(const std::vector<Result>& results);
std::string to_json(const std::vector<Result>& results);

// A deliberately broken solution: in solutions/exNN_<name>.cpp, the text
// `find` (which must occur exactly once) replaced by `replace`. CI checks
// that the grading tests catch every one (tests/exercises/mutants.txt):
//
//   ex01 rotates clockwise           <- "exNN what it breaks"
//   - s * x[0] + c * x[1]            <- "- " the text to find (one or more lines)
//   + -s * x[0] + c * x[1]           <- "+ " its replacement (zero or more lines)
struct Mutant {
    int number = 0;
    std::string what, find, replace;
};
// Throws std::runtime_error naming the line of a malformed file.
std::vector<Mutant> read_mutants(const std::string& path);
// The solution's text with the mutant applied; throws when `find` does not
// occur exactly once (a stale mutant).
std::string apply(const Mutant& mutant, const std::string& solution);

// What an attempt of the corpus (grade --attempts) says its failure must
// say: the text after "// grade says: " on a line of the file, "" when it
// declares nothing. A wrong attempt that declares it is caught only when
// its scoreboard text (why and detail) contains that text, so the corpus
// checks the diagnosis a student would read, not only the verdict.
std::string declared_message(const std::string& attempt);
// The result's scoreboard text, why and every detail line.
std::string full_text(const Result& result);

}  // namespace grading
