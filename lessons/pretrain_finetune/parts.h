#pragma once
// Lesson 01, pre-training and fine-tuning (§2), in three parts:
//   1. §2.3-2.4 greedy layer-wise pre-training on real handwritten digits:
//      a shallow net and a deep net from scratch, after supervised and
//      after unsupervised (autoencoder) layer-wise pre-training, each
//      fine-tuned on a few labels; the autoencoders' reconstructions;
//      §2.5 (supervised pre-training on one large labelled set) stated;
//   2. §2.6-2.7 the pre-training corpus and the labelled sets of part 3,
//      shown and counted, and which training stage each run is;
//   3. §2.8 the lecture-2 GPT pre-trained on the farm language (cached in
//      --out/models), then the subject-number task with 16 and 256 labels:
//      from scratch, linear probe, full fine-tuning, zero-shot; then the
//      diagnosis of k = 4-6: the LM's own agreement per k beside each
//      method's accuracy, and two pre-training controls (GPT-2's
//      initialisation; k = 0-6 in the pre-training corpus, controls.h).
// Parts 1 and 3 report the mean and the spread over seeds 0 … seeds-1 (default 3).
#include "lessons/common/lesson.h"

namespace lessons::pretrain_finetune {

const Lesson& lesson();

void part1_layerwise_digits(Report& r, const Options& options);
void part2_training_stages(Report& r, const Options& options);
void part3_gpt_finetuning(Report& r, const Options& options);

}  // namespace lessons::pretrain_finetune
