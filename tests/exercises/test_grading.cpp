// The grader itself (grading.h, grade.cpp): choosing exercises, and each
// exercise run alone, so that one that crashes, aborts, never ends, ends
// early, forges its report, prints or allocates without end fails by itself
// (with a message saying so) while the others are still graded.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include "catch.h"
#include "scratch.h"

#include "grading.h"

namespace {

// An empty directory that stays until the test process ends.
std::filesystem::path scratch(const std::string& name) {
    const auto path = test::scratch_path(name);
    std::filesystem::create_directories(path);
    return path;
}

// The fake exercise's tests with this tag, graded.
grading::Result run(const std::string& tag, grading::Limits limits = {}) {
    const auto dir = scratch(tag.substr(1, tag.size() - 2));
    return grading::run_exercise(grading::exercises()[0], {FAKE_EXERCISE, tag}, limits, (dir / "log").string());
}

std::string text_of(const grading::Result& r) {
    std::string all = r.why + "\n";
    for (const auto& line : r.detail) all += line + "\n";
    return all;
}

}  // namespace

TEST_CASE("grade chooses exercises by number, id or part of a name", "[grading]") {
    CHECK(grading::exercises().size() == 18);
    CHECK(grading::select({}).size() == 18);
    CHECK(grading::select({"7"}).at(0).name == "wrong_rope");
    CHECK(grading::select({"ex07"}).at(0).number == 7);
    CHECK(grading::select({"07"}).at(0).number == 7);
    std::vector<int> rope;
    for (const auto& e : grading::select({"rope"})) rope.push_back(e.number);
    CHECK(rope == std::vector<int>{1, 2, 7, 11});
    CHECK(grading::select({"9", "3", "9"}).size() == 2);
    CHECK(grading::select({"3-9"}).size() == 7);
    CHECK(grading::select({"ex11-18"}).front().number == 11);
    CHECK_THROWS_WITH(grading::select({"transformer"}), Catch::Contains("no exercise matches 'transformer'"));
    CHECK_THROWS_AS(grading::select({"19"}), std::invalid_argument);
}

TEST_CASE("a passing, a failing and an untouched exercise are told apart", "[grading]") {
    const grading::Result pass = run("[pass]");
    CHECK(pass.status == grading::Status::passed);
    CHECK(pass.tests_passed == 2);
    CHECK(pass.tests_registered == 2);

    const grading::Result stub = run("[not_started]");
    CHECK(stub.status == grading::Status::not_started);

    const grading::Result fail = run("[fail]");
    CHECK(fail.status == grading::Status::failed);
    CHECK_THAT(text_of(fail), Catch::Contains("CHECK( ex99::score(1.6830) == 0.5403 )") &&
                                  Catch::Contains("0.8415 == 0.5403") &&
                                  Catch::Contains("expected 0.5403, got 0.8415"));
    CHECK_THAT(grading::scoreboard({fail}), Catch::Contains("hint: §4.4"));
}

