#pragma once
// §3 and §7.1 the modern recipe in numbers: where a model's parameters live.
#include <array>
#include <cstdint>

#include "nn/config.h"
#include "nn/module.h"
#include "nn/param_count.h"

namespace lessons::modern_transformer {

// The same split nn::count_parameters computes from a config, but counted
// from a built module's parameters, sorted by their names (docs/models.md):
// tok_emb / pos_emb -> embeddings, *.attn.* -> attention, *.mlp.* -> FFN,
// head -> head, ln* / *norm -> norms. An unknown name throws.
nn::ParamCount count_module_parameters(const nn::Module& model);

// §7.1 ModernLM and GPT (initialisation seed 0) counted twice: from the
// built module and from the formula nn::count_parameters, which never
// builds the model and so also counts Llama-3 8B.
struct RecipeCounts {
    nn::ParamCount modern_module, modern_formula, gpt_module, gpt_formula, llama3_8b;
    int64_t modern_total = 0, gpt_total = 0;  // num_parameters() of the built models
    // Module and formula agree in every group for both models, and the
    // groups add up to the built models' totals.
    bool module_equals_formula = false;
};
RecipeCounts count_recipes();

// §3.2 (exercise 8) SwiGLU has three d × d_ff matrices where the GELU MLP
// has two d × 4d: 3 d d_ff = 2 d 4d gives d_ff = 8d/3.
int64_t gelu_mlp_weights(int64_t d);                         // 2·d·4d = 8d²
double swiglu_matching_hidden(int64_t d);                    // 8d/3
int64_t swiglu_hidden_rounded(int64_t d, int64_t multiple);  // 8d/3 rounded up to a multiple of `multiple`

// §3.1 the changes the lecture lists as recurring in open models, in its
// order, and whether a config uses each: read from the config alone (the
// model kind decides the norm, the FFN and the biases; the rest are fields).
struct RecipeChange {
    const char* change;    // as the lecture names it
    const char* replaces;  // what it replaces
};
inline constexpr std::array<RecipeChange, 6> kRecipeChanges{{
    {"RMSNorm, at the sublayer's input (pre-norm)", "LayerNorm"},
    {"SwiGLU gated feed-forward network", "a ReLU / GELU MLP"},
    {"no biases in the linear layers", "biases"},
    {"RoPE", "absolute position embeddings"},
    {"GQA / MQA", "multi-head attention"},
    {"sliding-window attention", "full attention"},
}};
std::array<bool, kRecipeChanges.size()> recipe_uses(const nn::LMConfig& config);

}  // namespace lessons::modern_transformer
