// The shared training and evaluation code (lessons/common): language-model
// training, perplexity as docs/farm_language.md defines it, the agreement test,
// generation with and without the KV cache, the §2.8 classifier, and the
// progress reporter. Tiny models keep it fast (d 16, one layer).
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "catch.h"

#include "lesson_helpers.h"
#include "lessons/common/cli.h"
#include "lessons/common/evaluation.h"
#include "lessons/common/model_cache.h"
#include "lessons/common/progress.h"
#include "lessons/common/sharded_gradient.h"
#include "lessons/common/training.h"
#include "nn/optim.h"

using lessons::LmTrainOptions;
using nn::LMConfig;

namespace {

// A ModernLM small enough to train in a blink.
LMConfig tiny(nn::PosEncoding pos = nn::PosEncoding::Rope, int64_t window = 0) {
    LMConfig c = LMConfig::modern_lm();
    c.d_model = 16;
    c.n_layers = 1;
    c.n_heads = 2;
    c.n_kv_heads = 1;
    c.d_ff = 32;
    c.pos = pos;
    c.window = window;
    return c;
}

LMConfig tiny_gpt(int64_t max_len = 40) {
    LMConfig c = LMConfig::gpt();
    c.d_model = 16;
    c.n_layers = 1;
    c.n_heads = 2;
    c.n_kv_heads = 2;
    c.d_ff = 64;
    c.max_len = max_len;
    return c;
}

const farm::Corpora& corpora() {
    static const farm::Corpora c = farm::make_corpora(0, farm::Language::lecture());
    return c;
}

std::vector<farm::Sentence> first(const std::vector<farm::Sentence>& v, size_t n) {
    return {v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n)};
}

LmTrainOptions one_epoch() {
    LmTrainOptions options;
    options.epochs = 1;
    return options;
}

double max_weight_diff(const nn::Module& a, const nn::Module& b) {
    const auto pa = a.parameters(), pb = b.parameters();
    double diff = 0;
    for (size_t i = 0; i < pa.size(); ++i) diff = std::max(diff, ag::max_abs_diff(pa[i], pb[i]));
    return diff;
}

void fill(ag::Tensor t, double value) { std::fill(t.data(), t.data() + t.numel(), value); }

size_t count(const std::string& text, char c) { return static_cast<size_t>(std::count(text.begin(), text.end(), c)); }

}  // namespace

// ---- train_lm ----------------------------------------------------------------

TEST_CASE("train_lm: a tiny model's loss falls from log 68", "[lessons][training]") {
    nn::LanguageModel model(tiny(), 0);
    LmTrainOptions options;
    options.epochs = 3;
    options.lr = 1e-2;
    const auto logs = lessons::train_lm(model, first(corpora().train, 200), options);
    REQUIRE(logs.size() == 3);
    INFO("losses " << logs[0].train_loss << " " << logs[1].train_loss << " " << logs[2].train_loss);
    CHECK(logs[0].train_loss < std::log(68.0) + 0.5);  // starts near uniform
    CHECK(logs[1].train_loss < logs[0].train_loss);
    CHECK(logs[2].train_loss < logs[1].train_loss);
    for (int64_t e = 0; e < 3; ++e) {
        CHECK(logs[e].epoch == e + 1);
        CHECK(logs[e].seconds > 0);
        CHECK(logs[e].tokens_per_second > 0);
    }
}

TEST_CASE("train_lm: the same seeds give bitwise the same losses and weights", "[lessons][training]") {
    const auto train = first(corpora().train, 100);
    LmTrainOptions options;
    options.epochs = 2;
    options.shuffle_seed = 5;
    nn::LanguageModel a(tiny(), 1), b(tiny(), 1), c(tiny(), 1);
    const auto la = lessons::train_lm(a, train, options);
    const auto lb = lessons::train_lm(b, train, options);
    for (size_t e = 0; e < la.size(); ++e) CHECK(la[e].train_loss == lb[e].train_loss);
    CHECK(max_weight_diff(a, b) == 0.0);

    options.shuffle_seed = 6;  // another batch order: another model
    lessons::train_lm(c, train, options);
    CHECK(max_weight_diff(a, c) > 0.0);
}

