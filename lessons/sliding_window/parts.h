#pragma once
// Lesson 04, sliding-window attention (§6), in five parts:
//   1. the slides' masks for w = 4 and w = 6 (W = 3 and 4 visible tokens);
//   2. naive, for-loop and sliding-chunks implementations: equal outputs,
//      and their cost against T on one thread;
//   3. the receptive field of L windowed layers: exactly L(W-1);
//   4. Mistral's rolling buffer cache = the full forward pass, and the bug
//      of rotating new tokens by the cache length instead of the position;
//   5. two-layer ModernLMs with W = 2, 4, 8 and full attention trained on
//      the farm language: agreement against the subject's distance.
// Parts 3 and 4 use untrained models from every seed 0 … seeds-1; part 5
// trains one model per window and seed (cached in --out DIR/models).
#include "lessons/common/lesson.h"

namespace lessons::sliding_window {

const Lesson& lesson();

}  // namespace lessons::sliding_window
