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
//
// A channel the student's code closed, shut down or replaced (another file
// dup2'ed onto its descriptor) cannot carry the rest of the report: the
// listener notices at its next event (the descriptor no longer names the
// socket it opened, or the socket refuses the line) and ends the program at
// once with the exit status kLostStatus, so that the grader can say what
// happened instead of guessing from a report that stopped.
namespace grading::report_channel {

inline constexpr const char* kVariable = "GRADE_REPORT_FD";
inline constexpr int kKeyLength = 32;   // hexadecimal digits
inline constexpr int kLostStatus = 86;  // the listener's exit status when the channel is gone

}  // namespace grading::report_channel
