#pragma once
// The farm language: the tiny synthetic English every language-model lesson
// runs on, exactly as docs/farm_language.md fixes it.
//
//   sentence := <s> the SUBJ PP{k} VERB OBJ? ADV? </s>
//   PP       := PREP the NOUN
//   OBJ      := the NOUN | MASS
//
// The subject is token 2; the k prepositional phrases ("attractors") take 3
// tokens each, so the verb sits at index 3 + 3k and is predicted from index
// 2 + 3k, 3k tokens after the subject.
//
// The two languages. Both make exactly these sentences, with the same
// draws in the same order; they differ in how likely each choice is
// (docs/farm_language.md):
//   - the lecture's language (the default): every animal has habits. A
//     choice among n options draws a rank r = 0 … n-1 by Zipf's law,
//         p(r) = (r + 1)^-s / (1^-s + 2^-s + … + n^-s),
//     and takes option (offset + r) mod n, the offset set by what came
//     before (table below); one exponent s for every choice, calibrated so
//     that GPT trained as the lecture trains it reaches the lecture's test
//     perplexity. A choice whose context is uniform stays uniform overall:
//     the subjects, prepositions, attractors and verbs are as frequent as
//     in the uniform language, and so are an object's kinds and an
//     adverb's presence; the object's and the adverb's words are not (the
//     verbs that favour an object or an adverb favour particular ones);
//   - the uniform language (s = 0): every choice uniform, the offsets
//     change nothing and are left out.
//
//   choice               over                                  offset
//   SUBJ                 24 nouns                              none (uniform in both)
//   PREP                 6                                     animal of the noun before it
//   a PP's NOUN          12 animals x 2 numbers                animal of the noun before it + 1
//   the verb's lemma     12 (its number is the subject's)      the subject's animal
//   OBJ's kind           4 slots: 0, 1 "the NOUN"; 2 MASS;     the lemma
//                        3 none
//   OBJ's NOUN           12 animals x 2 numbers                the subject's animal + 1
//   MASS                 5                                     the lemma
//   ADV or none          2 slots: 0 ADV; 1 none                the lemma
//   ADV                  5                                     the lemma
//   k (in the corpora)   0-3 (make_corpora_up_to: 0-k_max)     none (uniform in both)
// A noun's number is uniform and independent of everything before it: its
// draw takes slot 2r + number over 24 slots with p = Zipf_12(r) / 2.
//
// Random draws. Everything here is sampled with ag::Generator (SplitMix64):
// one draw per choice. In the uniform language a choice among n is
// randint(n) = floor(u * n) with u = (next_u64() >> 11) * 2^-53; in the
// lecture's language it is the rank r whose cumulative Zipf probability
// first exceeds u (r = the first index with u < P(0) + … + P(r)). The draws
// happen in exactly this order, so a reference implementation in another
// language reproduces every set from its seed ("one generator" below is
// ag::Generator(seed), whose SplitMix64 state starts at the seed); in the
// uniform language, with offsets 0 and draw(n) = randint(n):
//
//   sample_sentence(k):  SUBJ = 4 + randint(24)
//                        k times: PREP = 28 + draw(6), NOUN = 4 + draw(24)
//                        VERB = 34 + 2 draw(12) + plural(SUBJ)
//                        o = draw(4): 0,1 -> "the", 4 + draw(24)
//                                     2   -> 58 + draw(5)      3 -> no OBJ
//                        a = draw(2): 0   -> 63 + draw(5)      1 -> no ADV
//   opposite_prefix(k):  SUBJ = 4 + randint(24)
//                        k times: PREP = 28 + draw(6),
//                                 NOUN = 4 + 2 draw(12) + (1 - plural(SUBJ))
//                                 (the animal drawn alone: its number is fixed)
//   make_corpora:        one generator; train, then valid, then test; each
//                        sentence draws k = randint(4), then sample_sentence(k)
//   make_corpora_up_to(k_max): the same with k = randint(k_max + 1)
//                        (k_max = 3 is make_corpora, draw for draw)
//   make_agreement_sets: one generator; k = 1, ..., 6, each n opposite_prefix(k)
//   make_subject_train_set: one generator; labels n/2 zeros then n/2 ones,
//                        shuffled (data/shuffle.h), then per example in order:
//                        k = 1 + randint(3), SUBJ = 4 + 2 randint(12) + label,
//                        k times: PREP = 28 + draw(6), NOUN = 4 + draw(24)
//   make_subject_test_sets: one generator; in_distribution, then extrapolation;
//                        each example draws k = k_lo + randint(3), then
//                        opposite_prefix(k)
// In the lecture's language each draw(n) becomes (offset + rank) mod n, and
// a NOUN's draw(24) the slot 2r + number, animal (offset + r) mod 12.
//
// Each maker seeds its own generator, so the same seed gives the same stream
// of draws: give different sets different seeds.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "autograd/generator.h"

