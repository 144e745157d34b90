#pragma once
// How many times `what` stands in `text` (overlapping ones too): what the
// tests count in DOT, HTML and SVG output.
#include <string>

namespace test {

inline size_t occurrences(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}  // namespace test