TEST_CASE("train_lm is the documented loop: batch order from epoch_shuffle_seed, fresh AdamW", "[lessons][training]") {
    const auto train = first(corpora().train, 70);  // 3 batches, the last one short
    LmTrainOptions options;
    options.epochs = 1;
    options.shuffle_seed = 3;
    options.first_epoch = 4;  // as a 5th epoch would see them
    nn::LanguageModel model(tiny(), 2), by_hand(tiny(), 2);
    lessons::train_lm(model, train, options);

    ag::Generator order(lessons::epoch_shuffle_seed(3, 4));
    optim::AdamW adam(by_hand.parameters(), 1e-3, 0.9, 0.95, 1e-8, 0.01);
    lessons::ShardedGradient sharded(by_hand);
    for (const farm::LmBatch& batch : farm::make_lm_batches(train, 32, &order)) {
        adam.zero_grad();
        sharded.forward_backward(batch.packed_ids, batch.packed_targets, batch.starts);
        adam.step();
    }
    CHECK(max_weight_diff(model, by_hand) == 0.0);
    CHECK(lessons::epoch_shuffle_seed(3, 4) != lessons::epoch_shuffle_seed(3, 5));
    CHECK(lessons::epoch_shuffle_seed(0, 1) != lessons::epoch_shuffle_seed(1, 0));
}

TEST_CASE("train_lm: a cosine schedule trains too, and bad options are refused", "[lessons][training]") {
    nn::LanguageModel model(tiny(), 0);
    LmTrainOptions options;
    options.epochs = 1;
    options.cosine = true;
    options.warmup_steps = 2;
    CHECK(lessons::train_lm(model, first(corpora().train, 96), options).size() == 1);
    options.warmup_steps = 4;  // longer than the 3 steps of the run
    CHECK_THROWS_AS(lessons::train_lm(model, first(corpora().train, 96), options), std::invalid_argument);
    CHECK_THROWS_AS(lessons::train_lm(model, {}, LmTrainOptions{}), std::invalid_argument);
}

TEST_CASE("train_lm: a run that diverges stops with Diverged at the step it shows", "[lessons][training]") {
    // lr 1000: the first step's loss is log 68, its update throws the
    // weights far away, and the second step's loss (about 1e7 nats) has no
    // finite perplexity; a checkpoint of it would measure inf.
    nn::LanguageModel model(tiny(), 0);
    LmTrainOptions options = one_epoch();
    options.lr = 1000;
    CHECK_THROWS_WITH(lessons::train_lm(model, first(corpora().train, 96), options),
                      Catch::StartsWith("training diverged at epoch 1, step 2 of 3: the loss is") &&
                          Catch::EndsWith("its perplexity inf"));
    CHECK_THROWS_AS(lessons::train_lm(model, first(corpora().train, 96), options), lessons::Diverged);

    // lr 1e200: the second step's loss is NaN (inf - inf inside the
    // softmax), which backward() refuses: Diverged still, not backward's
    // error, so that farm_lm says what to do and exits 2.
    nn::LanguageModel other(tiny(), 0);
    options.lr = 1e200;
    CHECK_THROWS_AS(lessons::train_lm(other, first(corpora().train, 96), options), lessons::Diverged);
}

// ---- perplexity ----------------------------------------------------------------

TEST_CASE("perplexity of uniform logits is exactly the vocabulary size, 68", "[lessons][evaluation]") {
    nn::LanguageModel model(tiny(), 0);
    fill(model.head->weight, 0.0);  // no bias: every logit is 0
    CHECK(lessons::perplexity(model, first(corpora().test, 300)) == Approx(68.0).margin(1e-9));
}

TEST_CASE("perplexity counts every token after <s>, </s> included, pads excluded", "[lessons][evaluation]") {
    nn::LanguageModel model(tiny(), 3);
    // three sentences of different lengths, so the batch pads two of them
    std::vector<farm::Sentence> three(3);
    three[0].ids = farm::encode("<s> the dog runs </s>");
    three[1].ids = farm::encode("<s> the cats near the hen eat the corn quickly </s>");
    three[2].ids = farm::encode("<s> the pig sleeps today </s>");

    // By hand: each sentence alone (no padding), -log p of each next token.
    double nll = 0;
    int64_t tokens = 0;
    for (const farm::Sentence& s : three) {
        const int64_t L = static_cast<int64_t>(s.ids.size());
        const std::vector<double> input(s.ids.begin(), s.ids.end() - 1);
        const ag::Tensor logp = ag::log_softmax(model.forward(ag::Tensor::from({1, L - 1}, input)));
        for (int64_t t = 0; t + 1 < L; ++t) nll -= logp.at({0, t, s.ids[t + 1]});
        tokens += L - 1;
    }
    CHECK(tokens == 4 + 10 + 5);
    CHECK(lessons::perplexity(model, three) == Approx(std::exp(nll / static_cast<double>(tokens))).epsilon(1e-12));
}

// ---- agreement -----------------------------------------------------------------

