#pragma once
// The error every untouched stub throws. The grader recognises it and
// reports the exercise as "not started" instead of failed.
//
//     double rope_score(...) { throw exercises::not_implemented("ex01 rope_by_hand"); }
#include <stdexcept>
#include <string>

namespace exercises {

struct not_implemented : std::logic_error {
    explicit not_implemented(const std::string& what) : std::logic_error("not implemented: " + what) {}
};

}  // namespace exercises
