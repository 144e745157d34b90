// The farm language against its spec (docs/farm_language.md):
// vocabulary, tokenizer, grammar, distributions, corpora and task sets.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>

#include "catch.h"

#include "data/farm_language.h"
#include "farm_checks.h"

using Catch::Contains;
using farm::Sentence;

namespace {

// A chi-square above this bound has probability about 1e-6 (or less) for
// counts drawn from the expected distribution with df degrees of freedom.
double chi2_bound(std::size_t df) {
    static const std::map<std::size_t, double> bounds = {{1, 30}, {2, 30},  {3, 30}, {4, 35},
                                                         {5, 35}, {11, 50}, {23, 70}};
    return bounds.at(df);
}

const farm::Corpora& corpora_seed0() {
    static const farm::Corpora c = farm::make_corpora(0);
    return c;
}

std::vector<int64_t> tally(const std::vector<int64_t>& ids, int64_t first, int n) {
    std::vector<int64_t> counts(n, 0);
    for (const int64_t id : ids) ++counts[id - first];
    return counts;
}

}  // namespace

// ---- vocabulary ----------------------------------------------------------

TEST_CASE("farm: the vocabulary has 68 tokens in the spec's order", "[data][farm][vocab]") {
    const std::string spec =
        "<pad> <s> </s> the "
        "dog dogs cat cats cow cows pig pigs horse horses goat goats hen hens duck ducks fox foxes "
        "rabbit rabbits farmer farmers donkey donkeys "
        "near behind beside with under by "
        "runs run eats eat sleeps sleep sees see likes like chases chase jumps jump walks walk "
        "follows follow watches watch pushes push finds find "
        "hay grass corn water mud "
        "today again slowly quickly loudly";
    std::istringstream words(spec);
    std::vector<std::string> expected{std::istream_iterator<std::string>(words), {}};
    REQUIRE(expected.size() == 68);
    REQUIRE(farm::vocabulary().size() == 68);
    CHECK(farm::VOCAB_SIZE == 68);
    for (std::size_t id = 0; id < expected.size(); ++id) {
        INFO("id " << id);
        CHECK(std::string(farm::vocabulary()[id]) == expected[id]);
    }
    const std::vector<std::pair<int64_t, std::string>> spot = {
        {0, "<pad>"},    {1, "<s>"},   {2, "</s>"},   {3, "the"},    {4, "dog"},    {5, "dogs"},
        {27, "donkeys"}, {28, "near"}, {34, "runs"},  {35, "run"},   {56, "finds"}, {57, "find"},
        {58, "hay"},     {62, "mud"},  {63, "today"}, {67, "loudly"}};
    for (const auto& [id, word] : spot) {
        INFO("id " << id);
        CHECK(std::string(farm::token(id)) == word);
    }
    CHECK(farm::PAD == 0);
    CHECK(farm::BOS == 1);
    CHECK(farm::EOS == 2);
    CHECK(farm::THE == 3);
    CHECK_THROWS_AS(farm::token(68), std::invalid_argument);
    CHECK_THROWS_AS(farm::token(-1), std::invalid_argument);
}