// A hand-made model that reads only the last token: the blocks add nothing
// (their output projections are 0), so hidden = RMSNorm(tok_emb[last]).
// Plural nouns embed to +s e0, singular ones to -s e0, so the hidden state
// is ±h e0 with h = s / sqrt(s²/16 + 1e-5); the head gives plural verbs
// +c·hidden[0] and singular verbs -c·hidden[0]. With c > 0 it puts the verb
// in the last noun's number: on prefixes whose every attractor has the
// other number, always wrong, with p(correct) = e^{-hc} / (e^{-hc} + e^{hc}).
std::unique_ptr<nn::LanguageModel> last_noun_model(double c) {
    auto model = std::make_unique<nn::LanguageModel>(tiny(nn::PosEncoding::None), 0);
    nn::LanguageModel& m = *model;
    ag::NoGradGuard no_grad;
    for (const auto& layer : m.layers) {
        const auto& block = dynamic_cast<const nn::ModernBlock&>(*layer);
        fill(block.attn->wo->weight, 0.0);
        fill(block.mlp->w_down->weight, 0.0);
    }
    const double s = 2.0;
    fill(m.tok_emb->weight, 0.0);
    fill(m.head->weight, 0.0);
    for (int64_t id = farm::FIRST_NOUN; id < farm::FIRST_NOUN + farm::N_NOUNS; ++id)
        m.tok_emb->weight.data()[id * 16] = farm::is_plural_noun(id) ? s : -s;
    for (int plural = 0; plural < 2; ++plural)
        for (int64_t id : farm::verb_ids(plural)) m.head->weight.data()[id * 16] = plural ? c : -c;
    return model;
}

TEST_CASE("grammar_perplexity: the uniform language, sentence by sentence and on a corpus", "[lessons][evaluation]") {
    using lessons::grammar_perplexity;
    const auto sentence = [](const char* text, int k) {
        farm::Sentence s;
        s.ids = farm::encode(text);
        s.k = k;
        return s;
    };
    // k = 0, no object, no adverb: the · dog 1/24 · runs 1/4 · 1/12 · </s> 1/4 · 1/2
    CHECK(grammar_perplexity({sentence("<s> the dog runs </s>", 0)}, farm::Language::uniform()) ==
          Approx(std::exp(std::log(24.0 * 4 * 12 * 4 * 2) / 4)).epsilon(1e-14));
    // k = 1, an object noun and an adverb: dogs 1/24 · near 3/4 · 1/6 · the · cat 1/24 · run 1/3 · 1/12 ·
    // the 1/2 · cow 1/24 · quickly 1/2 · 1/5 · </s>
    const double p = 1.0 / 24 * (0.75 / 6 / 24) * (1.0 / 3 / 12) * (0.5 / 24) * (0.5 / 5);
    CHECK(grammar_perplexity({sentence("<s> the dogs near the cat run the cow quickly </s>", 1)},
                             farm::Language::uniform()) == Approx(std::exp(-std::log(p) / 10)).epsilon(1e-14));
    // On 20,000 sentences close to the grammar's entropy rate exp(E[-log p] / E[tokens]):
    // E[-log p] = log 24 + 1.5 (log 6 + log 24) + log 4 + log 12 + E[object] + E[adverb or </s>],
    // E[tokens] = 2 + 1.5·3 + 1 + 1.25 + 0.5 + 1 = 10.25
    const double object = 0.5 * std::log(2.0 * 24) + 0.25 * std::log(4.0 * 5) + 0.25 * std::log(4.0);
    const double ending = 0.5 * std::log(10.0) + 0.5 * std::log(2.0);
    const double nll = std::log(24.0) + 1.5 * std::log(6.0 * 24) + std::log(4.0) + std::log(12.0) + object + ending;
    CHECK(grammar_perplexity(farm::make_corpora(0, farm::Language::uniform()).train, farm::Language::uniform()) ==
          Approx(std::exp(nll / 10.25)).margin(0.01));
}

