#include "data/farm_language.h"

#include <algorithm>
#include <cmath>
#include <locale>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "data/shuffle.h"

namespace farm {

namespace {

constexpr std::array<std::string_view, VOCAB_SIZE> kVocabulary = {
    "<pad>", "<s>", "</s>", "the",
    // nouns 4-27: singular, plural of each animal
    "dog", "dogs", "cat", "cats", "cow", "cows", "pig", "pigs", "horse", "horses", "goat", "goats", "hen", "hens",
    "duck", "ducks", "fox", "foxes", "rabbit", "rabbits", "farmer", "farmers", "donkey", "donkeys",
    // prepositions 28-33
    "near", "behind", "beside", "with", "under", "by",
    // verbs 34-57: singular (3rd person), plural of each lemma
    "runs", "run", "eats", "eat", "sleeps", "sleep", "sees", "see", "likes", "like", "chases", "chase", "jumps", "jump",
    "walks", "walk", "follows", "follow", "watches", "watch", "pushes", "push", "finds", "find",
    // mass nouns 58-62
    "hay", "grass", "corn", "water", "mud",
    // adverbs 63-67
    "today", "again", "slowly", "quickly", "loudly"};

bool in_range(int64_t id, int64_t first, int n) { return id >= first && id < first + n; }

std::array<int64_t, N_LEMMAS> verbs_of_number(int plural) {
    std::array<int64_t, N_LEMMAS> ids{};
    for (int lemma = 0; lemma < N_LEMMAS; ++lemma) ids[lemma] = verb_id(lemma, plural);
    return ids;
}

int draw(ag::Generator& gen, int n) { return static_cast<int>(gen.randint(n)); }

// <s> the SUBJ: the start every sentence and prefix shares.
Sentence start(int64_t subject, int k) {
    Sentence s;
    s.ids = {BOS, THE, subject};
    s.subject_plural = is_plural_noun(subject) ? 1 : 0;
    s.k = k;
    return s;
}

int animal_of(int64_t noun) { return static_cast<int>((noun - FIRST_NOUN) / 2); }
int lemma_of(int64_t verb) { return static_cast<int>((verb - FIRST_VERB) / 2); }

// The Zipf exponent of the lecture's language: the value at which GPT,
// trained as the lecture trains it (5 epochs, seed 0), reaches the
// lecture's test perplexity 2.5305 (docs/farm_language.md, "Calibration").
constexpr double kLectureExponent = 3.34;
constexpr double kMaxExponent = 16;  // beyond it every choice is its first option to 1e-9

// PREP the NOUN after the noun `before`, the NOUN's number uniform.
void append_pp(Sentence& s, int64_t before, ag::Generator& gen, const Language& language) {
    const int64_t prep = FIRST_PREP + language.choose(gen, N_PREPS, animal_of(before));
    const int64_t noun = language.choose_noun(gen, animal_of(before) + 1);
    s.ids.insert(s.ids.end(), {prep, THE, noun});
}

void check_k(const char* what, int k) {
    if (k < 0) throw std::invalid_argument(fmt::format("{}: k = {}, expected k >= 0", what, k));
}

void check_count(const char* what, int64_t n) {
    if (n < 1) throw std::invalid_argument(fmt::format("{}: n = {}, expected at least 1", what, n));
}

}  // namespace

const std::array<std::string_view, VOCAB_SIZE>& vocabulary() { return kVocabulary; }

std::string_view token(int64_t id) {
    if (id < 0 || id >= VOCAB_SIZE) {
        throw std::invalid_argument(fmt::format("token: id {} is outside the vocabulary 0..{}", id, VOCAB_SIZE - 1));
    }
    return kVocabulary[id];
}

bool is_noun(int64_t id) { return in_range(id, FIRST_NOUN, N_NOUNS); }
bool is_plural_noun(int64_t id) { return is_noun(id) && (id - FIRST_NOUN) % 2 == 1; }
bool is_prep(int64_t id) { return in_range(id, FIRST_PREP, N_PREPS); }
bool is_verb(int64_t id) { return in_range(id, FIRST_VERB, N_VERBS); }
bool is_plural_verb(int64_t id) { return is_verb(id) && (id - FIRST_VERB) % 2 == 1; }
bool is_mass(int64_t id) { return in_range(id, FIRST_MASS, N_MASS); }
bool is_adverb(int64_t id) { return in_range(id, FIRST_ADV, N_ADVS); }

int64_t noun_id(int animal, int plural) { return FIRST_NOUN + 2 * animal + plural; }
int64_t verb_id(int lemma, int plural) { return FIRST_VERB + 2 * lemma + plural; }

const std::array<int64_t, N_LEMMAS>& verb_ids(int plural) {
    static const std::array<int64_t, N_LEMMAS> singular = verbs_of_number(0);
    static const std::array<int64_t, N_LEMMAS> plural_forms = verbs_of_number(1);
    return plural ? plural_forms : singular;
}

// ---- tokenizer ------------------------------------------------------------

std::vector<int64_t> encode(std::string_view sentence) {
    constexpr std::string_view space = " \t\n\r\f\v";
    std::vector<int64_t> ids;
    std::size_t pos = sentence.find_first_not_of(space);
    while (pos != std::string_view::npos) {
        const std::size_t end = std::min(sentence.find_first_of(space, pos), sentence.size());
        const std::string_view word = sentence.substr(pos, end - pos);
        int64_t id = 0;
        while (id < VOCAB_SIZE && kVocabulary[id] != word) ++id;
        if (id == VOCAB_SIZE) {
            throw std::invalid_argument(fmt::format("encode: unknown word '{}' at position {} (0-based) in \"{}\"",
                                                    word, ids.size(), sentence));
        }
        ids.push_back(id);
        pos = sentence.find_first_not_of(space, end);
    }
    return ids;
}

std::string decode(const std::vector<int64_t>& ids) {
    std::string text;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (i > 0) text += ' ';
        if (ids[i] < 0 || ids[i] >= VOCAB_SIZE) {
            throw std::invalid_argument(
                fmt::format("decode: id {} at position {} is outside the vocabulary 0..{}", ids[i], i, VOCAB_SIZE - 1));
        }
        text += kVocabulary[ids[i]];
    }
    return text;
}

