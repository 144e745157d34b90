// grade: build and run the exercises' grading tests and print the scoreboard.
//
//   ./grade                 every exercise
//   ./grade 7 | ex07 | 3-9 | rope   one exercise, a range, or every exercise whose name contains "rope"
//   ./grade --json FILE     also write the scoreboard as JSON
//   ./grade --timeout S     seconds each exercise may run (default 120)
//   ./grade --max-output M  MiB of output each may print (default 4)
//   ./grade --max-memory M  MiB of memory each may use (default 2048)
//   ./grade --no-build      run the test programs as they are
//   ./grade --programs DIR  where the exNN_tests programs are (default: this build's)
//
// For CI, which proves the tests mean something:
//   grade --expect-not-started   exit 0 only if every exercise is "not started"
//                                (the untouched stubs)
//   grade --mutants FILE         in a build whose EXERCISE_CANDIDATES is a
//                                scratch folder: each deliberately broken
//                                solution in FILE must fail its tests
//   grade --attempts DIR         likewise, whole files students could have
//                                written: DIR/exNN_<name>/wrong_*.cpp must
//                                fail, right_*.cpp must pass
//
// Exit status: 0 when every graded exercise passed, 1 otherwise, 2 on bad
// arguments. Logs of each build and run are in <build>/grade-logs/.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <stdexcept>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "grading.h"