TEST_CASE("grammar_perplexity: the lecture's language on a corpus is near its entropy rate", "[lessons][evaluation]") {
    // E[-log p] per sentence from docs/farm_language.md's table, each choice
    // a Zipf law with s = 3.34 over its options, rotated by its context:
    // k, SUBJ uniform; per PP a PREP (6) and an animal (12) of uniform number;
    // the lemma (12); the object's kind over 4 slots rotated by the lemma,
    // then its animal (12, uniform number) or its MASS (5); the adverb or
    // none over 2 slots, then the adverb (5). E[tokens] is 10.25 as in the
    // uniform language (the kinds keep their overall odds).
    const double s = 3.34;
    const auto zipf = [s](int n) {
        std::vector<double> p(n);
        double total = 0;
        for (int r = 0; r < n; ++r) total += p[r] = std::pow(r + 1.0, -s);
        for (double& x : p) x /= total;
        return p;
    };
    const auto entropy = [](const std::vector<double>& p) {
        double h = 0;
        for (const double x : p) h -= x > 0 ? x * std::log(x) : 0;
        return h;
    };
    const double noun = std::log(2.0) + entropy(zipf(12));
    double object = 0;  // mean over the 4 offsets of the kind's entropy and its word's
    for (int offset = 0; offset < 4; ++offset) {
        std::vector<double> kind(3, 0.0);  // the NOUN (slots 0, 1), MASS (2), none (3)
        for (int r = 0; r < 4; ++r) {
            const int slot = (offset + r) % 4;
            kind[slot < 2 ? 0 : slot - 1] += zipf(4)[r];
        }
        object += (entropy(kind) + kind[0] * noun + kind[1] * entropy(zipf(5))) / 4;
    }
    const double nll = std::log(4.0) + std::log(24.0) + 1.5 * (entropy(zipf(6)) + noun) + entropy(zipf(12)) + object +
                       entropy(zipf(2)) + 0.5 * entropy(zipf(5));
    INFO("expected " << std::exp(nll / 10.25) << " (" << nll << " nats over 10.25 tokens)");
    CHECK(std::exp(nll / 10.25) == Approx(2.4629).margin(1e-4));  // docs/farm_language.md's expectation
    const farm::Language lecture = farm::Language::lecture();
    CHECK(lessons::grammar_perplexity(farm::make_corpora(0, lecture).train, lecture) ==
          Approx(std::exp(nll / 10.25)).margin(0.01));
}

TEST_CASE("agreement: a model that copies the last noun's number fails every opposite prefix",
          "[lessons][evaluation]") {
    const double c = 0.3, h = 2.0 / std::sqrt(4.0 / 16 + 1e-5);
    const double follows = std::exp(-h * c) / (std::exp(-h * c) + std::exp(h * c));
    const auto sets = farm::make_agreement_sets(0, farm::Language::lecture(), 40);
    const std::vector<std::vector<farm::Sentence>> three(sets.begin(), sets.begin() + 3);

    const auto copier = lessons::agreement_per_k(*last_noun_model(c), three);
    REQUIRE(copier.size() == 3);
    for (const auto& r : copier) {
        CHECK(r.accuracy == 0.0);
        CHECK(r.p_correct == Approx(follows).epsilon(1e-12));
    }
    // The opposite model (c < 0) puts the verb in the other number than the
    // last noun's: on these prefixes, the subject's.
    const auto contrarian = lessons::agreement(*last_noun_model(-c), sets[5]);
    CHECK(contrarian.accuracy == 1.0);
    CHECK(contrarian.p_correct == Approx(1.0 - follows).epsilon(1e-12));
    // Equal masses cannot tell: p(correct) 0.5, and a tie is not a win.
    const auto blind = lessons::agreement(*last_noun_model(0.0), sets[0]);
    CHECK(blind.accuracy == 0.0);
    CHECK(blind.p_correct == 0.5);
}

TEST_CASE("agreement: batched result equals each prefix run alone", "[lessons][evaluation]") {
    const nn::LanguageModel model(tiny(), 4);
    auto sets = farm::make_agreement_sets(1, farm::Language::lecture(), 10);
    std::vector<farm::Sentence> mixed = sets[0];  // k = 1 and k = 4 in one batch: padded rows
    mixed.insert(mixed.end(), sets[3].begin(), sets[3].end());

    double accuracy = 0, p = 0;
    for (const farm::Sentence& s : mixed) {
        const int64_t L = static_cast<int64_t>(s.ids.size());
        const ag::Tensor probs =
            ag::softmax(model.forward(ag::Tensor::from({1, L}, std::vector<double>(s.ids.begin(), s.ids.end()))));
        double mass[2] = {0, 0};
        for (int plural = 0; plural < 2; ++plural)
            for (int64_t id : farm::verb_ids(plural)) mass[plural] += probs.at({0, L - 1, id});
        accuracy += mass[s.subject_plural] > mass[1 - s.subject_plural];
        p += mass[s.subject_plural] / (mass[0] + mass[1]);
    }
    const auto r = lessons::agreement(model, mixed);
    CHECK(r.accuracy == Approx(accuracy / 20).margin(1e-15));
    CHECK(r.p_correct == Approx(p / 20).epsilon(1e-12));
}

// ---- generation ----------------------------------------------------------------