// ---- the two languages --------------------------------------------------------

Language::Language(std::string name, double s) : name_(std::move(name)), s_(s) {
    if (!(s >= 0 && s <= kMaxExponent)) {
        throw std::invalid_argument(fmt::format("farm language: Zipf exponent {} is outside 0 … {}", s, kMaxExponent));
    }
    for (const int n : {2, 4, 5, 6, 12}) {
        // Zipf's law over ranks 1 … n: (r + 1)^-s / sum.
        std::vector<double> weight(n);
        double total = 0;
        for (int r = 0; r < n; ++r) total += weight[r] = std::pow(r + 1.0, -s);
        double cumulative = 0;
        for (int r = 0; r < n; ++r) {
            log_p_[n].push_back(std::log(weight[r] / total));
            cdf_[n].push_back(cumulative += weight[r] / total);
        }
        cdf_[n].back() = 1.0;  // every u < 1 finds its rank
    }
    double cumulative = 0;  // the noun slots 2r + number, each Zipf_12(r) / 2
    for (int slot = 0; slot < N_NOUNS; ++slot)
        cdf_[N_NOUNS].push_back(cumulative += std::exp(log_p_[12][slot / 2]) / 2);
    cdf_[N_NOUNS].back() = 1.0;
}

Language Language::lecture() { return Language("lecture", kLectureExponent); }
Language Language::uniform() { return Language("uniform", 0); }
Language Language::with_exponent(double s) { return Language(fmt::format("zipf {}", s), s); }

Language Language::named(std::string_view name) {
    if (name == "lecture") return lecture();
    if (name == "uniform") return uniform();
    constexpr std::string_view zipf = "zipf ";
    if (name.substr(0, zipf.size()) == zipf) {
        // with_exponent's own name, exactly: the shortest decimal that reads back as s
        std::istringstream in{std::string(name.substr(zipf.size()))};
        in.imbue(std::locale::classic());
        double s = 0;
        in >> std::noskipws >> s;
        if (!in.fail() && in.peek() == std::char_traits<char>::eof() && s >= 0 && s <= kMaxExponent &&
            fmt::format("zipf {}", s) == name)
            return with_exponent(s);
    }
    throw std::invalid_argument(
        fmt::format("unknown farm language {:?}: expected lecture, uniform or zipf S (0 <= S <= {})",
                    std::string(name.substr(0, 40)), kMaxExponent));
}