TEST_CASE("farm: word classes, numbers and the two verb groups", "[data][farm][vocab]") {
    for (int64_t id = 0; id < farm::VOCAB_SIZE; ++id) {
        INFO("id " << id << " '" << farm::token(id) << "'");
        const int classes = farm::is_noun(id) + farm::is_prep(id) + farm::is_verb(id) + farm::is_mass(id) +
                            farm::is_adverb(id) + (id <= farm::THE);
        CHECK(classes == 1);
        CHECK(farm::is_noun(id) == (id >= 4 && id <= 27));
        CHECK(farm::is_prep(id) == (id >= 28 && id <= 33));
        CHECK(farm::is_verb(id) == (id >= 34 && id <= 57));
        CHECK(farm::is_mass(id) == (id >= 58 && id <= 62));
        CHECK(farm::is_adverb(id) == (id >= 63 && id <= 67));
        const std::string word(farm::token(id));
        const std::string before = id > 0 ? std::string(farm::token(id - 1)) : "";
        // a plural noun ends in s and starts with its singular, the id before it
        if (farm::is_plural_noun(id)) CHECK((word.back() == 's' && word.rfind(before, 0) == 0));
        // singular verbs are the 3rd-person forms, the id before: "runs" then "run"
        if (farm::is_plural_verb(id)) CHECK(before.rfind(word, 0) == 0);
    }
    CHECK(farm::noun_id(0, 0) == 4);
    CHECK(farm::noun_id(11, 1) == 27);
    CHECK(farm::verb_id(0, 0) == 34);
    CHECK(farm::verb_id(11, 1) == 57);
    const auto& singular = farm::verb_ids(0);
    const auto& plural = farm::verb_ids(1);
    for (int lemma = 0; lemma < farm::N_LEMMAS; ++lemma) {
        INFO("lemma " << lemma);
        CHECK(singular[lemma] == 34 + 2 * lemma);
        CHECK(plural[lemma] == 35 + 2 * lemma);
        CHECK(farm::is_verb(singular[lemma]));
        CHECK_FALSE(farm::is_plural_verb(singular[lemma]));
        CHECK(farm::is_plural_verb(plural[lemma]));
    }
}

// ---- tokenizer -----------------------------------------------------------

TEST_CASE("farm: encode and decode", "[data][farm][tokenizer]") {
    const std::string text = "<s> the dogs near the cat run the hay today </s>";
    const std::vector<int64_t> ids = farm::encode(text);
    CHECK(ids == std::vector<int64_t>{1, 3, 5, 28, 3, 6, 35, 3, 58, 63, 2});
    CHECK(farm::decode(ids) == text);
    // any whitespace separates words
    CHECK(farm::encode("  <s>\tthe  dog\nruns </s>  ") == std::vector<int64_t>{1, 3, 4, 34, 2});
    CHECK(farm::encode("").empty());
    CHECK(farm::encode("   ").empty());
    CHECK(farm::decode({}).empty());
    // every token round-trips
    std::vector<int64_t> all(farm::VOCAB_SIZE);
    for (int64_t id = 0; id < farm::VOCAB_SIZE; ++id) all[id] = id;
    CHECK(farm::encode(farm::decode(all)) == all);
}

TEST_CASE("farm: an unknown word is an error naming the word and its position", "[data][farm][tokenizer]") {
    CHECK_THROWS_AS(farm::encode("<s> the sheep runs </s>"), std::invalid_argument);
    CHECK_THROWS_WITH(farm::encode("<s> the sheep runs </s>"), Contains("'sheep'") && Contains("position 2"));
    // case matters: "The" is not "the"
    CHECK_THROWS_WITH(farm::encode("The dog"), Contains("'The'") && Contains("position 0"));
    CHECK_THROWS_AS(farm::decode({1, 68}), std::invalid_argument);
    CHECK_THROWS_WITH(farm::decode({1, 3, -5}), Contains("-5") && Contains("position 2"));
}

// ---- the grammar and its distributions -------------------------------------

TEST_CASE("farm: corpora have the spec's sizes and every sentence parses", "[data][farm][corpora]") {
    const farm::Corpora& c = corpora_seed0();
    CHECK(c.train.size() == 20000);
    CHECK(c.valid.size() == 2000);
    CHECK(c.test.size() == 2000);
    for (const auto* set : {&c.train, &c.valid, &c.test}) {
        CHECK(test::first_grammar_errors(*set, false) == "");
        for (const Sentence& s : *set) {
            if (s.k < 0 || s.k > 3) FAIL("k = " << s.k << ", expected 0-3: " << farm::decode(s.ids));
        }
    }
}

