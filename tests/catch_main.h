#pragma once
// The main() of a Catch2 test program, version 2 or 3 (tests/catch.h):
// included once per program, by tests/main.cpp and by the grading main
// (tests/exercises/grading_main.cpp). Version 3 has no CATCH_CONFIG_MAIN.
#if AG_CATCH2_MAJOR >= 3
#include <catch2/catch_session.hpp>
#include <catch2/catch_tostring.hpp>
// Numbers in failure messages with 10 digits, as version 2 prints them (3
// prints 17: 0.84150000000000003).
int main(int argc, char* argv[]) {
    Catch::StringMaker<double>::precision = 10;
    return Catch::Session().run(argc, argv);
}
#else
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif
