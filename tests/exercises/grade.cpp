// grade: build and run the exercises' grading tests and print the scoreboard.
//
//   ./grade                 every exercise
//   ./grade 7 | ex07 | 3-9 | rope   one exercise, a range, or every exercise whose name contains "rope"
//   ./grade --json FILE     also write the scoreboard as JSON
//   ./grade --timeout S     seconds each exercise may run (default 120)
//   ./grade --no-build      run the test programs as they are
//   ./grade --programs DIR  where the exNN_tests programs are (default: this build's)
//
// Exit status: 0 when every graded exercise passed, 1 otherwise, 2 on bad
// arguments. Logs of each build and run are in <build>/grade-logs/.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "grading.h"

namespace {

const char* const kUsage =
    "usage: grade [EXERCISE ...] [--json FILE] [--timeout SECONDS] [--no-build] [--programs DIR]\n"
    "  EXERCISE: a number (7), an id (ex07), a range (3-9) or part of a name (rope); none: all 18\n";

int bad(const std::string& message) {
    std::fprintf(stderr, "grade: %s\n%s", message.c_str(), kUsage);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> picks;
    std::string json_path, programs = std::string(GRADE_BUILD_DIR) + "/tests/exercises";
    double timeout = 120;
    bool build = true;
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
    for (const grading::Result& r : results)
        if (r.status != grading::Status::passed) return 1;
    return 0;
}