TEST_CASE("farm: the grammar checker rejects broken sentences", "[data][farm][corpora]") {
    // The checker itself must be able to fail.
    auto sentence = [](const char* text, int plural, int k) { return Sentence{farm::encode(text), plural, k}; };
    CHECK(test::grammar_error(sentence("<s> the dogs near the cat run hay today </s>", 1, 1), false) == "");
    CHECK(test::grammar_error(sentence("<s> the dogs near the cat run the hay </s>", 1, 1), false) != "");  // the MASS
    CHECK(test::grammar_error(sentence("<s> the dogs near the cat runs </s>", 1, 1), false) != "");         // agreement
    CHECK(test::grammar_error(sentence("<s> the dogs near the cat run </s>", 1, 2), false) != "");          // k
    CHECK(test::grammar_error(sentence("<s> the dogs near the cat run </s>", 0, 1), false) != "");          // label
    CHECK(test::grammar_error(sentence("<s> the dogs run the </s>", 1, 0), false) != "");                   // object
    CHECK(test::grammar_error(sentence("<s> the dogs run today today </s>", 1, 0), false) != "");           // adverb
    CHECK(test::grammar_error(sentence("<s> the dogs near the cat", 1, 1), true) == "");
    CHECK(test::grammar_error(sentence("<s> the dogs near the cat run", 1, 1), true) != "");
}

TEST_CASE("farm: k is uniform over 0-3 in train", "[data][farm][distribution]") {
    std::vector<int64_t> counts(4, 0);
    for (const Sentence& s : corpora_seed0().train) ++counts[s.k];
    INFO("k = 0..3 counts: " << test::counts_str(counts) << " (expected about 5000 each)");
    CHECK(test::chi_square_uniform(counts) < chi2_bound(3));
}

TEST_CASE("farm: subject, PP, verb, object and adverb distributions", "[data][farm][distribution]") {
    std::vector<int64_t> subjects, preps, pp_nouns, lemmas, object_nouns, mass, adverbs;
    std::vector<int64_t> object_kind(3, 0);     // the NOUN, MASS, none
    std::vector<int64_t> adverb_kind(2, 0);     // present, absent
    std::vector<int64_t> attractor_same(2, 0);  // attractor number: opposite, same as the subject
    for (const Sentence& s : corpora_seed0().train) {
        const auto& w = s.ids;
        subjects.push_back(w[2]);
        for (int p = 0; p < s.k; ++p) {
            preps.push_back(w[3 + 3 * p]);
            const int64_t noun = w[5 + 3 * p];
            pp_nouns.push_back(noun);
            ++attractor_same[farm::is_plural_noun(noun) == farm::is_plural_noun(w[2]) ? 1 : 0];
        }
        const std::size_t v = 3 + 3 * s.k;
        lemmas.push_back((w[v] - farm::FIRST_VERB) / 2);
        std::size_t i = v + 1;
        if (w[i] == farm::THE) {
            ++object_kind[0];
            object_nouns.push_back(w[i + 1]);
            i += 2;
        } else if (farm::is_mass(w[i])) {
            ++object_kind[1];
            mass.push_back(w[i]);
            ++i;
        } else {
            ++object_kind[2];
        }
        if (farm::is_adverb(w[i])) {
            ++adverb_kind[0];
            adverbs.push_back(w[i]);
        } else {
            ++adverb_kind[1];
        }
    }
    struct Case {
        const char* name;
        std::vector<int64_t> counts;
    };
    const std::vector<Case> uniform = {
        {"SUBJ over 24 nouns", tally(subjects, farm::FIRST_NOUN, farm::N_NOUNS)},
        {"PREP over 6", tally(preps, farm::FIRST_PREP, farm::N_PREPS)},
        {"PP NOUN over 24", tally(pp_nouns, farm::FIRST_NOUN, farm::N_NOUNS)},
        {"verb lemma over 12", tally(lemmas, 0, farm::N_LEMMAS)},
        {"object NOUN over 24", tally(object_nouns, farm::FIRST_NOUN, farm::N_NOUNS)},
        {"MASS over 5", tally(mass, farm::FIRST_MASS, farm::N_MASS)},
        {"ADV over 5", tally(adverbs, farm::FIRST_ADV, farm::N_ADVS)},
        {"attractor opposite / same number as the subject", attractor_same},
        {"ADV present / absent (1/2, 1/2)", adverb_kind},
    };
    for (const Case& c : uniform) {
        INFO(c.name << ": counts " << test::counts_str(c.counts));
        CHECK(test::chi_square_uniform(c.counts) < chi2_bound(c.counts.size() - 1));
    }
    INFO("OBJ the NOUN / MASS / none: counts " << test::counts_str(object_kind) << " (expected 1/2, 1/4, 1/4)");
    CHECK(test::chi_square(object_kind, {0.5, 0.25, 0.25}) < chi2_bound(2));
}