namespace {

const char* const kUsage =
    "usage: grade [EXERCISE ...] [--json FILE] [--timeout SECONDS] [--max-output MIB] [--max-memory MIB]\n"
    "             [--no-build] [--programs DIR] [--expect-not-started] [--mutants FILE] [--attempts DIR]\n"
    "  EXERCISE: a number (7), an id (ex07), a range (3-9) or part of a name (rope); none: all 18\n";

int bad(const std::string& message) {
    std::fprintf(stderr, "grade: %s\n%s", message.c_str(), kUsage);
    return 2;
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("grade: cannot read " + path.string());
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::filesystem::path& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    if (!out) throw std::runtime_error("grade: cannot write " + path.string());
}

// The candidates folder of a build made for checking the tests
// (-DEXERCISE_CANDIDATES=<a scratch folder>), filled with the solutions.
std::filesystem::path scratch_candidates() {
    namespace fs = std::filesystem;
    const fs::path candidates = GRADE_CANDIDATES, solutions = fs::path(GRADE_SOURCE_DIR) / "solutions";
    if (fs::equivalent(candidates, solutions) || fs::equivalent(candidates, fs::path(GRADE_SOURCE_DIR) / "exercises"))
        throw std::invalid_argument("--mutants and --attempts need a build configured with "
                                    "-DEXERCISE_CANDIDATES=<a scratch folder>, not exercises/ or solutions/ (they are "
                                    "never modified)");
    for (const grading::Exercise& e : grading::exercises()) {
        const std::string stem = e.id() + "_" + e.name + ".cpp";
        if (fs::exists(solutions / stem)) fs::copy_file(solutions / stem, candidates / stem, fs::copy_options::overwrite_existing);
    }
    return candidates;
}

// Exercise e's file replaced by `text` in the candidates folder, built and
// graded; then the solution put back.
grading::Result grade_variant(const grading::Exercise& e, const std::string& text, const grading::Limits& limits,
                              const std::filesystem::path& logs) {
    namespace fs = std::filesystem;
    const std::string stem = e.id() + "_" + e.name + ".cpp";
    const fs::path target = fs::path(GRADE_CANDIDATES) / stem;
    write_file(target, text);
    grading::Result r;
    r.exercise = e;
    const std::string errors = grading::build_exercise(e, GRADE_BUILD_DIR, (logs / "variant.build.log").string());
    if (errors.empty())
        r = grading::run_exercise(e, {std::string(GRADE_BUILD_DIR) + "/tests/exercises/" + e.id() + "_tests"}, limits,
                                  (logs / "variant.log").string());
    else
        r.why = "does not compile: " + errors;
    write_file(target, read_file(fs::path(GRADE_SOURCE_DIR) / "solutions" / stem));
    return r;
}

// Leaves the programs of these exercises built from the plain solutions again.
void rebuild(const std::vector<int>& numbers, const std::filesystem::path& logs) {
    for (const grading::Exercise& e : grading::exercises())
        if (std::find(numbers.begin(), numbers.end(), e.number) != numbers.end())
            grading::build_exercise(e, GRADE_BUILD_DIR, (logs / "variant.build.log").string());
}

// What a failure says in one line: its innermost message (a FAIL's text or
// the INFO nearest the check), else its check, else why.
std::string one_line(const grading::Result& r) {
    std::string text = r.why;
    for (const std::string& line : r.detail) {
        const bool framing = line.rfind("in test", 0) == 0 || line.rfind("got:", 0) == 0;
        if (!framing && (line.rfind("check:", 0) != 0 || line.find("FAIL") == std::string::npos)) text = line;
    }
    return text.substr(0, text.find('\n'));
}

// Every mutant applied in turn to its solution: a mutant whose exercise
// still passes survived.
int check_mutants(const std::string& file, const std::vector<grading::Exercise>& chosen, const grading::Limits& limits,
                  const std::filesystem::path& logs) {
    namespace fs = std::filesystem;
    scratch_candidates();
    const fs::path solutions = fs::path(GRADE_SOURCE_DIR) / "solutions";
    int problems = 0, checked = 0;
    std::vector<int> count(grading::exercises().size() + 1, 0), touched;
    for (const grading::Mutant& m : grading::read_mutants(file)) {
        const grading::Exercise& e = grading::exercises().at(static_cast<size_t>(m.number - 1));
        ++count[static_cast<size_t>(m.number)];
        if (std::none_of(chosen.begin(), chosen.end(), [&](const grading::Exercise& c) { return c.number == e.number; }))
            continue;
        touched.push_back(e.number);
        ++checked;
        const grading::Result r =
            grade_variant(e, grading::apply(m, read_file(solutions / (e.id() + "_" + e.name + ".cpp"))), limits, logs);
        std::string verdict = "caught: " + one_line(r);
        if (r.status == grading::Status::passed) {
            verdict = "SURVIVED: no test fails";
            ++problems;
        }
        std::printf("%s %-45s %s\n", e.id().c_str(), m.what.c_str(), verdict.c_str());
        std::fflush(stdout);
    }
    rebuild(touched, logs);
    for (const grading::Exercise& e : chosen)
        if (count[static_cast<size_t>(e.number)] < 2)
            std::printf("%s has %d mutant(s); every exercise needs at least two\n", e.id().c_str(),
                        count[static_cast<size_t>(e.number)]), ++problems;
    std::printf("%d mutants, %d problem(s)\n", checked, problems);
    return problems == 0 ? 0 : 1;
}

// The attempts corpus: DIR/exNN_<name>/wrong_*.cpp must compile and fail,
// DIR/exNN_<name>/right_*.cpp must pass; at least four wrong ones and one
// right one per exercise.
int check_attempts(const std::string& dir, const std::vector<grading::Exercise>& chosen, const grading::Limits& limits,
                   const std::filesystem::path& logs) {
    namespace fs = std::filesystem;
    if (!fs::is_directory(dir)) throw std::invalid_argument("--attempts: " + dir + " is not a folder");
    scratch_candidates();
    for (const fs::directory_entry& entry : fs::directory_iterator(dir))
        if (std::none_of(grading::exercises().begin(), grading::exercises().end(), [&](const grading::Exercise& e) {
                return entry.path().filename() == e.id() + "_" + e.name;
            }))
            throw std::invalid_argument("--attempts: " + entry.path().string() +
                                        " is not named after an exercise (exNN_<name>)");
    int problems = 0, checked = 0;
    std::vector<int> touched;
    for (const grading::Exercise& e : chosen) {
        const fs::path folder = fs::path(dir) / (e.id() + "_" + e.name);
        std::vector<fs::path> files;
        if (fs::is_directory(folder))
            for (const fs::directory_entry& entry : fs::directory_iterator(folder)) files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        int wrong = 0, right = 0;
        for (const fs::path& file : files) {
            const std::string name = file.filename().string();
            const bool is_wrong = name.rfind("wrong_", 0) == 0, is_right = name.rfind("right_", 0) == 0;
            if ((!is_wrong && !is_right) || file.extension() != ".cpp") {
                std::printf("%s %-45s not an attempt: name it wrong_*.cpp or right_*.cpp\n", e.id().c_str(), name.c_str());
                ++problems;
                continue;
            }
            touched.push_back(e.number);
            ++checked;
            const grading::Result r = grade_variant(e, read_file(file), limits, logs);
            std::string verdict;
            if (is_wrong) {
                ++wrong;
                const bool compiles = r.why.rfind("does not compile", 0) != 0;
                const bool caught = compiles && r.status == grading::Status::failed;
                verdict = caught ? "caught: " + one_line(r)
                          : !compiles ? "BROKEN: a wrong attempt must compile (" + one_line(r) + ")"
                                      : "NOT CAUGHT: graded " + grading::to_string(r.status);
                problems += caught ? 0 : 1;
            } else {
                ++right;
                const bool passed = r.status == grading::Status::passed;
                verdict = passed ? "passed" : "REJECTED: " + grading::to_string(r.status) + ": " + one_line(r);
                problems += passed ? 0 : 1;
            }
            std::printf("%s %-45s %s\n", e.id().c_str(), name.c_str(), verdict.c_str());
            std::fflush(stdout);
        }
        if (wrong < 4 || right < 1) {
            std::printf("%s has %d wrong and %d right attempt(s); every exercise needs at least four and one\n",
                        e.id().c_str(), wrong, right);
            ++problems;
        }
    }
    rebuild(touched, logs);
    std::printf("%d attempts, %d problem(s)\n", checked, problems);
    return problems == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> picks;
    std::string json_path, programs = std::string(GRADE_BUILD_DIR) + "/tests/exercises";
    std::string mutants, attempts;
    grading::Limits limits;
    bool build = true, expect_not_started = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--help" || arg == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (arg == "--json" && has_value) {
            json_path = argv[++i];
        } else if ((arg == "--timeout" || arg == "--max-output" || arg == "--max-memory") && has_value) {
            double value = 0;
            try {
                size_t used = 0;
                value = std::stod(argv[++i], &used);
                if (used != std::string(argv[i]).size()) throw std::invalid_argument("trailing text");
            } catch (const std::exception&) {
                return bad(fmt::format("{} needs a number, got '{}'", arg, argv[i]));
            }
            if (!(value > 0) || value > 1e6) return bad(fmt::format("{} must be positive and at most 1e6", arg));
            if (arg == "--timeout") limits.seconds = value;
            if (arg == "--max-output") limits.output_bytes = static_cast<int64_t>(value * (1 << 20));
            if (arg == "--max-memory") limits.memory_bytes = static_cast<int64_t>(value * (1 << 20));
        } else if (arg == "--programs" && has_value) {
            programs = argv[++i];
        } else if (arg == "--no-build") {
            build = false;
        } else if (arg == "--expect-not-started") {
            expect_not_started = true;
        } else if (arg == "--mutants" && has_value) {
            mutants = argv[++i];
        } else if (arg == "--attempts" && has_value) {
            attempts = argv[++i];
        } else if (arg.rfind("--", 0) == 0) {
            return bad(fmt::format("unknown or incomplete option '{}'", arg));
        } else {
            picks.push_back(arg);
        }
    }

    std::vector<grading::Exercise> chosen;
    try {
        chosen = grading::select(picks);
    } catch (const std::invalid_argument& e) {
        return bad(e.what());
    }
    const std::filesystem::path logs = std::filesystem::path(GRADE_BUILD_DIR) / "grade-logs";
    std::filesystem::create_directories(logs);
    if (!mutants.empty() || !attempts.empty()) {
        try {
            return !mutants.empty() ? check_mutants(mutants, chosen, limits, logs)
                                    : check_attempts(attempts, chosen, limits, logs);
        } catch (const std::invalid_argument& e) {
            return bad(e.what());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "grade: %s\n", e.what());
            return 1;
        }
    }

    std::vector<grading::Result> results;
    for (const grading::Exercise& e : chosen) {
        std::fprintf(stderr, "grading %s %s ...\n", e.id().c_str(), e.name.c_str());
        if (build) {
            const std::string errors = grading::build_exercise(e, GRADE_BUILD_DIR, (logs / (e.id() + ".build.log")).string());
            if (!errors.empty()) {
                grading::Result r;
                r.exercise = e;
                r.why = "does not compile:";
                r.detail = {errors};
                results.push_back(r);
                continue;
            }
        }
        const std::string program = programs + "/" + e.id() + "_tests";
        results.push_back(grading::run_exercise(e, {program}, limits, (logs / (e.id() + ".log")).string()));
    }

    std::fputs(grading::scoreboard(results).c_str(), stdout);
    if (!json_path.empty()) {
        std::ofstream out(json_path);
        out << grading::to_json(results) << "\n";
        if (!out) {
            std::fprintf(stderr, "grade: cannot write %s\n", json_path.c_str());
            return 1;
        }
    }
    const grading::Status wanted = expect_not_started ? grading::Status::not_started : grading::Status::passed;
    for (const grading::Result& r : results)
        if (r.status != wanted) return 1;
    return 0;
}