TEST_CASE("generation: the KV cache gives the same tokens as rerunning the sequence", "[lessons][generation]") {
    const std::vector<int64_t> prompt = farm::encode("<s> the dogs near the cat");
    struct Case {
        const char* name;
        LMConfig cfg;
    };
    // RoPE with full attention; a window of 3 (rolling buffer of 2 slots,
    // the prompt alone is longer); learned positions (GPT).
    for (const Case& c :
         {Case{"rope", tiny()}, Case{"rope, window 3", tiny(nn::PosEncoding::Rope, 3)}, Case{"gpt", tiny_gpt()}}) {
        INFO(c.name);
        nn::LanguageModel model(c.cfg, 7);
        lessons::train_lm(model, first(corpora().train, 64), one_epoch());
        for (const auto sampling : {lessons::Sampling::greedy(), lessons::Sampling::with_temperature(1.0)}) {
            INFO("temperature " << sampling.temperature);
            ag::Generator g1(11), g2(11);
            const auto cached = lessons::generate(model, prompt, 25, sampling, g1);
            const auto uncached = lessons::generate_uncached(model, prompt, 25, sampling, g2);
            INFO(farm::decode(cached) << "\n" << farm::decode(uncached));
            CHECK(cached == uncached);
            CHECK(std::equal(prompt.begin(), prompt.end(), cached.begin()));
            CHECK(cached.size() <= prompt.size() + 25);
            CHECK((cached.size() == prompt.size() + 25 || cached.back() == farm::EOS));
        }
    }
}

TEST_CASE("generation: learned positions stop at the context, and </s> ends a sentence", "[lessons][generation]") {
    nn::LanguageModel gpt(tiny_gpt(8), 0);
    ag::Generator gen(0);
    const std::vector<int64_t> prompt = farm::encode("<s> the dogs");
    const auto out = lessons::generate(gpt, prompt, 100, lessons::Sampling::greedy(), gen);
    // at most 8 tokens read, so at most 9 in the sequence
    CHECK(out.size() <= 9);
    CHECK((out.size() == 9 || out.back() == farm::EOS));
    CHECK(lessons::generate_uncached(gpt, prompt, 100, lessons::Sampling::greedy(), gen) == out);
    CHECK_THROWS_AS(lessons::generate(gpt, farm::encode("<s> the dogs near the cat near the hen"), 5,
                                      lessons::Sampling::greedy(), gen),
                    std::invalid_argument);

    // A model whose head sees only </s>: its row is the sign of the last
    // hidden state, so </s> gets logit Σ|h_j| > 0 and every other token 0.
    nn::LanguageModel stopper(tiny(), 0);
    fill(stopper.head->weight, 0.0);
    const ag::Tensor h = stopper.hidden(ag::Tensor::from({1, 3}, {1, 3, 5}));
    for (int64_t j = 0; j < 16; ++j) stopper.head->weight.data()[farm::EOS * 16 + j] = h.at({0, 2, j}) > 0 ? 1.0 : -1.0;
    const auto stopped = lessons::generate(stopper, {1, 3, 5}, 10, lessons::Sampling::greedy(), gen);
    CHECK(stopped == std::vector<int64_t>{1, 3, 5, farm::EOS});
    CHECK(lessons::generate(stopper, {1, 3, 5}, 0, lessons::Sampling::greedy(), gen) == std::vector<int64_t>{1, 3, 5});
}

TEST_CASE("generation: other positions stop after kMaxSequence tokens however many are asked for",
          "[lessons][generation]") {
    // A model that never ends a sentence: the final norm keeps only
    // component 0 of the hidden state, h = (±r, 0, …, 0) with r > 0, and
    // the head maps it to "the" (+h0) and "dog" (-h0): one of the two
    // always has the largest logit, every other token (</s> too) gets 0.
    nn::LanguageModel model(tiny(), 0);
    auto& norm = dynamic_cast<nn::RMSNorm&>(*model.final_norm);
    fill(norm.weight, 0.0);
    norm.weight.data()[0] = 1.0;
    fill(model.head->weight, 0.0);
    const int64_t the = farm::encode("the").at(0), dog = farm::encode("dog").at(0);
    model.head->weight.data()[the * 16] = 1.0;
    model.head->weight.data()[dog * 16] = -1.0;
    ag::Generator gen(0);
    const auto out = lessons::generate(model, {farm::BOS}, 5000, lessons::Sampling::greedy(), gen);
    // kMaxSequence tokens read, and the one predicted at the last of them
    CHECK(out.size() == static_cast<size_t>(lessons::kMaxSequence) + 1);
    CHECK(std::count(out.begin(), out.end(), farm::EOS) == 0);
    CHECK(lessons::generation_context(model.config()) == lessons::kMaxSequence);
    CHECK(lessons::generation_context(tiny_gpt(8)) == 8);
}