TEST_CASE("farm: the documented draw order reproduces the corpora", "[data][farm][reproducible]") {
    // An independent re-implementation of the header's recipe, from raw draws.
    ag::Generator gen(7);
    auto r = [&gen](int64_t n) { return gen.randint(n); };
    std::vector<std::vector<int64_t>> expected;
    for (int n = 0; n < 22000 + 50; ++n) {  // all of train and valid, then 50 of test
        const int64_t k = r(4);
        const int64_t subject = 4 + r(24);
        std::vector<int64_t> w = {1, 3, subject};
        for (int p = 0; p < k; ++p) {
            const int64_t prep = 28 + r(6);
            w.insert(w.end(), {prep, 3, 4 + r(24)});
        }
        w.push_back(34 + 2 * r(12) + (subject - 4) % 2);
        const int64_t o = r(4);
        if (o < 2) w.insert(w.end(), {3, 4 + r(24)});
        if (o == 2) w.push_back(58 + r(5));
        if (r(2) == 0) w.push_back(63 + r(5));
        w.push_back(2);
        expected.push_back(w);
    }
    const farm::Corpora c = farm::make_corpora(7);
    for (std::size_t n = 0; n < expected.size(); ++n) {
        const Sentence& s = n < 20000 ? c.train[n] : n < 22000 ? c.valid[n - 20000] : c.test[n - 22000];
        if (s.ids != expected[n]) {
            FAIL("sentence " << n << ": expected \"" << farm::decode(expected[n]) << "\", generated \""
                             << farm::decode(s.ids) << "\"");
        }
    }
}

TEST_CASE("farm: same seed, same corpora, another seed, other corpora", "[data][farm][reproducible]") {
    const farm::Corpora& a = corpora_seed0();
    const farm::Corpora b = farm::make_corpora(0);
    const farm::Corpora other = farm::make_corpora(1);
    auto same = [](const std::vector<Sentence>& x, const std::vector<Sentence>& y) {
        return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](const Sentence& s, const Sentence& t) {
            return s.ids == t.ids && s.k == t.k && s.subject_plural == t.subject_plural;
        });
    };
    CHECK(same(a.train, b.train));
    CHECK(same(a.valid, b.valid));
    CHECK(same(a.test, b.test));
    CHECK_FALSE(same(a.train, other.train));
    CHECK_FALSE(same(a.test, other.test));
    // the three corpora are different parts of one stream
    CHECK_FALSE(same(std::vector<Sentence>(a.train.begin(), a.train.begin() + 2000), a.valid));
    CHECK_FALSE(same(a.valid, a.test));
    // pinned, and reproduced by an independent Python implementation of the
    // documented draws: changes only if the generator or the recipe changes
    CHECK(farm::decode(a.train[0].ids) ==
          "<s> the goat near the donkeys near the pigs behind the rabbit sleeps quickly </s>");
    CHECK(farm::decode(a.train[19999].ids) ==
          "<s> the horses under the cats under the rabbits near the cats sleep quickly </s>");
}

// ---- agreement sets (§6.5) ----------------------------------------------------

TEST_CASE("farm: agreement sets, k = 1..6, every attractor opposite", "[data][farm][agreement]") {
    const auto sets = farm::make_agreement_sets(3);
    REQUIRE(sets.size() == 6);
    for (int k = 1; k <= 6; ++k) {
        INFO("k = " << k);
        const auto& set = sets[k - 1];
        CHECK(set.size() == 500);
        CHECK(test::first_grammar_errors(set, true) == "");
        int64_t plural = 0, not_opposite = 0;
        for (const Sentence& s : set) {
            CHECK(s.ids.size() == static_cast<std::size_t>(3 + 3 * k));
            plural += s.subject_plural;
            not_opposite += test::same_number_attractors(s);
        }
        CHECK(not_opposite == 0);
        // subject number uniform: 250 ± 5 standard deviations (11.2)
        INFO("plural subjects: " << plural << " of 500");
        CHECK(std::abs(plural - 250) < 56);
    }
    const auto again = farm::make_agreement_sets(3);
    const auto other = farm::make_agreement_sets(4);
    CHECK(again[5][499].ids == sets[5][499].ids);
    CHECK(other[0][0].ids != sets[0][0].ids);
    CHECK(farm::make_agreement_sets(3, 20)[0].size() == 20);
}

