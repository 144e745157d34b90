#pragma once
// §3 and §7.1 the modern recipe in numbers: where a model's parameters live.
#include "nn/module.h"
#include "nn/param_count.h"

namespace lessons::modern_transformer {

// The same split nn::count_parameters computes from a config, but counted
// from a built module's parameters, sorted by their names (docs/models.md):
// tok_emb / pos_emb -> embeddings, *.attn.* -> attention, *.mlp.* -> FFN,
// head -> head, ln* / *norm -> norms. An unknown name throws.
nn::ParamCount count_module_parameters(const nn::Module& model);

}  // namespace lessons::modern_transformer
