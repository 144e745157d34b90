#pragma once
// The farm grammar's own perplexity: what a perfect model would score.
#include <vector>

#include "data/farm_language.h"

namespace lessons::gqa {

// exp of the mean over predicted tokens (every token after <s>, as
// lessons::perplexity counts them) of -log p(token | prefix) under the
// grammar that generated the sentences (farm_language.md). A sentence's
// conditionals multiply to its probability,
//   p = 1/4 (k) · 1/24 (SUBJ) · (1/6 · 1/24)^k (PPs) · 1/12 (verb lemma)
//       · p(OBJ) · p(ADV),
// with p(OBJ) = 1/2 · 1/24 (the NOUN), 1/4 · 1/5 (MASS) or 1/4 (none) and
// p(ADV) = 1/2 · 1/5 or 1/2 (none). No model beats it on average: it is
// the floor under every trained model's test perplexity. Throws
// std::invalid_argument for a sentence the grammar cannot make.
double grammar_perplexity(const std::vector<farm::Sentence>& sentences);

}  // namespace lessons::gqa
