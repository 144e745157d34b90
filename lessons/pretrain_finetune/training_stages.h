#pragma once
// §2.6-2.7: the data of the training stages this lesson runs, counted from
// the data themselves. §2.6: for a language model, unsupervised
// pre-training reads unlabelled sentences and maximises their likelihood;
// §2.7: today's LLMs train in three stages, pre-training → mid-training →
// post-training. Part 3 pre-trains the GPT on farm sentences (no labels),
// then trains on labelled subject-number prefixes (supervised, the kind of
// training post-training is); nothing here is a mid-training stage.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/farm_language.h"

namespace lessons::pretrain_finetune {

// §2.8's sizes, as the lecture states them: the GPT is pre-trained on
// 20,000 unlabelled sentences, then learns the task from 16 or 256
// labelled examples. (§2.2 calls pre-training's data cheap and plentiful,
// fine-tuning's expensive and scarce, and gives no ratio.)
constexpr int64_t kLectureSentences = 20000;
inline const std::vector<int64_t> kLectureLabelled{16, 256};

// A set of sentences or prefixes: how many, their tokens (<s> and </s>
// included where they are in the ids) and their labels' counts.
struct DataCount {
    int64_t examples = 0, tokens = 0, singular = 0, plural = 0;
};
DataCount count_data(const std::vector<farm::Sentence>& set);

struct StageData {
    DataCount corpus;                    // the pre-training corpus
    std::vector<std::string> sentences;  // its first few, as words
    std::vector<DataCount> labelled;     // each labelled training set
    // The smallest set's first few prefixes, as words, and their labels.
    std::vector<std::string> prefixes;
    std::vector<int> prefix_plural;
};
// `shown` sentences and prefixes (fewer where a set is smaller).
StageData stage_data(const std::vector<farm::Sentence>& corpus,
                     const std::vector<std::vector<farm::Sentence>>& labelled_sets, size_t shown);

}  // namespace lessons::pretrain_finetune
