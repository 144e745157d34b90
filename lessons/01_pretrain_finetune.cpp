// Lesson 01, pre-training and fine-tuning (lecture 4 §2). Part 1: greedy
// layer-wise pre-training (autoencoders, §2.3-2.5) on real handwritten
// digits, then fine-tuning on a few labels. Part 2: the lecture-2 GPT
// pre-trained on the farm language, then the subject-number task (§2.8)
// from scratch, by linear probe, by full fine-tuning and zero-shot. The
// parts live in pretrain_finetune/, where tests/lessons runs them too.
#include "lessons/pretrain_finetune/parts.h"

int main(int argc, char** argv) { return lessons::run_lesson(argc, argv, lessons::pretrain_finetune::lesson()); }