int Language::rank(ag::Generator& gen, int n) const {
    const std::vector<double>& cdf = cdf_[n];
    const double u = gen.uniform();
    return static_cast<int>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
}

int Language::choose(ag::Generator& gen, int n, int offset) const {
    if (is_uniform()) return draw(gen, n);  // every offset gives the same distribution
    return (offset + rank(gen, n)) % n;
}

int64_t Language::choose_noun(ag::Generator& gen, int offset) const {
    if (is_uniform()) return FIRST_NOUN + draw(gen, N_NOUNS);
    const int slot = rank(gen, N_NOUNS);
    return noun_id((offset + slot / 2) % N_ANIMALS, slot % 2);
}

double Language::log_p(int n, int offset, int option) const {
    if (is_uniform()) return -std::log(static_cast<double>(n));
    return log_p_[n][((option - offset) % n + n) % n];
}

double Language::log_p_noun(int offset, int64_t noun) const {
    return log_p(N_ANIMALS, offset, animal_of(noun)) - std::log(2.0);
}

// ---- the generator (draw order documented in the header) --------------------

Sentence sample_sentence(int k, ag::Generator& gen, const Language& language) {
    check_k("sample_sentence", k);
    Sentence s = start(FIRST_NOUN + draw(gen, N_NOUNS), k);
    const int64_t subject = s.ids[2];
    for (int i = 0; i < k; ++i) append_pp(s, s.ids.back(), gen, language);
    const int lemma = language.choose(gen, N_LEMMAS, animal_of(subject));
    s.ids.push_back(verb_id(lemma, s.subject_plural));
    const int object = language.choose(gen, OBJECT_CHOICES, lemma);  // 0, 1 the NOUN; 2 MASS; 3 none
    if (object < 2) {
        s.ids.insert(s.ids.end(), {THE, language.choose_noun(gen, animal_of(subject) + 1)});
    } else if (object == 2) {
        s.ids.push_back(FIRST_MASS + language.choose(gen, N_MASS, lemma));
    }
    if (language.choose(gen, ADVERB_CHOICES, lemma) == 0) {
        s.ids.push_back(FIRST_ADV + language.choose(gen, N_ADVS, lemma));
    }
    s.ids.push_back(EOS);
    return s;
}

Sentence opposite_prefix(int k, ag::Generator& gen, const Language& language) {
    check_k("opposite_prefix", k);
    Sentence s = start(FIRST_NOUN + draw(gen, N_NOUNS), k);
    for (int i = 0; i < k; ++i) {
        const int before = animal_of(s.ids.back());
        const int64_t prep = FIRST_PREP + language.choose(gen, N_PREPS, before);
        const int64_t noun = noun_id(language.choose(gen, N_ANIMALS, before + 1), 1 - s.subject_plural);
        s.ids.insert(s.ids.end(), {prep, THE, noun});
    }
    return s;
}

// ---- the grammar's probabilities -------------------------------------------

// Walks the sentence through the grammar, adding the log of each choice's
// probability: the generator's draws above, one by one.
double log_probability(const std::vector<int64_t>& s, const Language& language) {
    const auto bad = [&] {
        throw std::invalid_argument(fmt::format("\"{}\" is not a sentence of the farm grammar", decode(s)));
    };
    const size_t n = s.size();
    const auto at = [&](size_t i) { return i < n ? s[i] : int64_t{-1}; };
    if (at(0) != BOS || at(1) != THE || !is_noun(at(2))) bad();
    const int subject = animal_of(s[2]);
    double logp = std::log(1.0 / K_CHOICES) + std::log(1.0 / N_NOUNS);  // k, SUBJ
    size_t i = 3;
    int k = 0;
    for (; is_prep(at(i)); i += 3, ++k) {
        if (at(i + 1) != THE || !is_noun(at(i + 2))) bad();
        const int before = animal_of(s[i - 1]);
        logp += language.log_p(N_PREPS, before, static_cast<int>(s[i] - FIRST_PREP));  // PREP
        logp += language.log_p_noun(before + 1, s[i + 2]);                             // the (certain), NOUN
    }
    if (k >= K_CHOICES || !is_verb(at(i)) || is_plural_verb(at(i)) != is_plural_noun(s[2])) bad();
    const int lemma = lemma_of(s[i]);
    logp += language.log_p(N_LEMMAS, subject, lemma);  // its number is the subject's
    ++i;
    const auto object = [&](int slot) { return language.log_p(OBJECT_CHOICES, lemma, slot); };
    if (at(i) == THE) {
        if (!is_noun(at(i + 1))) bad();
        logp += std::log(std::exp(object(0)) + std::exp(object(1))) + language.log_p_noun(subject + 1, s[i + 1]);
        i += 2;
    } else if (is_mass(at(i))) {
        logp += object(2) + language.log_p(N_MASS, lemma, static_cast<int>(s[i] - FIRST_MASS));
        ++i;
    } else {
        logp += object(3);  // no object
    }
    if (is_adverb(at(i))) {
        logp += language.log_p(ADVERB_CHOICES, lemma, 0) +
                language.log_p(N_ADVS, lemma, static_cast<int>(s[i] - FIRST_ADV));
        ++i;
    } else {
        logp += language.log_p(ADVERB_CHOICES, lemma, 1);  // no adverb
    }
    if (at(i) != EOS || i + 1 != n) bad();  // </s> is then certain
    return logp;
}

