// grade: build and run the exercises' grading tests and print the scoreboard.
//
//   ./grade                 every exercise
//   ./grade 7 | ex07 | 3-9 | rope   one exercise, a range, or every exercise whose name contains "rope"
//   ./grade --json FILE     also write the scoreboard as JSON
//   ./grade --timeout S     seconds each exercise may run (default 120)
//   ./grade --no-build      run the test programs as they are
//   ./grade --programs DIR  where the exNN_tests programs are (default: this build's)
//
// For CI, which proves the tests mean something:
//   grade --expect-not-started   exit 0 only if every exercise is "not started"
//                                (the untouched stubs)
//   grade --mutants FILE         in a build whose EXERCISE_CANDIDATES is a
//                                scratch folder: each deliberately broken
//                                solution in FILE must fail its tests
//
// Exit status: 0 when every graded exercise passed, 1 otherwise, 2 on bad
// arguments. Logs of each build and run are in <build>/grade-logs/.
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
    "usage: grade [EXERCISE ...] [--json FILE] [--timeout SECONDS] [--no-build] [--programs DIR]\n"
    "             [--expect-not-started] [--mutants FILE]\n"
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

// Every mutant applied in turn to a copy of its solution in the candidates
// folder, built and graded; a mutant whose exercise still passes survived.
int check_mutants(const std::string& file, double timeout, const std::filesystem::path& logs) {
    namespace fs = std::filesystem;
    const fs::path candidates = GRADE_CANDIDATES, solutions = fs::path(GRADE_SOURCE_DIR) / "solutions";
    if (fs::equivalent(candidates, solutions) || fs::equivalent(candidates, fs::path(GRADE_SOURCE_DIR) / "exercises"))
        return bad("--mutants needs a build configured with -DEXERCISE_CANDIDATES=<a scratch folder>, "
                   "not exercises/ or solutions/ (they are never modified)");
    const std::vector<grading::Mutant> mutants = grading::read_mutants(file);
    for (const grading::Exercise& e : grading::exercises()) {
        const std::string stem = e.id() + "_" + e.name + ".cpp";
        if (fs::exists(solutions / stem)) fs::copy_file(solutions / stem, candidates / stem, fs::copy_options::overwrite_existing);
    }
    int survived = 0;
    std::vector<int> count(grading::exercises().size() + 1, 0);
    for (const grading::Mutant& m : mutants) {
        const grading::Exercise& e = grading::exercises().at(static_cast<size_t>(m.number - 1));
        const fs::path target = candidates / (e.id() + "_" + e.name + ".cpp");
        const std::string original = read_file(solutions / target.filename());
        write_file(target, grading::apply(m, original));
        std::string verdict;
        const std::string errors = grading::build_exercise(e, GRADE_BUILD_DIR, (logs / "mutant.build.log").string());
        if (!errors.empty()) {
            verdict = "caught (does not compile)";
        } else {
            const grading::Result r =
                grading::run_exercise(e, {std::string(GRADE_BUILD_DIR) + "/tests/exercises/" + e.id() + "_tests"},
                                      timeout, (logs / "mutant.log").string());
            if (r.status == grading::Status::passed) {
                verdict = "SURVIVED: no test fails";
                ++survived;
            } else {
                verdict = "caught " + (r.detail.empty() ? r.why : r.detail.front());
            }
        }
        ++count[static_cast<size_t>(m.number)];
        std::printf("%s %-45s %s\n", e.id().c_str(), m.what.c_str(), verdict.c_str());
        std::fflush(stdout);
        write_file(target, original);
    }
    // Leave every exercise program built from the plain solutions again.
    for (const grading::Exercise& e : grading::exercises())
        if (count[static_cast<size_t>(e.number)] > 0)
            grading::build_exercise(e, GRADE_BUILD_DIR, (logs / "mutant.build.log").string());
    for (const grading::Exercise& e : grading::exercises())
        if (count[static_cast<size_t>(e.number)] < 2 && fs::exists(solutions / (e.id() + "_" + e.name + ".cpp")))
            std::printf("%s has %d mutant(s); every exercise needs at least two\n", e.id().c_str(),
                        count[static_cast<size_t>(e.number)]), ++survived;
    std::printf("%zu mutants, %d problem(s)\n", mutants.size(), survived);
    return survived == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> picks;
    std::string json_path, programs = std::string(GRADE_BUILD_DIR) + "/tests/exercises";
    std::string mutants;
    double timeout = 120;
    bool build = true, expect_not_started = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--help" || arg == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (arg == "--json" && has_value) {
            json_path = argv[++i];
        } else if (arg == "--timeout" && has_value) {
            try {
                timeout = std::stod(argv[++i]);
            } catch (const std::exception&) {
                return bad(fmt::format("--timeout needs a number of seconds, got '{}'", argv[i]));
            }
            if (!(timeout > 0)) return bad("--timeout must be positive");
        } else if (arg == "--programs" && has_value) {
            programs = argv[++i];
        } else if (arg == "--no-build") {
            build = false;
        } else if (arg == "--expect-not-started") {
            expect_not_started = true;
        } else if (arg == "--mutants" && has_value) {
            mutants = argv[++i];
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
    if (!mutants.empty()) {
        try {
            return check_mutants(mutants, timeout, logs);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s\n", e.what());
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
        results.push_back(grading::run_exercise(e, {program}, timeout, (logs / (e.id() + ".log")).string()));
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
