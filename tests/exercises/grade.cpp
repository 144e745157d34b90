// grade: build and run the exercises' grading tests and print the scoreboard.
//
//   ./grade                 every exercise
//   ./grade 7 | ex07 | 3-9 | rope   one exercise, a range, or every exercise whose name contains "rope"
//
// Every flag (the limits, --json, and CI's --expect-not-started, --mutants
// and --attempts, which prove the tests mean something) is declared once,
// with its help and its check, in main(): ./grade --help lists them.
//
// Exit status: 0 when every graded exercise passed, 1 otherwise, 2 on bad
// arguments. Logs of each build and run are in <build>/grade-logs/.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "grading.h"
#include "lessons/common/book.h"
#include "lessons/common/cli.h"

namespace {

// A mistake in what was asked (a flag, an exercise, a mutants file): one
// line, exit status 2.
int bad(const std::string& message) {
    std::fprintf(stderr, "%s\n", lessons::usage_error("grade", message).c_str());
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

// exNN_<name>.cpp: the exercise's file, in exercises/, solutions/ or a
// candidates folder.
std::string source_name(const grading::Exercise& e) { return e.id() + "_" + e.name + ".cpp"; }

// The candidates folder of a build made for checking the tests
// (-DEXERCISE_CANDIDATES=<a scratch folder>), filled with the solutions.
std::filesystem::path scratch_candidates() {
    namespace fs = std::filesystem;
    const fs::path candidates = GRADE_CANDIDATES, solutions = fs::path(GRADE_SOURCE_DIR) / "solutions";
    if (fs::equivalent(candidates, solutions) || fs::equivalent(candidates, fs::path(GRADE_SOURCE_DIR) / "exercises"))
        throw std::invalid_argument(
            "--mutants and --attempts need a build configured with "
            "-DEXERCISE_CANDIDATES=<a scratch folder>, not exercises/ or solutions/ (they are "
            "never modified)");
    for (const grading::Exercise& e : grading::exercises()) {
        const std::string stem = source_name(e);
        if (fs::exists(solutions / stem))
            fs::copy_file(solutions / stem, candidates / stem, fs::copy_options::overwrite_existing);
    }
    return candidates;
}

// A file graded in the place of an exercise's solution: a mutant of it, or
// an attempt from the corpus.
struct Variant {
    grading::Exercise exercise;
    std::string name;  // for the report line
    std::string text;
};

// Grades the variants in rounds. Each round puts at most one variant per
// exercise into the candidates folder and builds them all with one `cmake
// --build --target grade_all` (their compiles share the cores: half the time
// of one build each on two), then runs each program alone. A round whose
// build fails builds its exercises one at a time, to tell whose file does
// not compile (and puts the solution back in its place). `report` gets each
// result as it comes. At the end the candidates are the solutions again,
// built.
void grade_variants(const std::vector<Variant>& variants, const grading::Limits& limits,
                    const std::filesystem::path& logs,
                    const std::function<void(const Variant&, const grading::Result&)>& report) {
    namespace fs = std::filesystem;
    const fs::path candidates = GRADE_CANDIDATES, solutions = fs::path(GRADE_SOURCE_DIR) / "solutions";
    // Round r holds the r-th variant of each exercise.
    std::vector<std::vector<const Variant*>> rounds;
    std::map<int, size_t> per_exercise;
    for (const Variant& v : variants) {
        const size_t round = per_exercise[v.exercise.number]++;
        if (round == rounds.size()) rounds.emplace_back();
        rounds[round].push_back(&v);
    }
    const std::string build_log = (logs / "variant.build.log").string();
    for (const std::vector<const Variant*>& round : rounds) {
        for (const Variant* v : round) write_file(candidates / source_name(v->exercise), v->text);
        const bool built = grading::build_target("grade_all", GRADE_BUILD_DIR, build_log).empty();
        for (const Variant* v : round) {
            const std::string errors =
                built ? "" : grading::build_target(v->exercise.id() + "_tests", GRADE_BUILD_DIR, build_log);
            grading::Result r;
            r.exercise = v->exercise;
            if (errors.empty())
                r = grading::run_exercise(
                    v->exercise, {std::string(GRADE_BUILD_DIR) + "/tests/exercises/" + v->exercise.id() + "_tests"},
                    limits, (logs / "variant.log").string());
            else {
                r.why = "does not compile: " + errors;
                // The solution back in its place, or every later round's build fails too.
                write_file(candidates / source_name(v->exercise), read_file(solutions / source_name(v->exercise)));
            }
            report(*v, r);
        }
    }
    for (const grading::Exercise& e : grading::exercises())
        if (per_exercise.count(e.number))
            write_file(candidates / source_name(e), read_file(solutions / source_name(e)));
    grading::build_target("grade_all", GRADE_BUILD_DIR, build_log);
}

// What a failure says in one line: its innermost message (a FAIL's text or
// the INFO nearest the check), else its check, else why. (A "later: …" line,
// what stopped the run after that check, is not the check's message.)
std::string one_line(const grading::Result& r) {
    std::string text = r.why;
    for (const std::string& line : r.detail) {
        const bool framing =
            line.rfind("in test", 0) == 0 || line.rfind("got:", 0) == 0 || line.rfind("later: ", 0) == 0;
        if (!framing && (line.rfind("check:", 0) != 0 || line.find("FAIL") == std::string::npos)) text = line;
    }
    return text.substr(0, text.find('\n'));
}

bool is_chosen(const grading::Exercise& e, const std::vector<grading::Exercise>& chosen) {
    return std::any_of(chosen.begin(), chosen.end(), [&](const grading::Exercise& c) { return c.number == e.number; });
}

// Every mutant applied in turn to its solution: a mutant whose exercise
// still passes survived.
int check_mutants(const std::string& file, const std::vector<grading::Exercise>& chosen, const grading::Limits& limits,
                  const std::filesystem::path& logs) {
    namespace fs = std::filesystem;
    scratch_candidates();
    const fs::path solutions = fs::path(GRADE_SOURCE_DIR) / "solutions";
    std::vector<int> count(grading::exercises().size() + 1, 0);
    std::vector<Variant> variants;
    for (const grading::Mutant& m : grading::read_mutants(file)) {
        const grading::Exercise& e = grading::exercises().at(static_cast<size_t>(m.number - 1));
        ++count[static_cast<size_t>(m.number)];
        if (is_chosen(e, chosen))
            variants.push_back({e, m.what, grading::apply(m, read_file(solutions / source_name(e)))});
    }
    int problems = 0;
    grade_variants(variants, limits, logs, [&](const Variant& v, const grading::Result& r) {
        std::string verdict = "caught: " + one_line(r);
        if (r.status == grading::Status::passed) {
            verdict = "SURVIVED: no test fails";
            ++problems;
        }
        std::printf("%s %-45s %s\n", v.exercise.id().c_str(), v.name.c_str(), verdict.c_str());
        std::fflush(stdout);
    });
    for (const grading::Exercise& e : chosen)
        if (count[static_cast<size_t>(e.number)] < 2)
            std::printf("%s has %d mutant(s); every exercise needs at least two\n", e.id().c_str(),
                        count[static_cast<size_t>(e.number)]),
                ++problems;
    std::printf("%zu mutants, %d problem(s)\n", variants.size(), problems);
    return problems == 0 ? 0 : 1;
}

// The attempts corpus: DIR/exNN_<name>/wrong_*.cpp must compile and fail
// (with the message it declares, if it has a "// grade says: " line),
// DIR/exNN_<name>/right_*.cpp must pass; at least four wrong ones and one
// right one per exercise.
int check_attempts(const std::string& dir, const std::vector<grading::Exercise>& chosen, const grading::Limits& limits,
                   const std::filesystem::path& logs) {
    namespace fs = std::filesystem;
    scratch_candidates();
    for (const fs::directory_entry& entry : fs::directory_iterator(dir))
        if (std::none_of(grading::exercises().begin(), grading::exercises().end(),
                         [&](const grading::Exercise& e) { return entry.path().filename() == e.id() + "_" + e.name; }))
            throw std::invalid_argument("--attempts: " + entry.path().string() +
                                        " is not named after an exercise (exNN_<name>)");
    const auto is_wrong = [](const std::string& name) { return name.rfind("wrong_", 0) == 0; };
    const auto is_right = [](const std::string& name) { return name.rfind("right_", 0) == 0; };
    int problems = 0;
    std::vector<Variant> variants;
    for (const grading::Exercise& e : chosen) {
        const fs::path folder = fs::path(dir) / (e.id() + "_" + e.name);
        std::vector<fs::path> files;
        if (fs::is_directory(folder))
            for (const fs::directory_entry& entry : fs::directory_iterator(folder)) files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        int wrong = 0, right = 0;
        for (const fs::path& file : files) {
            const std::string name = file.filename().string();
            if ((!is_wrong(name) && !is_right(name)) || file.extension() != ".cpp") {
                std::printf("%s %-45s not an attempt: name it wrong_*.cpp or right_*.cpp\n", e.id().c_str(),
                            name.c_str());
                ++problems;
                continue;
            }
            (is_wrong(name) ? wrong : right) += 1;
            variants.push_back({e, name, read_file(file)});
        }
        if (wrong < 4 || right < 1) {
            std::printf("%s has %d wrong and %d right attempt(s); every exercise needs at least four and one\n",
                        e.id().c_str(), wrong, right);
            ++problems;
        }
    }
    grade_variants(variants, limits, logs, [&](const Variant& v, const grading::Result& r) {
        std::string verdict;
        if (is_wrong(v.name)) {
            const bool compiles = r.why.rfind("does not compile", 0) != 0;
            const bool caught = compiles && r.status == grading::Status::failed;
            // A declared message ("// grade says: …") must be in what the student reads.
            const std::string says = grading::declared_message(v.text);
            const bool named = says.empty() || grading::full_text(r).find(says) != std::string::npos;
            verdict = !caught  ? (!compiles ? "BROKEN: a wrong attempt must compile (" + one_line(r) + ")"
                                            : "NOT CAUGHT: graded " + grading::to_string(r.status))
                      : !named ? "MISNAMED: the message does not say \"" + says + "\": " + one_line(r)
                               : "caught: " + one_line(r);
            problems += caught && named ? 0 : 1;
        } else {
            const bool passed = r.status == grading::Status::passed;
            verdict = passed ? "passed" : "REJECTED: " + grading::to_string(r.status) + ": " + one_line(r);
            problems += passed ? 0 : 1;
        }
        std::printf("%s %-45s %s\n", v.exercise.id().c_str(), v.name.c_str(), verdict.c_str());
        std::fflush(stdout);
    });
    std::printf("%zu attempts, %d problem(s)\n", variants.size(), problems);
    return problems == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> picks;
    std::string json_path, programs = std::string(GRADE_BUILD_DIR) + "/tests/exercises";
    std::string mutants, attempts;
    grading::Limits limits;
    double seconds = 0, output_mib = 0, memory_mib = 0;
    bool no_build = false, expect_not_started = false;

    CLI::App app("grade: build and run the exercises' grading tests and print the scoreboard.", "grade");
    app.set_help_flag("-h,--help", "show this help");
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // as before: the last one counts
    app.add_option("exercise", picks,
                   "a number (7), an id (ex07), a range (3-9) or part of a name (rope); none: all 18")
        ->type_name("EXERCISE")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("--json", json_path,
                   "also write the scoreboard as JSON; as out/grade.json it shows on the lesson book's out/index.html")
        ->type_name("FILE")
        ->check(lessons::text_value())
        ->check(lessons::output_file());
    CLI::Option* timeout = app.add_option("--timeout", seconds, "seconds each exercise may run (default 120)")
                               ->type_name("SECONDS")
                               ->transform(lessons::positive_number(1e6));
    CLI::Option* max_output = app.add_option("--max-output", output_mib, "MiB of output each may print (default 4)")
                                  ->type_name("MIB")
                                  ->transform(lessons::positive_number(1e6));
    CLI::Option* max_memory = app.add_option("--max-memory", memory_mib, "MiB of memory each may use (default 2048)")
                                  ->type_name("MIB")
                                  ->transform(lessons::positive_number(1e6));
    app.add_flag("--no-build", no_build, "run the test programs as they are");
    CLI::Option* programs_flag =
        app.add_option("--programs", programs, "where the exNN_tests programs are (default: this build's)")
            ->type_name("DIR")
            ->check(CLI::ExistingDirectory);
    // For CI, which proves the tests mean something; one at a time.
    CLI::Option* not_started = app.add_flag("--expect-not-started", expect_not_started,
                                            "exit 0 only if every exercise is \"not started\" (the untouched stubs)");
    CLI::Option* mutants_flag =
        app.add_option("--mutants", mutants,
                       "each deliberately broken solution in FILE must fail its tests (a build whose "
                       "EXERCISE_CANDIDATES is a scratch folder)")
            ->type_name("FILE")
            ->check(CLI::ExistingFile);
    CLI::Option* attempts_flag =
        app.add_option("--attempts", attempts,
                       "whole files students could have written: DIR/exNN_<name>/wrong_*.cpp must fail, "
                       "right_*.cpp must pass")
            ->type_name("DIR")
            ->check(CLI::ExistingDirectory);
    mutants_flag->excludes(attempts_flag)->excludes(not_started);
    attempts_flag->excludes(not_started);
    app.footer(
        "exit status: 0 when every graded exercise passed, 1 otherwise, 2 on bad arguments. Logs of each\n"
        "build and run are in <build>/grade-logs/.");
    if (const auto status = lessons::parse_command_line(app, argc, argv, "grade")) return *status;
    // Flags not given keep grading::Limits' own values exactly.
    if (*timeout) limits.seconds = seconds;
    if (*max_output) limits.output_bytes = static_cast<int64_t>(output_mib * (1 << 20));
    if (*max_memory) limits.memory_bytes = static_cast<int64_t>(memory_mib * (1 << 20));
    const bool build = !no_build;

    std::vector<grading::Exercise> chosen;
    try {
        chosen = grading::select(picks);
    } catch (const std::invalid_argument& e) {
        return bad(e.what());
    }
    // A folder without the programs is a wrong argument, not the student's failure.
    if (*programs_flag)
        for (const grading::Exercise& e : chosen)
            if (const auto program = std::filesystem::path(programs) / (e.id() + "_tests");
                !std::filesystem::is_regular_file(program) || ::access(program.c_str(), X_OK) != 0)
                return bad("--programs: " + programs + " has no test program " + e.id() +
                           "_tests (they are in <build>/tests/exercises)");
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
            const std::string errors =
                grading::build_target(e.id() + "_tests", GRADE_BUILD_DIR, (logs / (e.id() + ".build.log")).string());
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
        try {
            lessons::book::write_atomically(json_path, grading::to_json(results) + "\n");
            // The lesson book's course page shows the scoreboard written beside it.
            const std::filesystem::path dir = std::filesystem::absolute(json_path).parent_path();
            if (std::filesystem::path(json_path).filename() == "grade.json" &&
                std::filesystem::exists(dir / "index.html")) {
                lessons::book::write_atomically(dir / "index.html", lessons::book::course_page(dir));
                std::printf("updated %s\n", (dir / "index.html").c_str());
            }
        } catch (const std::exception& e) {
            std::fprintf(stderr, "grade: %s\n", e.what());
            return 1;
        }
    }
    const grading::Status wanted = expect_not_started ? grading::Status::not_started : grading::Status::passed;
    for (const grading::Result& r : results)
        if (r.status != wanted) return 1;
    return 0;
}