TEST_CASE("generation: <pad> and <s> are never chosen, greedy or sampled", "[lessons][generation]") {
    // Every logit 0: greedy takes the first token it may (</s>, not <pad>
    // at id 0), sampling draws the 66 others uniformly.
    nn::LanguageModel model(tiny(), 0);
    fill(model.head->weight, 0.0);
    ag::Generator gen(3);
    CHECK(lessons::generate(model, {farm::BOS}, 5, lessons::Sampling::greedy(), gen) ==
          std::vector<int64_t>{farm::BOS, farm::EOS});
    std::vector<int64_t> drawn;
    while (drawn.size() < 2000) {
        const auto out = lessons::generate(model, {farm::BOS}, 40, lessons::Sampling::with_temperature(1.0), gen);
        drawn.insert(drawn.end(), out.begin() + 1, out.end());
    }
    CHECK(std::count(drawn.begin(), drawn.end(), farm::PAD) == 0);
    CHECK(std::count(drawn.begin(), drawn.end(), farm::BOS) == 0);
    CHECK(std::count(drawn.begin(), drawn.end(), farm::EOS) > 0);
}

// ---- progress ------------------------------------------------------------------

TEST_CASE("progress: piped, exactly one line per epoch", "[lessons][progress]") {
    std::FILE* out = std::tmpfile();
    lessons::Progress progress(out, false);
    nn::LanguageModel model(tiny(), 0);
    LmTrainOptions options;
    options.epochs = 2;
    lessons::train_lm(model, first(corpora().train, 96), options, &progress);
    const std::string text = test::read_stream(out);
    std::fclose(out);
    INFO(text);
    CHECK(count(text, '\n') == 2);
    CHECK(count(text, '\r') == 0);
    CHECK(text.rfind("epoch 1/2  loss ", 0) == 0);
    CHECK(text.find("\nepoch 2/2  loss ") != std::string::npos);
    CHECK(text.find("tok/s") != std::string::npos);
}

TEST_CASE("progress: on a terminal, '\\r' updates then the epoch's line", "[lessons][progress]") {
    std::FILE* out = std::tmpfile();
    lessons::Progress progress(out, true);
    progress.min_interval_seconds = 0;  // every step
    progress.begin(2, 3);
    for (int64_t e = 1; e <= 2; ++e) {
        for (int64_t s = 1; s <= 3; ++s) progress.step(e, s, 4.0 - static_cast<double>(s), 1000.0);
        progress.epoch_done(e, 3.0, 1000.0, 1.5);
    }
    const std::string text = test::read_stream(out);
    std::fclose(out);
    INFO(text);
    CHECK(count(text, '\r') == 2 * (3 + 1));  // three updates and the summary, per epoch
    CHECK(count(text, '\n') == 2);
    CHECK(text.find("\repoch 1/2  step 2/3  loss 2.0000  1,000 tok/s  ") != std::string::npos);
    CHECK(text.find(" left") != std::string::npos);
    CHECK(text.find("\repoch 2/2  loss 3.0000  1,000 tok/s  1.5 s") != std::string::npos);
    CHECK(text.back() == '\n');

    // the rate limit: with a long interval only the first step shows
    std::FILE* slow = std::tmpfile();
    lessons::Progress limited(slow, true);
    limited.min_interval_seconds = 3600;
    limited.begin(1, 100);
    for (int64_t s = 1; s <= 100; ++s) limited.step(1, s, 1.0, 1.0);
    CHECK(count(test::read_stream(slow), '\r') == 1);
    std::fclose(slow);
}

TEST_CASE("progress: durations and counts read as a person writes them", "[lessons][progress]") {
    CHECK(lessons::format_duration(17.34) == "17.3 s");
    CHECK(lessons::format_duration(245) == "4m05s");
    CHECK(lessons::format_duration(3720) == "1h02m");
    CHECK(lessons::group_thousands(1234567.4) == "1,234,567");
    CHECK(lessons::group_thousands(999) == "999");
    CHECK(lessons::group_thousands(0) == "0");
}

