#pragma once
// §2.8 pre-training + fine-tuning vs training from scratch, on the
// subject-number task (docs/farm_language.md): read "<s> the dogs near the
// cat behind the cow" up to the verb and say whether the subject is singular or
// plural. Every method puts nn::ClassifierHead(d, 2) (d = 64) on the final-norm
// hidden state at the last prefix position and trains 200 full-batch Adam
// steps (no weight decay); the methods differ only in the body under it:
//
//   scratch     a fresh GPT body (seeded), trained with the head, lr 1e-3
//   probe       the pre-trained body, frozen; only the head learns (lr 1e-3)
//   full FT     the pre-trained body, trained with the head (lr 1e-3, 1e-4)
//   zero-shot   no head: the language model's own next-token masses on the
//               singular vs plural verbs (the agreement test)
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "data/farm_language.h"
#include "lessons/common/spread.h"
#include "nn/autoencoder.h"
#include "nn/checkpoint.h"
#include "nn/language_model.h"

namespace lessons::pretrain_finetune {

// Prefixes packed end to end without padding (nn::Packing): row
// last.rows[b] of the packed hidden states is prefix b's last token.
struct PackedPrefixes {
    ag::Tensor ids;         // [N]
    nn::Packing packing;    // B prefixes
    nn::RowSelection last;  // [B] their last rows, grouped once for every step
    ag::Tensor labels;      // [B] subject_plural
    int64_t tokens() const { return packing.rows(); }
};
PackedPrefixes pack_prefixes(const std::vector<farm::Sentence>& prefixes);

// The body's final-norm hidden state at each prefix's last token, [B, d]
// (nn::LanguageModel::hidden_at): only the last tokens need the top
// layer's query, attention, MLP and final norm (about a third less time
// on these prefixes than the full forward).
ag::Tensor last_hidden(const nn::LanguageModel& body, const PackedPrefixes& prefixes);

// `steps` full-batch Adam steps (betas 0.9 / 0.999, no weight decay) of the
// cross-entropy of head(hidden at each last position). train_body: the body
// learns too (scratch, full fine-tuning); otherwise a linear probe, whose
// body runs once without a graph and is never touched. Returns the loss
// before each step (the curve is the figure).
std::vector<double> train_subject_classifier(nn::LanguageModel& body, nn::ClassifierHead& head,
                                             const PackedPrefixes& train, int64_t steps, double lr, bool train_body);

// Per prefix, in order: whether its label gets the larger logit (no graph).
std::vector<bool> subject_correct(const nn::LanguageModel& body, const nn::ClassifierHead& head,
                                  const PackedPrefixes& prefixes);
// The share of them that are right.
double subject_accuracy(const nn::LanguageModel& body, const nn::ClassifierHead& head, const PackedPrefixes& prefixes);

enum class Method { Scratch, Probe, FullFineTune };

struct MethodSpec {
    std::string name;  // "scratch", "linear probe", "full FT lr 1e-3", …
    Method method;
    double lr;
};
// The lecture's four trained methods, in its order.
std::vector<MethodSpec> subject_methods();

// One run: a method on one labelled set with one seed. The seed draws the
// head (ag::Generator(kHeadSeed + seed)) and, for scratch, the body
// (nn::LanguageModel(config, seed)); probe and full FT start from a fresh
// copy of `pretrained` every run.
struct SubjectRun {
    MethodSpec spec;
    int64_t labelled = 0;  // training examples
    int seed = 0;
    int64_t trainable = 0;                          // parameters the optimiser updates
    double in_distribution = 0, extrapolation = 0;  // test accuracy, k = 1-3 and k = 4-6
    std::vector<double> per_k;                      // [k - 1]: the same predictions at k = 1 … 6 (NaN: no prefix)
    std::vector<double> losses;                     // training loss before each step
    bool body_unchanged = false;                    // every body parameter bitwise as it started
};

struct SubjectData {
    std::vector<std::vector<farm::Sentence>> train_sets;  // one per labelled size
    farm::SubjectTestSets test;
    PackedPrefixes in_distribution, extrapolation;  // the test sets packed
};
SubjectData make_subject_data(const std::vector<int64_t>& sizes, uint64_t train_seed, uint64_t test_seed,
                              int64_t test_prefixes, const farm::Language& language);

// Every method × labelled set × seed, the runs spread over the engine's
// threads (each run is independent and single-threaded inside, so the
// numbers do not depend on the thread count). Results in the order
// method, then set, then seed. `on_done` (may be empty) is called, one
// thread at a time, after each run with the tokens it processed.
std::vector<SubjectRun> run_subject_methods(const std::vector<MethodSpec>& methods, const SubjectData& data, int seeds,
                                            int64_t steps, const nn::LMConfig& config, const nn::Checkpoint& pretrained,
                                            const std::function<void(const SubjectRun&, int64_t)>& on_done);

// run_subject_methods with its progress on stderr: a step per run done,
// then one summary line.
std::vector<SubjectRun> train_subject_methods(const std::vector<MethodSpec>& methods, const SubjectData& data,
                                              int seeds, int64_t steps, const nn::LMConfig& config,
                                              const nn::Checkpoint& pretrained);

constexpr uint64_t kHeadSeed = 1000;

// k = 1 … 6: the test sets' k values (in distribution 1-3, extrapolation 4-6).
constexpr int kTestKs = 6;

// One method with one labelled-set size over the seeds: its accuracy at
// k = 1-3, at k = 4-6 and at each k (per_k[k - 1]).
struct MethodAccuracy {
    Spread in_distribution, extrapolation;
    std::vector<Spread> per_k;
};
// Every (method name, labelled-set size) of the runs.
std::map<std::pair<std::string, int64_t>, MethodAccuracy> method_accuracies(const std::vector<SubjectRun>& runs);

}  // namespace lessons::pretrain_finetune
