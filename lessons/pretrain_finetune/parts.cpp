#include "lessons/pretrain_finetune/parts.h"

namespace lessons::pretrain_finetune {

const Lesson& lesson() {
    static const Lesson pretrain_finetune{
        "01_pretrain_finetune",
        "Pre-training and fine-tuning",
        "§2 Pre-training vs fine-tuning · 预训练 vs 微调",
        3,
        {{"§2.3-2.5", "Greedy layer-wise pre-training on MNIST digits",
          "A deep net whose layers are first trained one at a time (as autoencoders, or with labels) and then "
          "fine-tuned on a few labels, against a shallow net and the same deep net trained from scratch.",
          part1_layerwise_digits},
         {"§2.8", "Pre-trained GPT + fine-tuning vs training from scratch",
          "The lecture-2 GPT, pre-trained on unlabelled farm sentences, learns the subject-number task from 16 or "
          "256 labels by a linear probe (the body frozen, only a 2-way linear head trained) or full fine-tuning, "
          "against the same GPT trained from scratch and "
          "against asking the language model itself (zero-shot); then two pre-training controls, GPT-2's "
          "initialisation and a corpus with k = 4-6 too, measure why the probe falls short at k = 4-6.",
          part2_gpt_finetuning}},
        {{"labels", "part 1: labelled training images per seed (class-balanced)", 300, 10, 8000}},
        FarmLanguage::used};
    return pretrain_finetune;
}

}  // namespace lessons::pretrain_finetune