TEST_CASE("cached_lm: trains once, then loads the same model and logs", "[lessons][cache]") {
    const auto dir = test::scratch_path("cache");
    const farm::Corpora corpora = farm::make_corpora(0, farm::Language::lecture());
    const std::vector<farm::Sentence> train(corpora.train.begin(), corpora.train.begin() + 64);
    LmTrainOptions options;
    options.epochs = 1;
    options.batch_size = 16;

    const auto first = lessons::cached_lm(dir, "tiny", tiny(), 3, train, options);
    CHECK(first.status == "trained");
    CHECK_FALSE(first.from_cache);
    REQUIRE(first.logs.size() == 1);
    CHECK(first.logs[0].step_losses.size() == 4);

    const auto second = lessons::cached_lm(dir, "tiny", tiny(), 3, train, options);
    CHECK(second.from_cache);
    CHECK_THAT(second.status, Catch::StartsWith("loaded from"));
    const auto a = first.model->named_parameters(), b = second.model->named_parameters();
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) CHECK(ag::max_abs_diff(a[i].second, b[i].second) == 0.0);
    CHECK(second.logs[0].step_losses == first.logs[0].step_losses);
    CHECK(second.logs[0].train_loss == first.logs[0].train_loss);

    SECTION("another run's file is stale and retrained") {
        LmTrainOptions other = options;
        other.lr = 2e-3;
        const auto third = lessons::cached_lm(dir, "tiny", tiny(), 3, train, other);
        CHECK_FALSE(third.from_cache);
        CHECK_THAT(third.status, Catch::Contains("stale"));
        CHECK(lessons::cached_lm(dir, "tiny", tiny(), 3, train, other).from_cache);
    }
    SECTION("a truncated file is detected and retrained") {
        std::filesystem::resize_file(first.file, std::filesystem::file_size(first.file) / 2);
        const auto third = lessons::cached_lm(dir, "tiny", tiny(), 3, train, options);
        CHECK_FALSE(third.from_cache);
        CHECK_THAT(third.status, Catch::Contains("unusable"));
        const auto c = third.model->named_parameters();
        for (size_t i = 0; i < a.size(); ++i) CHECK(ag::max_abs_diff(a[i].second, c[i].second) == 0.0);
    }
    SECTION("an unnamed run is named after what made it") {
        const auto named = lessons::cached_lm(dir, tiny(), 3, train, options);
        CHECK_THAT(named.file.filename().string(), Catch::StartsWith("modern_lm-"));
        CHECK(lessons::cached_lm(dir, tiny(), 3, train, options).from_cache);
        CHECK_FALSE(lessons::cached_lm(dir, tiny(), 4, train, options).from_cache);
    }
    CHECK_THROWS_AS(lessons::cached_lm(dir, "../escape", tiny(), 3, train, options), std::invalid_argument);
    std::filesystem::remove_all(dir);
}