TEST_CASE("a crash, an abort or an endless loop fails that exercise only", "[grading]") {
    const grading::Result crash = run("[crash]");
    CHECK(crash.status == grading::Status::failed);
    // (Under AddressSanitizer the sanitizer catches the signal and exits
    // with a status instead: still a crash in that test.)
    CHECK_THAT(crash.why, Catch::Contains("crashed") && Catch::Contains("fake crashes"));
#if !defined(__SANITIZE_ADDRESS__)
    CHECK_THAT(crash.why, Catch::Contains("SIGSEGV"));
#endif

    const grading::Result abort = run("[abort]");
    CHECK(abort.status == grading::Status::failed);
    CHECK_THAT(abort.why, Catch::Contains("crashed") && Catch::Contains("fake aborts"));

    const auto start = std::chrono::steady_clock::now();
    grading::Limits half_a_second;
    half_a_second.seconds = 0.5;
    const grading::Result hang = run("[hang]", half_a_second);
    CHECK(hang.status == grading::Status::failed);
    CHECK_THAT(hang.why, Catch::Contains("timed out after 0.5 s") && Catch::Contains("fake never ends"));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("the first failing check is told first, whatever stops the run later", "[grading]") {
    // [fail_then_crash]: a check fails with its diagnosis, then a later
    // test crashes (or never ends). The check is what went wrong first, on
    // every run; the crash is told after it, not in its place.
    const grading::Result crash = run("[fail_then_crash]");
    CHECK(crash.status == grading::Status::failed);
    CHECK_THAT(crash.why, Catch::Contains("the first failing check"));
    CHECK_THAT(text_of(crash), Catch::Contains("expected 0.5403, got 0.8415") &&
                                   Catch::Contains("later: crashed in test \"fake crashes\""));
    grading::Limits half_a_second;
    half_a_second.seconds = 0.5;
    const grading::Result hang = run("[fail_then_hang]", half_a_second);
    CHECK(hang.status == grading::Status::failed);
    CHECK_THAT(hang.why, Catch::Contains("the first failing check"));
    CHECK_THAT(text_of(hang), Catch::Contains("expected 0.5403, got 0.8415") &&
                                  Catch::Contains("later: timed out after 0.5 s in test \"fake never ends\""));
}

TEST_CASE("crashed is said only of a signal during a test", "[grading]") {
    // An abort at exit, after every test ended: not a crash in the last test.
    const grading::Result at_exit = run("[abort_at_exit]");
    CHECK(at_exit.status == grading::Status::failed);
    CHECK_THAT(at_exit.why, Catch::Contains("every test ran to its end (1 of 1 passed)") &&
                                Catch::Contains("SIGABRT") && Catch::Contains("as it shut down"));
    CHECK_THAT(at_exit.why, !Catch::Contains("crashed"));
    // The report channel closed, or another file put on its descriptor:
    // the report stops while the program goes on.
    for (const char* tag : {"[silence_close]", "[silence]"}) {
        INFO(tag);
        const grading::Result r = run(tag);
        CHECK(r.status == grading::Status::failed);
        CHECK_THAT(r.why, Catch::Contains("the grading report went silent in test \"fake ") &&
                              Catch::Contains("closed or replaced the grader's report channel"));
        CHECK_THAT(r.why, !Catch::Contains("crashed"));
    }
}

TEST_CASE("a program that ends early with status 0 has not passed", "[grading]") {
    // [early]: a passing test, then exit(0), then a test that never runs.
    const grading::Result early = run("[early]");
    CHECK(early.status == grading::Status::failed);
    CHECK_THAT(early.why, Catch::Contains("ended the program early") &&
                              Catch::Contains("fake ends the program early with status 0") &&
                              Catch::Contains("1 of 3 tests ran"));
    CHECK(early.tests_passed == 1);
    CHECK(early.tests_registered == 3);
    for (const char* tag : {"[underscore_exit]", "[quick_exit]"}) {
        INFO(tag);
        const grading::Result r = run(tag);
        CHECK(r.status == grading::Status::failed);
        CHECK_THAT(r.why, Catch::Contains("ended the program early"));
    }
}

TEST_CASE("a report line the listener did not write fails the exercise", "[grading]") {
    // The student's code finds the channel's socket and writes a passing
    // run into it, then ends (or goes on and lets the real tests pass).
    for (const char* tag : {"[forge]", "[forge_quietly]"}) {
        INFO(tag);
        const grading::Result r = run(tag);
        CHECK(r.status == grading::Status::failed);
        CHECK_THAT(r.why, Catch::Contains("did not write"));
        CHECK_THAT(text_of(r), Catch::Contains("\"forged\""));
    }
}

TEST_CASE("printing or allocating without end is stopped with a message", "[grading]") {
    grading::Limits small;
    small.output_bytes = 1 << 20;
    const grading::Result print = run("[print]", small);
    CHECK(print.status == grading::Status::failed);
    CHECK_THAT(print.why, Catch::Contains("printed too much") && Catch::Contains("fake prints without end") &&
                              Catch::Contains("1 MiB"));
    CHECK(std::filesystem::file_size(test::scratch_root() / "print" / "log") <= (2 << 20));

    if (!grading::memory_limit_enforced()) {
        WARN("no /proc here: the memory limit is not applied, so its test would allocate for 120 s");
        return;
    }
    small.memory_bytes = 256 << 20;
    const grading::Result memory = run("[memory]", small);
    CHECK(memory.status == grading::Status::failed);
    CHECK_THAT(memory.why,
               Catch::Contains("too much memory") && Catch::Contains("fake eats memory") && Catch::Contains("256 MiB"));
}

TEST_CASE("an exception names the exercise function that threw it", "[grading]") {
    const grading::Result thrown_int = run("[int]");
    CHECK(thrown_int.status == grading::Status::failed);
    CHECK_THAT(text_of(thrown_int), Catch::Contains("not a std::exception"));
    const grading::Result out_of_range = run("[std]");
    CHECK_THAT(text_of(out_of_range), Catch::Contains("vector"));
#if !defined(__SANITIZE_ADDRESS__)  // the sanitizers take over the runtime's throw themselves
    CHECK_THAT(text_of(thrown_int), Catch::Contains("ex99::throws_an_int threw an exception of type int"));
    CHECK_THAT(text_of(out_of_range), Catch::Contains("ex99::throws_out_of_range threw std::out_of_range"));
#endif
}

TEST_CASE("grade runs every exercise alone and reports each", "[grading]") {
    // ex01 crashes, ex02 hangs, ex03 passes, ex04 is a stub, ex05 fails. The
    // time limit leaves a crash under the sanitizers on a busy machine (over
    // half a second to report) time to be a crash.
    const auto dir = scratch("programs");
    const std::vector<std::pair<const char*, const char*>> programs{
        {"ex01", "[crash]"}, {"ex02", "[hang]"}, {"ex03", "[pass]"}, {"ex04", "[not_started]"}, {"ex05", "[fail]"}};
    for (const auto& [id, tag] : programs) {
        const auto path = dir / (std::string(id) + "_tests");
        std::ofstream(path) << "#!/bin/sh\nexec " << FAKE_EXERCISE << " '" << tag << "'\n";
        std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    }
    const auto json_path = dir / "scoreboard.json";
    const std::string command = std::string(GRADE_PROGRAM) + " --no-build --timeout 3 --programs " + dir.string() +
                                " --json " + json_path.string() + " 1 2 3 4 5 > " + (dir / "out.txt").string() +
                                " 2>&1";
    const int status = std::system(command.c_str());
    CHECK(WEXITSTATUS(status) == 1);

    std::ifstream in(json_path);
    std::stringstream text;
    text << in.rdbuf();
    const auto board = nlohmann::ordered_json::parse(text.str());
    const auto& rows = board.at("exercises");
    REQUIRE(rows.size() == 5);
    CHECK(rows[0].at("status") == "failed");
    CHECK_THAT(rows[0].at("why").get<std::string>(), Catch::Contains("crashed"));
    CHECK(rows[1].at("status") == "failed");
    CHECK_THAT(rows[1].at("why").get<std::string>(), Catch::Contains("timed out"));
    CHECK(rows[2].at("status") == "passed");
    CHECK(rows[2].at("tests_registered") == 2);
    CHECK(rows[3].at("status") == "not started");
    CHECK(rows[4].at("status") == "failed");
    std::filesystem::remove_all(dir);
}

TEST_CASE("an attempt may declare what its failure must say", "[grading]") {
    // grade --attempts catches a wrong attempt only if its scoreboard text
    // holds the declared message: the diagnosis a student reads is checked.
    CHECK(grading::declared_message("// Attempt (wrong): ...\n// grade says: you ignored the window  \n#include") ==
          "you ignored the window");
    CHECK(grading::declared_message("// Attempt (wrong): says nothing\n#include \"x.h\"\n") == "");
    CHECK(grading::declared_message("int x;  // grade says: not at the start of a line\n") == "");
    grading::Result r;
    r.why = "1 of 3 tests passed; the first failing check:";
    r.detail = {"in test \"t\"", "θ changed between calls"};
    CHECK_THAT(grading::full_text(r), Catch::Contains("first failing check") && Catch::Contains("θ changed"));
}

TEST_CASE("every line of a multi-line message keeps the scoreboard's indentation", "[grading]") {
    grading::Result r;
    r.exercise = grading::exercises()[0];
    r.why = "1 of 3 tests passed; the first failing check:";
    r.detail = {"in test \"t\"", "expected\n  [1, 2]\ngot\n  [2, 1]"};
    const std::string board = grading::scoreboard({r});
    CHECK_THAT(board, Catch::Contains("\n         expected\n           [1, 2]\n         got\n           [2, 1]\n"));
}

TEST_CASE("grade refuses bad arguments with exit status 2", "[grading]") {
    for (const char* args : {"--timeout", "--timeout zero", "--timeout 5s", "--max-memory -1", "--max-output",
                             "--bogus", "nonsense", "--attempts /nonexistent"}) {
        INFO(args);
        const int status =
            std::system((std::string(GRADE_PROGRAM) + " --no-build " + args + " > /dev/null 2>&1").c_str());
        CHECK(WEXITSTATUS(status) == 2);
    }
}

namespace {

// grade as a shell runs it: its exit status and what it printed.
struct GradeRun {
    int status = 0;
    std::string out, err;
};

GradeRun run_grade(const std::string& args) {
    const auto dir = scratch("grade_cli");
    const std::string command =
        std::string(GRADE_PROGRAM) + " " + args + " > " + (dir / "out").string() + " 2> " + (dir / "err").string();
    GradeRun r;
    r.status = WEXITSTATUS(std::system(command.c_str()));
    for (auto [name, text] : {std::pair{"out", &r.out}, std::pair{"err", &r.err}}) {
        std::ifstream in(dir / name);
        std::stringstream all;
        all << in.rdbuf();
        *text = all.str();
    }
    std::filesystem::remove_all(dir);
    return r;
}

}  // namespace

TEST_CASE("grade: a bad argument is one line naming it, exit status 2", "[grading]") {
    const std::string source = GRADE_SOURCE_DIR;
    const auto fifo_dir = scratch("grade_fifo");
    const std::string fifo = (fifo_dir / "board.json").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);  // --json must never replace it with a regular file
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--bogus", "not expected: --bogus"},
        {"--timeout 5s", "--timeout: wants a number > 0, got '5s'"},
        {"--timeout 2e6", "--timeout: must be at most 1e+06, got 2e6"},  // the range
        // a decimal, the whole text: what std::from_chars reads, on every standard library
        {"--timeout +1", "--timeout: wants a number > 0, got '+1'"},
        {"--timeout 1e", "--timeout: wants a number > 0, got '1e'"},
        {"--timeout inf", "--timeout: wants a number > 0, got 'inf'"},
        {"--timeout 1e999", "--timeout: wants a number > 0, got '1e999'"},
        {"--timeout 0x10", "--timeout: wants a number > 0, got '0x10'"},
        {"--max-memory 0", "--max-memory: wants a number > 0, got '0'"},
        {"--json --no-build", "--json: needs a value, got the flag '--no-build'"},
        {"--programs /nonexistent", "--programs: Directory does not exist: /nonexistent"},
        {"--json " + fifo, "exists and is not a regular file"},
        {"--json " + test::unwritable_folder() + "/grade.json",
         "cannot write in the folder '" + test::unwritable_folder() + "'"},
        // The CI modes are one at a time.
        {"--mutants " + source + "/tests/exercises/mutants.txt --attempts " + source + "/tests/exercises/attempts",
         "--mutants excludes --attempts"},
        {"--expect-not-started --attempts " + source + "/tests/exercises/attempts", "excludes"},
        {"nonsense", "no exercise matches 'nonsense'"},
        {"''", "an empty exercise name"},  // would match every name
        // a folder without the test programs: not the student's failure
        {"--programs " + fifo_dir.string() + " 1", "has no test program ex01_tests"}};
    for (const auto& [args, says] : cases) {
        const GradeRun r = run_grade("--no-build " + args);
        INFO("grade --no-build " << args << "\nstderr: " << r.err);
        CHECK(r.status == 2);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_THAT(r.err, Catch::StartsWith("grade: ") && Catch::Contains(says) &&
                              Catch::EndsWith("(grade --help shows the usage)\n"));
        CHECK(r.out.empty());
    }
    CHECK(std::filesystem::is_fifo(fifo));
    std::filesystem::remove_all(fifo_dir);
    // and the decimals it takes, in every form from_chars reads
    for (const char* args : {"--timeout 0.5", "--timeout .5", "--timeout 5.", "--timeout 1e-3", "--max-memory 2E3"}) {
        const GradeRun r = run_grade(std::string("--no-build --help ") + args);
        INFO("grade --no-build --help " << args << "\nstderr: " << r.err);
        CHECK(r.status == 0);
    }
}

TEST_CASE("grade --help: CLI11's help on stdout, exit status 0", "[grading]") {
    for (const char* flag : {"--help", "-h"}) {
        const GradeRun r = run_grade(flag);
        CHECK(r.status == 0);
        CHECK(r.err.empty());
        for (const char* word :
             {"Usage: grade [OPTIONS] [exercise...]", "--timeout SECONDS", "--max-output MIB", "--max-memory MIB",
              "--no-build", "--programs DIR", "--expect-not-started", "--mutants FILE", "--attempts DIR",
              "exit status: 0 when every graded exercise passed"})
            CHECK_THAT(r.out, Catch::Contains(word));
    }
}
