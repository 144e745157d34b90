// The grader itself (grading.h, grade.cpp): choosing exercises, and each
// exercise run alone, so that one that crashes, aborts or never ends fails
// by itself while the others are still graded.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "grading.h"
#include "nn/json.h"

namespace {

std::filesystem::path scratch(const std::string& name) {
    const auto path = std::filesystem::temp_directory_path() / ("grading_tests_" + std::to_string(::getpid()) + "_" + name);
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
    return path;
}

grading::Result run(const std::string& mode, double timeout = 10) {
    const auto dir = scratch(mode);
    return grading::run_exercise(grading::exercises()[0], {FAKE_EXERCISE, mode}, timeout, (dir / "log").string());
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
    const grading::Result pass = run("pass");
    CHECK(pass.status == grading::Status::passed);
    CHECK(pass.tests_run == 1);

    const grading::Result stub = run("not_started");
    CHECK(stub.status == grading::Status::not_started);

    const grading::Result fail = run("fail");
    CHECK(fail.status == grading::Status::failed);
    const std::string detail = [&] {
        std::string all;
        for (const auto& line : fail.detail) all += line + "\n";
        return all;
    }();
    CHECK_THAT(detail, Catch::Contains("CHECK( score == 0.5403 )") && Catch::Contains("0.8415 == 0.5403") &&
                           Catch::Contains("expected 0.5403, got 0.8415"));
    CHECK_THAT(grading::scoreboard({fail}), Catch::Contains("hint: §4.4"));
}

TEST_CASE("a crash, an abort or an endless loop fails that exercise only", "[grading]") {
    const grading::Result crash = run("crash");
    CHECK(crash.status == grading::Status::failed);
    // (Under AddressSanitizer the sanitizer catches the signal and exits
    // with a status instead: still a crash in that test.)
    CHECK_THAT(crash.why, Catch::Contains("crashed") && Catch::Contains("fake test"));
#if !defined(__SANITIZE_ADDRESS__)
    CHECK_THAT(crash.why, Catch::Contains("SIGSEGV"));
#endif

    const grading::Result abort = run("abort");
    CHECK(abort.status == grading::Status::failed);
    CHECK_THAT(abort.why, Catch::Contains("crashed"));

    const auto start = std::chrono::steady_clock::now();
    const grading::Result hang = run("hang", 0.5);
    CHECK(hang.status == grading::Status::failed);
    CHECK_THAT(hang.why, Catch::Contains("timed out after 0.5 s"));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("grade runs every exercise alone and reports each", "[grading]") {
    // ex01 crashes, ex02 hangs, ex03 passes, ex04 is a stub, ex05 fails.
    const auto dir = scratch("programs");
    for (const char* id : {"ex01", "ex02", "ex03", "ex04", "ex05"})
        std::filesystem::create_symlink(FAKE_EXERCISE, dir / (std::string(id) + "_tests"));
    const auto json_path = dir / "scoreboard.json";
    const std::string command = std::string(GRADE_PROGRAM) + " --no-build --timeout 0.5 --programs " + dir.string() +
                                " --json " + json_path.string() + " 1 2 3 4 5 > " + (dir / "out.txt").string() +
                                " 2>&1";
    const int status = std::system(command.c_str());
    CHECK(WEXITSTATUS(status) == 1);

    std::ifstream in(json_path);
    std::stringstream text;
    text << in.rdbuf();
    const json::Value board = json::parse(text.str());
    const auto& rows = board.at("exercises").as_array();
    REQUIRE(rows.size() == 5);
    CHECK(rows[0].at("status").as_string() == "failed");
    CHECK_THAT(rows[0].at("why").as_string(), Catch::Contains("crashed"));
    CHECK(rows[1].at("status").as_string() == "failed");
    CHECK_THAT(rows[1].at("why").as_string(), Catch::Contains("timed out"));
    CHECK(rows[2].at("status").as_string() == "passed");
    CHECK(rows[3].at("status").as_string() == "not started");
    CHECK(rows[4].at("status").as_string() == "failed");
    std::filesystem::remove_all(dir);
}

TEST_CASE("grade refuses bad arguments with exit status 2", "[grading]") {
    for (const char* args : {"--timeout", "--timeout zero", "--bogus", "nonsense"}) {
        INFO(args);
        const int status = std::system((std::string(GRADE_PROGRAM) + " --no-build " + args + " > /dev/null 2>&1").c_str());
        CHECK(WEXITSTATUS(status) == 2);
    }
}
