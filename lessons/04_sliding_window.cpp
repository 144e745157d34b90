// Lesson 04, sliding-window attention (lecture 4 §6): the masks, three
// implementations and their cost, the receptive field of stacked windows,
// the rolling buffer cache (and the bug the lecture ran into), and what a
// too-small window does to subject-verb agreement. The parts live in
// sliding_window/, where tests/lessons runs them too.
#include "lessons/sliding_window/parts.h"

int main(int argc, char** argv) { return lessons::run_lesson(argc, argv, lessons::sliding_window::lesson()); }