namespace {

// The 64-sentence, one-epoch run the cache tests train: a blink.
struct CacheRun {
    std::vector<farm::Sentence> train = first(corpora().train, 64);
    LmTrainOptions options = [] {
        LmTrainOptions o;
        o.epochs = 1;
        o.batch_size = 16;
        return o;
    }();
    lessons::CachedLm run(const std::filesystem::path& dir) const {
        return lessons::cached_lm(dir, "tiny", tiny(), 3, train, options);
    }
};

// Bit for bit (NaN included, -0 apart from 0).
bool same_parameters(const nn::Module& a, const nn::Module& b) {
    const auto pa = a.parameters(), pb = b.parameters();
    if (pa.size() != pb.size()) return false;
    for (size_t i = 0; i < pa.size(); ++i)
        if (pa[i].shape() != pb[i].shape() ||
            std::memcmp(pa[i].data(), pb[i].data(), static_cast<size_t>(pa[i].numel()) * sizeof(double)) != 0)
            return false;
    return true;
}

std::vector<std::string> files_in(const std::filesystem::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace

// The models a lesson part compares train side by side, one per thread, and
// must be exactly what cached_lm gives one after the other.
TEST_CASE("cached_lms: the uncached runs train side by side, to the same models, logs and statuses",
          "[lessons][cache]") {
    const auto dir = test::scratch_path("cache_side_by_side"), alone = test::scratch_path("cache_alone");
    const CacheRun setup;
    const std::vector<lessons::LmRun> runs{{tiny(), 3}, {tiny(), 4}, {tiny(), 5}};
    CHECK_FALSE(lessons::cached_lm(dir, tiny(), 5, setup.train, setup.options).from_cache);  // already there

    std::FILE* out = std::tmpfile();
    lessons::Progress progress(out, false);
    const ag::ThreadCountGuard two(2);
    const auto got = lessons::cached_lms(dir, runs, setup.train, setup.options, &progress);
    REQUIRE(got.size() == 3);
    const std::string shown = test::read_stream(out);
    std::fclose(out);
    INFO(shown);
    CHECK(got[0].status == "trained");
    CHECK(got[1].status == "trained");
    CHECK(got[2].from_cache);
    // one line per run that trained beside another, none for the cached one
    CHECK(std::count(shown.begin(), shown.end(), '\n') == 2);
    CHECK(shown.find("modern_lm seed 3 (d 16, 1 layers, 2 query / 1 KV heads, rope half positions, full attention): 1 "
                     "epoch side by side") != std::string::npos);
    CHECK(shown.find("modern_lm seed 4 (d 16, 1 layers, 2 query / 1 KV heads, rope half positions, full attention): 1 "
                     "epoch side by side") != std::string::npos);
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto one = lessons::cached_lm(alone, runs[i].config, runs[i].init_seed, setup.train, setup.options);
        CHECK(same_parameters(*got[i].model, *one.model));
        CHECK(got[i].logs[0].step_losses == one.logs[0].step_losses);
        CHECK(got[i].file.filename() == one.file.filename());
    }
    // a second call loads every one of them
    for (const auto& run : lessons::cached_lms(dir, runs, setup.train, setup.options)) CHECK(run.from_cache);
    std::filesystem::remove_all(dir);

    // 3 runs on 2 threads: a round of two side by side, then the third alone
    // on both threads, showing its epochs
    std::FILE* odd = std::tmpfile();
    lessons::Progress odd_progress(odd, false);
    const auto three = lessons::cached_lms(dir, runs, setup.train, setup.options, &odd_progress);
    const std::string odd_shown = test::read_stream(odd);
    std::fclose(odd);
    INFO(odd_shown);
    CHECK(odd_shown.find("seed 3 (") != std::string::npos);
    CHECK(odd_shown.find("seed 4 (") != std::string::npos);
    CHECK(odd_shown.find("seed 5") == std::string::npos);
    CHECK(odd_shown.find("epoch 1/1  loss") != std::string::npos);
    for (size_t i = 0; i < runs.size(); ++i) {
        CHECK(three[i].status == "trained");
        CHECK(same_parameters(*three[i].model, *got[i].model));
    }
    std::filesystem::remove_all(dir);
    std::filesystem::remove_all(alone);
}

// A cache poisoned with NaN used to load, and a lesson printed ppl = -nan.
TEST_CASE("cached_lm: a cache whose data bytes changed is corrupt: retrained to the same numbers", "[lessons][cache]") {
    const auto dir = test::scratch_path("cache_poisoned");
    const CacheRun setup;
    const auto fresh = setup.run(dir);
    {
        std::fstream file(fresh.file, std::ios::binary | std::ios::in | std::ios::out);
        const double nan = std::nan("");
        file.seekp(-8, std::ios::end);  // the last weight of the head
        file.write(reinterpret_cast<const char*>(&nan), sizeof nan);
    }
    const auto again = setup.run(dir);
    CHECK_FALSE(again.from_cache);
    CHECK_THAT(again.status, Catch::Contains("checksum mismatch") && Catch::EndsWith("retrained"));
    CHECK(same_parameters(*again.model, *fresh.model));
    CHECK(setup.run(dir).from_cache);  // the file was rewritten
    std::filesystem::remove_all(dir);
}

TEST_CASE("cached_lm: an entry that is not a regular file is refused before any training", "[lessons][cache]") {
    const auto dir = test::scratch_path("cache_fifo");
    const CacheRun setup;
    const auto fresh = setup.run(dir);
    std::filesystem::remove(fresh.file);
    REQUIRE(::mkfifo(fresh.file.c_str(), 0600) == 0);
    CHECK_THROWS_AS(setup.run(dir), lessons::UsageError);  // a lesson's exit status 2
    CHECK_THROWS_WITH(setup.run(dir), Catch::Contains("exists and is not a regular file"));
    CHECK(std::filesystem::is_fifo(fresh.file));
}

// Two lessons sharing out/ used to race on the cache file's one temporary
// name (3 of 25 concurrent lesson 03 runs failed).
TEST_CASE("cached_lm: two runs of one entry at once: one trains, the other waits and loads", "[lessons][cache]") {
    const auto dir = test::scratch_path("cache_concurrent");
    const CacheRun setup;
    std::vector<lessons::CachedLm> runs(2);
    std::vector<std::string> errors(2);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < runs.size(); ++i)
        threads.emplace_back([&, i] {
            try {
                runs[i] = setup.run(dir);
            } catch (const std::exception& e) {
                errors[i] = e.what();
            }
        });
    for (std::thread& t : threads) t.join();
    REQUIRE(errors == std::vector<std::string>(2));
    const bool first_trained = !runs[0].from_cache;
    const auto& trained = runs[first_trained ? 0 : 1];
    const auto& loaded = runs[first_trained ? 1 : 0];
    CHECK(trained.status == "trained");
    CHECK_THAT(loaded.status, Catch::StartsWith("loaded from"));
    CHECK(same_parameters(*trained.model, *loaded.model));
    CHECK(loaded.logs[0].step_losses == trained.logs[0].step_losses);
    // The entry and its lock, and no temporary file.
    CHECK(files_in(dir / "models") == std::vector<std::string>{"tiny.safetensors", "tiny.safetensors.lock"});
    std::filesystem::remove_all(dir);
}
