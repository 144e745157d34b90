#pragma once
// §9 pitfall 4, "the two RoPE pairings are different", on trained models.
// The interleaved pairing (RoFormer: dimensions 2i, 2i+1) and the half
// pairing (Llama, GPT-NeoX: i, i + dh/2) are the same rotation after a
// permutation of each head's dimensions (§4.6), so they train equally
// well. But a checkpoint's W_q and W_k learned their rows in one order: run
// it with the other pairing and the wrong dimensions turn together.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "data/farm_language.h"
#include "lessons/common/cli.h"
#include "lessons/common/training.h"
#include "nn/language_model.h"

namespace lessons::rope {

// The trained RoPE models of parts 6 and 7: ModernLM as lessons 03-05 train
// it (--quick: a small one, trained briefly on a part of the corpus), seed 0.
struct TrainedSetup {
    nn::LMConfig base = nn::LMConfig::modern_lm();  // half pairing
    farm::Corpora corpora;
    LmTrainOptions training;    // lessons::train_lm's defaults: 5 epochs
    std::string training_line;  // one line: the model and what it was trained on
};
TrainedSetup trained_setup(const Options& options);

// The trained model's parameters in a model that rotates with `pairing`.
// permute_heads: first reorder the rows of every W_q and W_k within each
// head into that pairing's order (from_half_order / to_half_order), which
// makes the two models compute the same function.
std::unique_ptr<nn::LanguageModel> with_pairing(const nn::LanguageModel& trained, ag::RopePairing pairing,
                                                bool permute_heads);

struct PairingRun {
    ag::RopePairing trained;  // the pairing it was trained with
    std::string status;       // from the model cache: "trained", "loaded from …"
    double right = 0;         // test perplexity with its own pairing
    double wrong = 0;         // with the other pairing, the weights as they are
    double permuted = 0;      // with the other pairing, W_q and W_k rows permuted
};

struct PairingSwap {
    std::vector<PairingRun> runs;  // trained with Half, then with Interleaved
    std::string training;          // one line: the model and what it was trained on
    int64_t test_sentences = 0;
    double grammar_perplexity = 0;  // the floor under any model's test perplexity
};

// Two ModernLMs (seed 0) that differ only in their pairing, trained through
// the model cache in --out (the half-pairing one is the default ModernLM
// that lessons 03-05 train too), each measured three ways on the test set.
PairingSwap swap_pairings(const Options& options);

}  // namespace lessons::rope
