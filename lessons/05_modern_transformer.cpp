// Lesson 05, the modern Transformer (lecture 4 §3 and §7): the modern recipe
// (RMSNorm, SwiGLU, no biases, RoPE, GQA) counted parameter by parameter,
// the lecture-2 GPT against the ModernLM of the same size class, and which
// position encoding extrapolates the subject-verb agreement beyond the
// training lengths. The parts live in modern_transformer/, where
// tests/lessons runs them too.
#include "lessons/modern_transformer/parts.h"

int main(int argc, char** argv) { return lessons::run_lesson(argc, argv, lessons::modern_transformer::lesson()); }
