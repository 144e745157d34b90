// The one Catch2 main() shared by every test executable (object library
// catch_main in tests/CMakeLists.txt).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
