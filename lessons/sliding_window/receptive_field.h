#pragma once
// §6.3 the receptive field of stacked windows: after L layers of window W a
// position can depend on the L(W-1) positions before it, each layer passing
// information W - 1 positions further. Measured on an untrained windowed
// model, which reads one sequence twice, the second time with one token
// changed: the outputs that moved after layer L are the positions it reaches.
#include <cstdint>
#include <vector>

#include "nn/language_model.h"

namespace lessons::sliding_window {

// What moved after one layer, for one seed.
struct LayerReach {
    int seed = 0;
    int64_t layer = 0;              // L = 1 … n_layers
    int64_t first = -1, last = -1;  // the first and last position whose output moved (-1: none)
    int64_t moved = 0;              // how many positions moved
    int64_t reach = 0;              // last - changed: how far right the change got
    int64_t expected = 0;           // L(W-1)
    bool exact = false;             // exactly the positions changed … changed + L(W-1) moved
    std::vector<double> moved_at;   // per position: 1 if its output moved (|Δ| > 0), else 0
};

struct ReceptiveField {
    std::vector<LayerReach> layers;  // seed by seed, layer by layer
    int64_t exact_layers = 0;        // the (seed, layer) pairs that are exact
};

// The model nn::LanguageModel(config, seed) for seed 0 … seeds-1 (config: a
// window W ≥ 1, n_layers L) reads T token ids drawn with ag::Generator(seed),
// then the same with token `changed` replaced by the next id.
ReceptiveField measure_receptive_field(const nn::LMConfig& config, int64_t T, int64_t changed, int seeds);

}  // namespace lessons::sliding_window