// ---- §2.8 subject-number task --------------------------------------------------

TEST_CASE("farm: subject-number training sets are balanced, k 1-3, attractors random", "[data][farm][subject]") {
    for (const int64_t n : {16, 256}) {
        INFO("n = " << n);
        const std::vector<Sentence> set = farm::make_subject_train_set(n, 11);
        REQUIRE(set.size() == static_cast<std::size_t>(n));
        CHECK(test::first_grammar_errors(set, true) == "");
        int64_t plural = 0;
        std::vector<int64_t> k_counts(3, 0), attractor_same(2, 0);
        for (const Sentence& s : set) {
            plural += s.subject_plural;
            REQUIRE((s.k >= 1 && s.k <= 3));
            ++k_counts[s.k - 1];
            attractor_same[1] += test::same_number_attractors(s);
            attractor_same[0] += s.k - test::same_number_attractors(s);
        }
        CHECK(plural == n / 2);
        if (n == 256) {
            INFO("k = 1..3 counts " << test::counts_str(k_counts) << "; attractors opposite / same "
                                    << test::counts_str(attractor_same));
            CHECK(test::chi_square_uniform(k_counts) < chi2_bound(2));
            CHECK(test::chi_square_uniform(attractor_same) < chi2_bound(1));
        }
        // labels are shuffled, not sorted
        auto by_label = [](const Sentence& a, const Sentence& b) { return a.subject_plural < b.subject_plural; };
        CHECK_FALSE(std::is_sorted(set.begin(), set.end(), by_label));
    }
    CHECK(farm::make_subject_train_set(16, 11)[15].ids == farm::make_subject_train_set(16, 11)[15].ids);
    CHECK_THROWS_WITH(farm::make_subject_train_set(15, 0), Contains("even"));
}

TEST_CASE("farm: subject-number test sets, k 1-3 and 4-6, every attractor opposite", "[data][farm][subject]") {
    const farm::SubjectTestSets sets = farm::make_subject_test_sets(5);
    struct Case {
        const char* name;
        const std::vector<Sentence>* set;
        int k_lo;
    };
    const std::vector<Case> cases = {{"in_distribution", &sets.in_distribution, 1},
                                     {"extrapolation", &sets.extrapolation, 4}};
    for (const Case& c : cases) {
        INFO(c.name);
        CHECK(c.set->size() == 500);
        CHECK(test::first_grammar_errors(*c.set, true) == "");
        std::vector<int64_t> k_counts(3, 0);
        int64_t not_opposite = 0;
        for (const Sentence& s : *c.set) {
            REQUIRE((s.k >= c.k_lo && s.k <= c.k_lo + 2));
            ++k_counts[s.k - c.k_lo];
            not_opposite += test::same_number_attractors(s);
        }
        CHECK(not_opposite == 0);
        INFO("k counts " << test::counts_str(k_counts));
        CHECK(test::chi_square_uniform(k_counts) < chi2_bound(2));
    }
    CHECK(farm::make_subject_test_sets(5).extrapolation[7].ids == sets.extrapolation[7].ids);
}

