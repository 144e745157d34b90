#pragma once
// Lesson 05's figures, drawn from what its parts computed: each function
// writes one SVG into --out and places it on the page with its caption, so
// that every figure is named once.
#include "lessons/common/cli.h"
#include "lessons/common/report.h"
#include "lessons/modern_transformer/gpt_vs_modern.h"

namespace lessons::modern_transformer {

// §7.2 each model's test perplexity over the seeds (the mean as the dot, the
// lowest to the highest seed as its bar) above the grammar's floor.
void perplexity_figure(Report& r, const Options& options, const GptVsModern& result);

}  // namespace lessons::modern_transformer
