#pragma once
// How an exercise's test program tells the grader what happened, in a way
// the student's code, which runs in the same process, cannot fake.
//
// The grader (grading.cpp) opens a socket pair before it starts the test
// program, writes a fresh random key into its end, and hands the other end
// to the program as descriptor GRADE_REPORT_FD. Before main() runs, and so
// before any of the student's code, the program reads the key off the
// socket and removes the variable from its environment. From then
// on the key exists only in this file's memory: every line the listener
// writes (grading_listener.cpp) starts with it,
//
//     <key> {"event": "start", "test": "..."}
//
// and the grader rejects the whole run if any line does not. Writing to the
// descriptor, reading the environment, or ending the program early (an
// exit(0) half way, after which the listener never writes its "end" event)
// all fail the exercise instead of passing it.
//
// The writing end lives in grading_listener.cpp with internal linkage, so the
// student's code cannot call it by name either.
namespace grading::report_channel {

inline constexpr const char* kVariable = "GRADE_REPORT_FD";
inline constexpr int kKeyLength = 32;  // hexadecimal digits

}  // namespace grading::report_channel
