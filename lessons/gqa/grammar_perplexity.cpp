#include "lessons/gqa/grammar_perplexity.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace lessons::gqa {
namespace {

// log p(sentence) under the grammar (see the header), or throws.
double log_probability(const std::vector<int64_t>& s) {
    const auto bad = [&] {
        throw std::invalid_argument(fmt::format("grammar_perplexity: \"{}\" is not a sentence of the grammar",
                                                farm::decode(s)));
    };
    const size_t n = s.size();
    const auto at = [&](size_t i) { return i < n ? s[i] : int64_t{-1}; };
    if (at(0) != farm::BOS || at(1) != farm::THE || !farm::is_noun(at(2))) bad();
    double logp = std::log(1.0 / 4) + std::log(1.0 / 24);   // k, SUBJ
    size_t i = 3;
    int k = 0;
    for (; farm::is_prep(at(i)); i += 3, ++k) {
        if (at(i + 1) != farm::THE || !farm::is_noun(at(i + 2))) bad();
        logp += std::log(1.0 / 6) + std::log(1.0 / 24);      // PREP, the (certain), NOUN
    }
    if (k > 3 || !farm::is_verb(at(i)) || farm::is_plural_verb(at(i)) != farm::is_plural_noun(s[2])) bad();
    logp += std::log(1.0 / 12);                               // the lemma; its number is the subject's
    ++i;
    if (at(i) == farm::THE) {
        if (!farm::is_noun(at(i + 1))) bad();
        logp += std::log(1.0 / 2) + std::log(1.0 / 24);
        i += 2;
    } else if (farm::is_mass(at(i))) {
        logp += std::log(1.0 / 4) + std::log(1.0 / 5);
        ++i;
    } else {
        logp += std::log(1.0 / 4);                            // no object
    }
    if (farm::is_adverb(at(i))) {
        logp += std::log(1.0 / 2) + std::log(1.0 / 5);
        ++i;
    } else {
        logp += std::log(1.0 / 2);                            // no adverb
    }
    if (at(i) != farm::EOS || i + 1 != n) bad();              // </s> is then certain
    return logp;
}

}  // namespace

double grammar_perplexity(const std::vector<farm::Sentence>& sentences) {
    if (sentences.empty()) throw std::invalid_argument("grammar_perplexity: no sentences");
    double logp = 0;
    int64_t tokens = 0;
    for (const farm::Sentence& s : sentences) {
        logp += log_probability(s.ids);
        tokens += static_cast<int64_t>(s.ids.size()) - 1;
    }
    return std::exp(-logp / static_cast<double>(tokens));
}

}  // namespace lessons::gqa