TEST_CASE("farm: the task sets follow the documented draw order", "[data][farm][reproducible]") {
    // opposite prefixes: SUBJ, then per PP: PREP, animal of the opposite number
    ag::Generator gen(9);
    auto r = [&gen](int64_t n) { return gen.randint(n); };
    auto opposite = [&r](int64_t k) {
        const int64_t subject = 4 + r(24);
        std::vector<int64_t> w = {1, 3, subject};
        for (int p = 0; p < k; ++p) {
            const int64_t prep = 28 + r(6);
            w.insert(w.end(), {prep, 3, 4 + 2 * r(12) + (1 - (subject - 4) % 2)});
        }
        return w;
    };
    const auto agreement = farm::make_agreement_sets(9, 3);
    for (int k = 1; k <= 6; ++k) {
        for (int i = 0; i < 3; ++i) CHECK(farm::decode(agreement[k - 1][i].ids) == farm::decode(opposite(k)));
    }
    gen = ag::Generator(9);
    const farm::SubjectTestSets tests = farm::make_subject_test_sets(9, 4);
    for (const auto* set : {&tests.in_distribution, &tests.extrapolation}) {
        const int64_t k_lo = set == &tests.in_distribution ? 1 : 4;
        for (const Sentence& s : *set) {
            const int64_t k = k_lo + r(3);
            CHECK(farm::decode(s.ids) == farm::decode(opposite(k)));
        }
    }
    // training set: shuffled labels, then per example k, SUBJ of that number, random PPs
    gen = ag::Generator(9);
    std::vector<int64_t> labels = {0, 0, 0, 1, 1, 1};
    for (int64_t i = 5; i > 0; --i) std::swap(labels[i], labels[r(i + 1)]);
    const std::vector<Sentence> train = farm::make_subject_train_set(6, 9);
    for (std::size_t n = 0; n < 6; ++n) {
        const int64_t k = 1 + r(3);
        std::vector<int64_t> w = {1, 3, 4 + 2 * r(12) + labels[n]};
        for (int p = 0; p < k; ++p) {
            const int64_t prep = 28 + r(6);
            w.insert(w.end(), {prep, 3, 4 + r(24)});
        }
        CHECK(farm::decode(train[n].ids) == farm::decode(w));
        CHECK(train[n].subject_plural == labels[n]);
    }
}

TEST_CASE("farm: log_probability is the generator's distribution", "[data][farm][distribution]") {
    // One sentence by hand: k = 0 (1/4), the dog (1/24), runs (1/12), no
    // object (1/4), no adverb (1/2).
    CHECK(farm::log_probability(farm::encode("<s> the dog runs </s>")) ==
          Approx(std::log(1.0 / 4 / 24 / 12 / 4 / 2)).epsilon(1e-14));
    // Every sentence with k = 0: their probabilities add up to p(k = 0) = 1/4.
    double total = 0;
    for (int64_t subject = farm::FIRST_NOUN; subject < farm::FIRST_NOUN + farm::N_NOUNS; ++subject)
        for (int lemma = 0; lemma < farm::N_LEMMAS; ++lemma) {
            std::vector<std::vector<int64_t>> objects{{}};
            for (int64_t n = farm::FIRST_NOUN; n < farm::FIRST_NOUN + farm::N_NOUNS; ++n)
                objects.push_back({farm::THE, n});
            for (int64_t m = farm::FIRST_MASS; m < farm::FIRST_MASS + farm::N_MASS; ++m) objects.push_back({m});
            for (const auto& object : objects)
                for (int64_t adverb = farm::FIRST_ADV - 1; adverb < farm::FIRST_ADV + farm::N_ADVS; ++adverb) {
                    std::vector<int64_t> s{farm::BOS, farm::THE, subject,
                                           farm::verb_id(lemma, farm::is_plural_noun(subject) ? 1 : 0)};
                    s.insert(s.end(), object.begin(), object.end());
                    if (adverb >= farm::FIRST_ADV) s.push_back(adverb);
                    s.push_back(farm::EOS);
                    total += std::exp(farm::log_probability(s));
                }
        }
    CHECK(total == Approx(0.25).epsilon(1e-12));
    // Not sentences of the grammar: a verb of the wrong number, four PPs.
    CHECK_THROWS_WITH(farm::log_probability(farm::encode("<s> the dog run </s>")),
                      Contains("is not a sentence of the farm grammar"));
    CHECK_THROWS_AS(farm::log_probability(farm::encode("<s> the dog near the cat near the cat near the cat near the "
                                                       "cat runs </s>")),
                    std::invalid_argument);
}
