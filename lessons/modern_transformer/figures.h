#pragma once
// Lesson 05's figures, drawn from what its parts computed: each function
// writes one SVG into --out and places it on the page with its caption, so
// that every figure is named once.
#include "lessons/common/cli.h"
#include "lessons/common/report.h"
#include "lessons/modern_transformer/gpt_vs_modern.h"
#include "lessons/modern_transformer/position_diagnosis.h"
#include "lessons/modern_transformer/position_encodings.h"

namespace lessons::modern_transformer {

// §7.2 each model's test perplexity over the seeds (the mean as the dot, the
// lowest to the highest seed as its bar) above the grammar's floor.
void perplexity_figure(Report& r, const Options& options, const GptVsModern& result);

// §7.3 agreement accuracy against k, one series per encoding (the mean over
// the seeds, their min-max as bars), with chance 0.5 and the end of the
// training lengths (trained up to k = trained_k).
void accuracy_by_k_figure(Report& r, const Options& options, const PositionEncodings& encodings, int trained_k);

// §7.3 one sentence's attention weights through `model` (its name on the
// page), query by key, one panel per head of the layer whose head looks
// hardest at the subject from the position that predicts the verb; that
// cell is outlined in every panel.
void attention_map_figure(Report& r, const Options& options, const AttentionMap& map, const std::string& model);

// §7.3 the head that map `within` picked (its layer and head), on the long
// prefix `beyond`: whether it still finds the subject past the training
// lengths.
void long_prefix_figure(Report& r, const Options& options, const AttentionMap& within, const AttentionMap& beyond,
                        const std::string& model);

// §7.3 RoPE's subject weight per k, seed by seed, with the end of the
// training lengths (trained up to k = trained_k).
void subject_weight_figure(Report& r, const Options& options, const PositionDiagnosis& diagnosis, int trained_k);

// §7.3 every model's accuracy at k = 4-6 against its subject weight there,
// with chance 0.5 and the weight that best splits the models by accuracy.
void weight_accuracy_figure(Report& r, const Options& options, const PositionDiagnosis& diagnosis);

}  // namespace lessons::modern_transformer
