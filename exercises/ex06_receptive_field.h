#pragma once
// Exercise 6 · the receptive field of stacked windows (lecture §6.3,
// exercise 6). The statement is in ex06_receptive_field.cpp.
#include <cstdint>

namespace ex06 {

// How many tokens back the last of `layers` sliding-window layers (window W:
// each position sees itself and the W - 1 before it) can depend on.
int64_t receptive_field(int64_t layers, int64_t window);

}  // namespace ex06
