// Lesson 02, rotary position embeddings (lecture 4 §4): the rotation
// R_{Θ,m} written three ways, why scores depend only on t - j, the slides'
// "wrong" version, why many frequencies, RoPE with a KV cache, and a model
// run with the other pairing of dimensions (§9 pitfall 4). The parts
// live in rope/, where tests/lessons runs them too.
#include "lessons/rope/parts.h"

int main(int argc, char** argv) { return lessons::run_lesson(argc, argv, lessons::rope::lesson()); }