namespace farm {

// ---- vocabulary: 68 tokens, ids in the spec's order ---------------------
constexpr int64_t VOCAB_SIZE = 68;
constexpr int64_t PAD = 0;          // <pad>
constexpr int64_t BOS = 1;          // <s>
constexpr int64_t EOS = 2;          // </s>
constexpr int64_t THE = 3;          // the
constexpr int64_t FIRST_NOUN = 4;   // 24 nouns, singular then plural of each animal
constexpr int64_t FIRST_PREP = 28;  // 6 prepositions
constexpr int64_t FIRST_VERB = 34;  // 24 verbs, singular then plural of each lemma
constexpr int64_t FIRST_MASS = 58;  // 5 mass nouns
constexpr int64_t FIRST_ADV = 63;   // 5 adverbs
constexpr int N_ANIMALS = 12, N_NOUNS = 24, N_PREPS = 6, N_LEMMAS = 12, N_VERBS = 24, N_MASS = 5, N_ADVS = 5;

const std::array<std::string_view, VOCAB_SIZE>& vocabulary();  // token of each id
std::string_view token(int64_t id);                            // std::invalid_argument outside 0..67

// The 24 count nouns (4-27): plural = odd id. The 24 verbs (34-57): plural = odd id.
bool is_noun(int64_t id);
bool is_plural_noun(int64_t id);
bool is_prep(int64_t id);
bool is_verb(int64_t id);
bool is_plural_verb(int64_t id);
bool is_mass(int64_t id);
bool is_adverb(int64_t id);
int64_t noun_id(int animal, int plural);  // animal 0..11, plural 0/1
int64_t verb_id(int lemma, int plural);   // lemma 0..11, plural 0/1
// The 12 verb forms of one number (plural 0: runs eats ...; 1: run eat ...),
// the two groups the agreement test compares (§6.5).
const std::array<int64_t, N_LEMMAS>& verb_ids(int plural);

// ---- tokenizer ------------------------------------------------------------
// Whitespace-separated words to ids; "<s>", "</s>" and "<pad>" are words like
// any other (nothing is added). An unknown word throws std::invalid_argument
// naming the word and its 0-based position.
std::vector<int64_t> encode(std::string_view sentence);
// Ids to words joined by single spaces; an id outside 0..67 throws
// std::invalid_argument. decode(encode(s)) == s for single-spaced s.
std::string decode(const std::vector<int64_t>& ids);

// ---- the two languages ----------------------------------------------------
// A language of the family above: its name and its Zipf exponent s, with
// the cumulative Zipf tables every draw reads.
class Language {
public:
    static Language lecture();  // the default
    static Language uniform();
    // The family's member with exponent s in [0, 16] (farm_lm's --zipf),
    // named "zipf <s>": std::invalid_argument outside that range.
    static Language with_exponent(double s);
    // The language of that name(): "lecture", "uniform" or "zipf <s>"
    // (std::invalid_argument for any other text).
    static Language named(std::string_view name);

    const std::string& name() const { return name_; }
    double exponent() const { return s_; }
    bool is_uniform() const { return s_ == 0; }

    // One choice among n (n = 2, 4, 5, 6 or 12) after `offset`: the option
    // (offset + r) mod n, r drawn by Zipf's law; randint(n) when uniform.
    int choose(ag::Generator& gen, int n, int offset) const;
    // A count noun after `offset`: its animal (offset + r) mod 12 and a
    // uniform number, from one draw over the 24 slots 2r + number.
    int64_t choose_noun(ag::Generator& gen, int offset) const;
    // log p of `option` (0 … n-1) in that choice, and of a count noun
    // (its animal's rank and its number's 1/2).
    double log_p(int n, int offset, int option) const;
    double log_p_noun(int offset, int64_t noun) const;

private:
    Language(std::string name, double s);
    int rank(ag::Generator& gen, int n) const;

