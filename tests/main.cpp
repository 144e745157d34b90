// The one Catch2 main() shared by every test executable (object library
// catch_main in tests/CMakeLists.txt).
#include "catch_main.h"
