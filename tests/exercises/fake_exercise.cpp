// A stand-in for an exercise's test program, for the grader's own tests
// (test_grading.cpp): real Catch2 tests with the real listener
// (grading_listener.cpp), each behaving like a student's code that passes,
// fails, is a stub, or misbehaves. The grading tests pick them by tag:
//   fake_exercise "[pass]"   fake_exercise "[crash]"   ...
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "catch.h"

// The "student's" functions (fake_student.cpp, built like a student's file).
namespace ex99 {
double score(double x);
double stub(double x);
double throws_an_int(double x);
double throws_out_of_range(double x);
void forge_a_pass();
void abort_at_exit();
void silence_the_report(bool close_it);
}  // namespace ex99

TEST_CASE("fake passes", "[pass][early][forge]") { CHECK(ex99::score(1.0) == 0.5); }

TEST_CASE("fake fails", "[fail][fail_then_crash][fail_then_hang]") {
    INFO("expected 0.5403, got 0.8415");
    CHECK(ex99::score(1.6830) == 0.5403);
}

TEST_CASE("fake is a stub", "[not_started]") { CHECK(ex99::stub(1.0) == 0.5); }

TEST_CASE("fake crashes", "[crash][fail_then_crash]") { std::raise(SIGSEGV); }
TEST_CASE("fake aborts", "[abort]") { std::abort(); }
TEST_CASE("fake never ends", "[hang][fail_then_hang]") {
    for (;;) pause();
}

TEST_CASE("fake ends the program early with status 0", "[early]") { std::exit(0); }
TEST_CASE("fake ends the program with _exit(0)", "[underscore_exit]") { _exit(0); }
TEST_CASE("fake ends the program with quick_exit(0)", "[quick_exit]") { std::quick_exit(0); }
TEST_CASE("fake passes after the others", "[pass][early]") { CHECK(ex99::score(2.0) == 1.0); }

TEST_CASE("fake forges a passing report and ends", "[forge]") {
    ex99::forge_a_pass();
    _exit(0);
}
TEST_CASE("fake forges a line and goes on", "[forge_quietly]") {
    ex99::forge_a_pass();
    CHECK(ex99::score(1.0) == 0.5);
}

TEST_CASE("fake aborts after its last test", "[abort_at_exit]") {
    ex99::abort_at_exit();
    CHECK(ex99::score(1.0) == 0.5);
}

TEST_CASE("fake closes the grader's channel", "[silence_close]") {
    ex99::silence_the_report(true);
    CHECK(ex99::score(1.0) == 0.5);
}
TEST_CASE("fake puts /dev/null in place of the grader's channel", "[silence]") {
    ex99::silence_the_report(false);
    CHECK(ex99::score(1.0) == 0.5);
}
TEST_CASE("fake passes after the silence", "[silence][silence_close]") { CHECK(ex99::score(2.0) == 1.0); }

TEST_CASE("fake prints without end", "[print]") {
    const std::string line(1000, 'x');
    for (;;) std::puts(line.c_str());
}

TEST_CASE("fake eats memory", "[memory]") {
    std::vector<std::vector<char>> blocks;
    for (;;) blocks.emplace_back(size_t{64} << 20, 'x');  // 64 MiB a block, every page touched
}

TEST_CASE("fake throws an int", "[int]") { CHECK(ex99::throws_an_int(1.0) == 1.0); }
TEST_CASE("fake throws std::out_of_range", "[std]") { CHECK(ex99::throws_out_of_range(1.0) == 1.0); }
