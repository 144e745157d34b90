#pragma once
// Catch2 for every test, version 2 (Debian 12's catch2 package) or 3
// (Homebrew's, Ubuntu 24.04's): the tests include this header, not Catch's
// own, and use version 2's names (Approx, Catch::Contains, StartsWith,
// EndsWith), which version 3 keeps under Catch::Matchers (its Contains
// is ContainsSubstring). CMake defines AG_CATCH2_MAJOR from the Catch2 it
// found.
#if AG_CATCH2_MAJOR >= 3
#include <string>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

namespace Catch {
inline Matchers::StringContainsMatcher Contains(const std::string& s, CaseSensitive cs = CaseSensitive::Yes) {
    return Matchers::ContainsSubstring(s, cs);
}
using Matchers::EndsWith;
using Matchers::StartsWith;
}  // namespace Catch
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