// ---- corpora and tasks ------------------------------------------------------

Corpora make_corpora(uint64_t seed, const Language& language) {
    return make_corpora_up_to(seed, language, K_CHOICES - 1);
}

Corpora make_corpora_up_to(uint64_t seed, const Language& language, int k_max) {
    if (k_max < 0 || k_max > kMaxCorpusK)
        throw std::invalid_argument(
            fmt::format("make_corpora_up_to: k_max = {}, expected 0 … {} (a sentence of k PPs has up to 8 + 3k tokens)",
                        k_max, kMaxCorpusK));
    ag::Generator gen(seed);
    auto corpus = [&gen, &language, k_max](int64_t n) {
        std::vector<Sentence> sentences;
        sentences.reserve(n);
        for (int64_t i = 0; i < n; ++i) {
            const int k = draw(gen, k_max + 1);  // k uniform 0 … k_max
            sentences.push_back(sample_sentence(k, gen, language));
        }
        return sentences;
    };
    Corpora c;
    c.train = corpus(20000);
    c.valid = corpus(2000);
    c.test = corpus(2000);
    return c;
}

std::vector<std::vector<Sentence>> make_agreement_sets(uint64_t seed, const Language& language, int64_t n) {
    check_count("make_agreement_sets", n);
    ag::Generator gen(seed);
    std::vector<std::vector<Sentence>> sets(6);
    for (int k = 1; k <= 6; ++k) {
        for (int64_t i = 0; i < n; ++i) sets[k - 1].push_back(opposite_prefix(k, gen, language));
    }
    return sets;
}

std::vector<Sentence> make_subject_train_set(int64_t n, uint64_t seed, const Language& language) {
    check_count("make_subject_train_set", n);
    if (n % 2 != 0) {
        throw std::invalid_argument(
            fmt::format("make_subject_train_set: n = {} must be even (half singular, half plural subjects)", n));
    }
    ag::Generator gen(seed);
    std::vector<int> labels(n, 0);
    std::fill(labels.begin() + n / 2, labels.end(), 1);
    shuffle(labels, gen);
    std::vector<Sentence> set;
    set.reserve(n);
    for (const int plural : labels) {
        const int k = 1 + draw(gen, 3);  // k uniform 1-3
        Sentence s = start(noun_id(draw(gen, N_ANIMALS), plural), k);
        for (int i = 0; i < k; ++i) append_pp(s, s.ids.back(), gen, language);
        set.push_back(std::move(s));
    }
    return set;
}

SubjectTestSets make_subject_test_sets(uint64_t seed, const Language& language, int64_t n) {
    check_count("make_subject_test_sets", n);
    ag::Generator gen(seed);
    auto set = [&gen, &language, n](int k_lo) {
        std::vector<Sentence> examples;
        examples.reserve(n);
        for (int64_t i = 0; i < n; ++i) {
            const int k = k_lo + draw(gen, 3);
            examples.push_back(opposite_prefix(k, gen, language));
        }
        return examples;
    };
    SubjectTestSets sets;
    sets.in_distribution = set(1);
    sets.extrapolation = set(4);
    return sets;
}

}  // namespace farm
