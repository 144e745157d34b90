#pragma once
// Helpers shared by the data tests: a parser for the farm grammar and a
// chi-square statistic, each reporting what it found.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/farm_language.h"

namespace test {

// Empty when s.ids parse as
//   sentence := <s> the SUBJ PP{k} VERB OBJ? ADV? </s>   (prefix = false)
//   prefix   := <s> the SUBJ PP{k}                        (prefix = true)
// with k == s.k, the subject's number == s.subject_plural and the verb
// agreeing with the subject; otherwise what is wrong, with the sentence.
// The words of ids, with an id outside the vocabulary shown as #id.
inline std::string text_of(const std::vector<int64_t>& ids) {
    std::string text;
    for (const int64_t id : ids) {
        text += text.empty() ? "" : " ";
        text += id >= 0 && id < farm::VOCAB_SIZE ? std::string(farm::token(id)) : fmt::format("#{}", id);
    }
    return text;
}

// How many of the attractor nouns (index 5 + 3p) have the subject's number.
inline int same_number_attractors(const farm::Sentence& s) {
    int same = 0;
    for (int p = 0; p < s.k; ++p) same += farm::is_plural_noun(s.ids[5 + 3 * p]) == (s.subject_plural == 1);
    return same;
}

inline std::string grammar_error(const farm::Sentence& s, bool prefix) {
    const std::vector<int64_t>& w = s.ids;
    std::size_t i = 0;
    auto at = [&w](std::size_t j) { return j < w.size() ? w[j] : int64_t{-1}; };
    auto fail = [&](const std::string& what) {
        return fmt::format("\"{}\" (k = {}, subject_plural = {}): {} at index {}", text_of(w), s.k, s.subject_plural,
                           what, i);
    };
    if (at(i++) != farm::BOS) return fail("expected <s>");
    if (at(i++) != farm::THE) return fail("expected 'the'");
    const int64_t subject = at(i);
    if (!farm::is_noun(subject)) return fail("expected a subject noun");
    if (i != 2) return fail("subject not at index 2");
    const int plural = farm::is_plural_noun(subject) ? 1 : 0;
    if (plural != s.subject_plural) return fail("subject_plural does not match the subject");
    ++i;
    int k = 0;
    while (farm::is_prep(at(i))) {
        ++i;
        if (at(i++) != farm::THE) return fail("expected 'the' after a preposition");
        if (!farm::is_noun(at(i++))) return fail("expected a noun in a PP");
        ++k;
    }
    if (k != s.k) return fail(fmt::format("{} PPs, but k = {}", k, s.k));
    if (prefix) return i == w.size() ? std::string() : fail("prefix continues after its PPs");
    if (i != static_cast<std::size_t>(3 + 3 * k)) return fail("verb not at index 3 + 3k");
    if (!farm::is_verb(at(i))) return fail("expected a verb");
    if ((farm::is_plural_verb(at(i)) ? 1 : 0) != plural) return fail("verb does not agree with the subject");
    ++i;
    if (at(i) == farm::THE) {
        ++i;
        if (!farm::is_noun(at(i++))) return fail("expected a noun object after 'the'");
    } else if (farm::is_mass(at(i))) {
        ++i;
    }
    if (farm::is_adverb(at(i))) ++i;
    if (at(i++) != farm::EOS) return fail("expected </s>");
    if (i != w.size()) return fail("tokens after </s>");
    return {};
}

// The first few grammar errors of a set ("" when every sentence parses).
inline std::string first_grammar_errors(const std::vector<farm::Sentence>& set, bool prefix) {
    std::string errors;
    int shown = 0;
    for (std::size_t n = 0; n < set.size() && shown < 5; ++n) {
        const std::string e = grammar_error(set[n], prefix);
        if (!e.empty()) {
            errors += fmt::format("\n  sentence {}: {}", n, e);
            ++shown;
        }
    }
    return errors;
}

// Pearson's chi-square of observed counts against expected probabilities.
inline double chi_square(const std::vector<int64_t>& counts, const std::vector<double>& probs) {
    int64_t total = 0;
    for (const int64_t c : counts) total += c;
    double chi2 = 0.0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        const double expected = static_cast<double>(total) * probs[i];
        const double d = static_cast<double>(counts[i]) - expected;
        chi2 += d * d / expected;
    }
    return chi2;
}

inline double chi_square_uniform(const std::vector<int64_t>& counts) {
    return chi_square(counts, std::vector<double>(counts.size(), 1.0 / static_cast<double>(counts.size())));
}

inline std::string counts_str(const std::vector<int64_t>& counts) { return fmt::format("{}", fmt::join(counts, ", ")); }

}  // namespace test
