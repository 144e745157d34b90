#pragma once
// §2.8's diagnosis: why a linear probe on the pre-trained GPT falls short
// of the lecture's 1.000 at k = 4-6. A head that reads the body can only
// be as right as what the body computes there, and the LM's own agreement
// test measures that. Two candidate causes, each changed alone in a
// control: the GPT is pre-trained again (same corpus seed, model seed 0,
// the same training options) with one thing different, then gets the
// same probe and full fine-tuning runs (the same labelled sets, test sets
// and head seeds) as the baseline:
//
//   gpt2 init       the initialisation: GPT-2's N(0, 0.02) for every
//                   weight matrix and embedding instead of PyTorch's
//                   U(±1/√in) and N(0, 1) (nn::Init::Gpt2). Position rows
//                   that pre-training never reaches start near 0, not at
//                   N(0, 1) draws;
//   pretrain k 0-6  the extrapolation: a corpus of as many sentences with
//                   k uniform over 0-6 instead of 0-3
//                   (farm::make_corpora_up_to), so that every test k, and
//                   every position a test prefix ends at, was seen in
//                   pre-training with a verb to predict.
//
// Seed i of a control meets seed i of the baseline (the seed draws the
// head, the same for both): a control moves an accuracy when the means
// and every seed move the same way (lessons/common/spread.h).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "lessons/common/evaluation.h"
#include "lessons/common/model_cache.h"
#include "lessons/pretrain_finetune/subject_task.h"

namespace lessons::pretrain_finetune {

struct PretrainingControl {
    std::string key;      // "gpt2_init", "pretrain_k0-6": the page's value names
    std::string name;     // "GPT-2 init", "k 0-6 in pre-training": the tables' names
    std::string changes;  // what differs from the baseline, in words
    nn::LMConfig config;
    std::vector<farm::Sentence> corpus;
    // Only the pre-training corpus differs: a GPT trained from scratch,
    // which never reads it, is the baseline's.
    bool corpus_only = false;
};

// The first `n` sentences of a corpus (0: all): what a GPT is pre-trained
// on (the quick run takes a few hundred).
std::vector<farm::Sentence> pretraining_corpus(const std::vector<farm::Sentence>& all, size_t n);

// The k range of the extrapolation control's corpus: 0-6, every test k.
constexpr int kControlKMax = 6;

// The two controls of the baseline GPT `config` pre-trained on
// pretraining_corpus(make_corpora(corpus_seed).train, sentences).
std::vector<PretrainingControl> pretraining_controls(const nn::LMConfig& config, const farm::Language& language,
                                                     uint64_t corpus_seed, size_t sentences);

// The methods a control runs: the linear probe and full fine-tuning at
// lr 1e-3 (subject_methods()' own entries).
std::vector<MethodSpec> control_methods();

// One control, measured.
struct ControlRun {
    PretrainingControl control;
    CachedLm lm;                             // pre-trained through the model cache (model seed 0)
    double test_perplexity = 0;              // on the standard test set (k 0-3)
    std::vector<AgreementResult> agreement;  // the LM's own, [k - 1] for k = 1 … 6
    std::vector<SubjectRun> runs;            // control_methods() × labelled sets × seeds
};

// Pre-trains the control's GPT (cached_lm under out_dir with `options`,
// its epochs on stderr), then measures it: perplexity on `test`, agreement
// on `agreement_sets`, and the control methods on `data` with `seeds`
// seeds of `steps` steps each (train_subject_methods).
ControlRun run_control(const PretrainingControl& control, const std::filesystem::path& out_dir,
                       const LmTrainOptions& options, const std::vector<farm::Sentence>& test,
                       const std::vector<std::vector<farm::Sentence>>& agreement_sets, const SubjectData& data,
                       int seeds, int64_t steps);

// How a control moves one method's mean accuracy (at k = 1-3 or k = 4-6)
// against the baseline: the two spreads over seeds, the change of the
// means, and the order "moved the way the means moved" seed by seed
// (on_means false when the means are equal).
struct Move {
    Spread baseline, control;
    double change = 0;  // control mean - baseline mean
    SeedOrder order;
};
Move move_of(const std::vector<SubjectRun>& baseline, const std::vector<SubjectRun>& control, const std::string& method,
             int64_t labelled, bool extrapolation);

}  // namespace lessons::pretrain_finetune
