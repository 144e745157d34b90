#pragma once
// Which of the student's functions an exception came out of, so that the
// grader can say "ex11::rope_apply threw an int, not a std::exception"
// instead of Catch's bare "Unknown exception".
//
// Every throw in the test program passes through __cxa_throw, the C++
// runtime's entry point for `throw`; thrown_by.cpp defines it, notes the
// thrown type and the call stack, and hands over to the runtime's own.
// The function named is the outermost one of namespace exNN on that stack:
// the exercise's function that the test called (the student's file is
// compiled so that it keeps its own stack frame: no tail calls, no split
// "cold" parts). Builds with sanitizers (which take over __cxa_throw
// themselves) and platforms without the hook report no function.
#include <string>

namespace grading {

struct Thrown {
    std::string type;      // "int", "std::out_of_range"; "" when unknown
    std::string function;  // "ex11::rope_apply"; "" when no exNN function was on the stack
};

// The last exception thrown on this thread.
Thrown last_thrown();

// Whether an exception of this type (as last_thrown() names it) is not a
// std::exception: Catch shows it as "Unknown exception" or as its text.
bool is_foreign_exception(const std::string& catch_message, const std::string& type);

}  // namespace grading
