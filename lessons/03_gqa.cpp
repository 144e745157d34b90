// Lesson 03, grouped-query attention (lecture 4 §5): GQA is MHA with each
// K/V head shared by g query heads (exactly: copying the heads gives the
// same outputs); what it saves (a few parameters, and the KV cache of
// Llama-3 8B on an H100); what it costs on the farm language, and how a
// trained MHA model is converted to GQA by mean-pooling its K/V heads and
// training a little more (uptraining). The parts live in gqa/, where
// tests/lessons runs them too.
#include "lessons/gqa/parts.h"

int main(int argc, char** argv) { return lessons::run_lesson(argc, argv, lessons::gqa::lesson()); }
