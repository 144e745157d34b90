// The one Catch2 main() shared by every test executable (object library
// catch_main in tests/CMakeLists.txt), for Catch2 version 2 or 3
// (tests/catch.h). Version 3 has no CATCH_CONFIG_MAIN.
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