    std::string name_;
    double s_ = 0;
    // cdf_[n][r] = P(rank <= r) among n options (cdf_[24]: the noun slots,
    // P(slot <= 2r + number)); log_p_[n][r] = log P(rank = r).
    std::array<std::vector<double>, 25> cdf_{};
    std::array<std::vector<double>, 13> log_p_{};
};

// ---- the generator --------------------------------------------------------
// A full sentence (<s> ... </s>) or a prefix (<s> the SUBJ PP{k}, no verb).
struct Sentence {
    std::vector<int64_t> ids;
    int subject_plural = 0;  // the subject's number: 0 singular, 1 plural (the label)
    int k = 0;               // number of prepositional phrases (attractors)
};

// One sentence of the grammar with k PPs (draw order above).
Sentence sample_sentence(int k, ag::Generator& gen, const Language& language);
// A prefix <s> the SUBJ PP{k} whose every attractor noun has the number
// opposite to the subject's (so "copy the last noun" is always wrong).
Sentence opposite_prefix(int k, ag::Generator& gen, const Language& language);

// ---- the grammar's probabilities ------------------------------------------
// The structural choices are the same in both languages: the corpora's k
// uniform over 0-3, the object's kind over 4 slots, an adverb or none over
// 2; the same constants drive make_corpora, sample_sentence and
// log_probability.
constexpr int K_CHOICES = 4;       // make_corpora: k uniform over 0-3
constexpr int OBJECT_CHOICES = 4;  // 0, 1: "the NOUN"; 2: MASS; 3: none (1/2, 1/4, 1/4 uniform)
constexpr int ADVERB_CHOICES = 2;  // 0: an adverb; 1: none

// log p(s) of a full sentence <s> … </s> under make_corpora's distribution
// (k uniform over 0-3, then sample_sentence(k)). std::invalid_argument for a
// sequence the grammar cannot make.
double log_probability(const std::vector<int64_t>& sentence, const Language& language);

// ---- corpora (language modelling) -----------------------------------------
struct Corpora {
    std::vector<Sentence> train;  // 20,000 sentences, k uniform 0-3
    std::vector<Sentence> valid;  //  2,000
    std::vector<Sentence> test;   //  2,000
};
Corpora make_corpora(uint64_t seed, const Language& language);
// The same sizes with k uniform over 0 … k_max instead of 0-3 (draw order
// above): §2.8's control of lesson 01, a pre-training corpus whose
// sentences also put k = 4-6 attractors between subject and verb, so that
// the subject-number test's k = 4-6 is no longer extrapolation. A sentence
// with k PPs has at most 8 + 3k tokens; k_max is 0 … kMaxCorpusK (k = 10
// fills 38 of GPT's 40 learned positions), std::invalid_argument
// otherwise. log_probability is make_corpora's distribution (k 0-3), not
// this one's.
constexpr int kMaxCorpusK = 10;
Corpora make_corpora_up_to(uint64_t seed, const Language& language, int k_max);

// ---- agreement test (lecture 2 §6.4-6.5; this lecture §6.5, §7.3) ----------
// sets[k - 1], k = 1..6: n opposite prefixes each. k = 1-3 lies within the
// training lengths, k = 4-6 is extrapolation.
std::vector<std::vector<Sentence>> make_agreement_sets(uint64_t seed, const Language& language, int64_t n = 500);

// ---- §2.8 subject-number task ---------------------------------------------
// Prefixes labelled by subject_plural. Training set: n examples (the lessons
// use 16 or 256; n must be even), exactly half singular subjects, k uniform
// 1-3, attractor numbers random, independent of the subject.
std::vector<Sentence> make_subject_train_set(int64_t n, uint64_t seed, const Language& language);
struct SubjectTestSets {
    std::vector<Sentence> in_distribution;  // k uniform 1-3, every attractor opposite
    std::vector<Sentence> extrapolation;    // k uniform 4-6, every attractor opposite
};
SubjectTestSets make_subject_test_sets(uint64_t seed, const Language& language, int64_t n = 500);

}  // namespace farm
