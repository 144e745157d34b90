// Batches: right padding with <pad>, targets shifted by one, the -100 loss
// mask, token counts, seeded shuffling, prefix batches.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "catch.h"

#include "autograd/autograd.h"
#include "data/batching.h"
#include "farm_checks.h"

using Catch::Contains;
using farm::Sentence;

namespace {

std::vector<int64_t> row(const ag::Tensor& t, int64_t b) {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < t.size(1); ++i) out.push_back(static_cast<int64_t>(t.at({b, i})));
    return out;
}

Sentence sentence(const char* text) {
    Sentence s{farm::encode(text), 0, 0};
    s.subject_plural = farm::is_plural_noun(s.ids[2]) ? 1 : 0;
    return s;
}

}  // namespace

TEST_CASE("batching: language-model batch of three sentences, by hand", "[data][batching]") {
    const std::vector<Sentence> sentences = {
        sentence("<s> the dog runs the hay </s>"),  // L = 7
        sentence("<s> the cats eat </s>"),          // L = 5
        sentence("<s> the pig sleeps today </s>"),  // L = 6
    };
    const auto batches = farm::make_lm_batches(sentences, 2);
    REQUIRE(batches.size() == 2);
    const int64_t P = farm::PAD, X = farm::IGNORE_INDEX;

    const farm::LmBatch& a = batches[0];
    CHECK(a.ids.shape() == ag::Shape{2, 6});
    CHECK(a.targets.shape() == ag::Shape{2, 6});
    CHECK(row(a.ids, 0) == std::vector<int64_t>{1, 3, 4, 34, 3, 58});
    CHECK(row(a.targets, 0) == std::vector<int64_t>{3, 4, 34, 3, 58, 2});
    CHECK(row(a.ids, 1) == std::vector<int64_t>{1, 3, 7, 37, P, P});
    CHECK(row(a.targets, 1) == std::vector<int64_t>{3, 7, 37, 2, X, X});
    CHECK(a.tokens == 6 + 4);
    // packed: the real rows end to end
    CHECK(a.starts == std::vector<int64_t>{0, 6, 10});
    CHECK(a.packed_ids.to_vector() == std::vector<double>{1, 3, 4, 34, 3, 58, 1, 3, 7, 37});
    CHECK(a.packed_targets.to_vector() == std::vector<double>{3, 4, 34, 3, 58, 2, 3, 7, 37, 2});

    const farm::LmBatch& b = batches[1];  // the last batch is smaller, padded to its own length
    CHECK(b.ids.shape() == ag::Shape{1, 5});
    CHECK(row(b.ids, 0) == std::vector<int64_t>{1, 3, 10, 38, 63});
    CHECK(row(b.targets, 0) == std::vector<int64_t>{3, 10, 38, 63, 2});
    CHECK(b.tokens == 5);
}

TEST_CASE("batching: the train corpus, every token counted once and padding masked", "[data][batching]") {
    const farm::Corpora c = farm::make_corpora(0, farm::Language::lecture());
    int64_t expected_tokens = 0;
    for (const Sentence& s : c.train) expected_tokens += static_cast<int64_t>(s.ids.size()) - 1;

    ag::Generator shuffle(1);
    const auto batches = farm::make_lm_batches(c.train, 64, &shuffle);
    CHECK(batches.size() == (20000 + 63) / 64);
    int64_t tokens = 0, counted = 0;
    std::vector<std::vector<int64_t>> seen;  // every sentence rebuilt from its batch row
    for (const farm::LmBatch& batch : batches) {
        tokens += batch.tokens;
        const int64_t B = batch.ids.size(0), T = batch.ids.size(1);
        REQUIRE(batch.targets.shape() == batch.ids.shape());
        int64_t longest = 0, in_batch = 0;
        for (int64_t r = 0; r < B; ++r) {
            const std::vector<int64_t> ids = row(batch.ids, r), targets = row(batch.targets, r);
            std::vector<int64_t> s = {ids[0]};
            int64_t t = 0;
            for (; t < T && targets[t] != farm::IGNORE_INDEX; ++t) {
                if (t > 0 && ids[t] != s.back()) FAIL("row " << r << ": ids[" << t << "] is not the previous target");
                s.push_back(targets[t]);
            }
            for (int64_t p = t; p < T; ++p) {
                if (ids[p] != farm::PAD || targets[p] != farm::IGNORE_INDEX) {
                    FAIL("row " << r << " position " << p << ": after the sentence expected <pad> / -100, found "
                                << ids[p] << " / " << targets[p]);
                }
            }
            longest = std::max(longest, t);
            in_batch += t;
            seen.push_back(s);
        }
        CHECK(longest == T);  // padded to the batch's own longest sentence
        CHECK(in_batch == batch.tokens);
        counted += in_batch;
    }
    INFO("non-pad targets in the train corpus (seed 0): " << tokens);
    CHECK(tokens == expected_tokens);
    CHECK(counted == expected_tokens);
    // the shuffled batches hold exactly the corpus's sentences
    std::vector<std::vector<int64_t>> corpus;
    for (const Sentence& s : c.train) corpus.push_back(s.ids);
    std::sort(seen.begin(), seen.end());
    std::sort(corpus.begin(), corpus.end());
    CHECK(seen == corpus);
}

TEST_CASE("batching: the mask is the one ag::cross_entropy skips", "[data][batching]") {
    // Logits 5 for <pad> and 0 elsewhere: every real target (never <pad>)
    // costs log(e^5 + 67). A padded position left in the loss would pull the
    // mean down (its target <pad> costs 5 less), or be an invalid class.
    const farm::Corpora c = farm::make_corpora(2, farm::Language::lecture());
    const std::vector<Sentence> few(c.valid.begin(), c.valid.begin() + 10);
    const farm::LmBatch batch = farm::make_lm_batches(few, 10).at(0);
    const int64_t N = batch.ids.numel();
    REQUIRE(batch.tokens < N);  // there is padding to skip
    std::vector<double> scores(static_cast<std::size_t>(N * farm::VOCAB_SIZE), 0.0);
    for (int64_t i = 0; i < N; ++i) scores[static_cast<std::size_t>(i * farm::VOCAB_SIZE + farm::PAD)] = 5.0;
    const ag::Tensor logits = ag::Tensor::from({N, farm::VOCAB_SIZE}, scores);
    const double loss = ag::cross_entropy(logits, batch.targets.reshape({N})).item();
    CHECK(loss == Approx(std::log(std::exp(5.0) + 67.0)).epsilon(1e-14));
}

TEST_CASE("batching: order is kept without a generator, seeded with one", "[data][batching]") {
    const farm::Corpora c = farm::make_corpora(3, farm::Language::lecture());
    const std::vector<Sentence> some(c.test.begin(), c.test.begin() + 40);
    auto first_rows = [](const std::vector<farm::LmBatch>& batches) {
        std::vector<std::vector<int64_t>> rows;
        for (const auto& b : batches)
            for (int64_t r = 0; r < b.ids.size(0); ++r) rows.push_back(row(b.ids, r));
        return rows;
    };
    const auto kept = farm::make_lm_batches(some, 8);
    for (std::size_t n = 0; n < 40; ++n) {
        const std::vector<int64_t> r = row(kept[n / 8].ids, static_cast<int64_t>(n % 8));
        INFO("sentence " << n);
        CHECK(std::equal(some[n].ids.begin(), some[n].ids.end() - 1, r.begin()));
    }
    ag::Generator g1(5), g2(5), g3(6);
    const auto s1 = first_rows(farm::make_lm_batches(some, 8, &g1));
    const auto s2 = first_rows(farm::make_lm_batches(some, 8, &g2));
    const auto s3 = first_rows(farm::make_lm_batches(some, 8, &g3));
    CHECK(s1 == s2);
    CHECK(s1 != s3);
    CHECK(s1 != first_rows(kept));
    // a second call with the same generator draws a new order (the next epoch)
    CHECK(first_rows(farm::make_lm_batches(some, 8, &g1)) != s1);
}

TEST_CASE("batching: prefix batches for the classifier and the agreement test", "[data][batching]") {
    const std::vector<Sentence> prefixes = {
        sentence("<s> the dog near the cats"),
        sentence("<s> the hens by the fox behind the goat"),
    };
    const auto batches = farm::make_prefix_batches(prefixes, 4);
    REQUIRE(batches.size() == 1);
    const farm::PrefixBatch& b = batches[0];
    CHECK(b.ids.shape() == ag::Shape{2, 9});
    CHECK(row(b.ids, 0) == std::vector<int64_t>{1, 3, 4, 28, 3, 7, 0, 0, 0});
    CHECK(row(b.ids, 1) == std::vector<int64_t>{1, 3, 17, 33, 3, 20, 29, 3, 14});
    CHECK(b.last == std::vector<int64_t>{5, 8});
    CHECK(b.labels == std::vector<int>{0, 1});

    // every agreement prefix: last = 2 + 3k, its label, padding after it
    const auto sets = farm::make_agreement_sets(0, farm::Language::lecture(), 50);
    std::vector<Sentence> mixed;
    for (const auto& set : sets) mixed.insert(mixed.end(), set.begin(), set.end());
    ag::Generator shuffle(0);
    int64_t rows = 0;
    for (const farm::PrefixBatch& batch : farm::make_prefix_batches(mixed, 32, &shuffle)) {
        REQUIRE(batch.last.size() == static_cast<std::size_t>(batch.ids.size(0)));
        REQUIRE(batch.labels.size() == batch.last.size());
        for (int64_t r = 0; r < batch.ids.size(0); ++r) {
            const std::vector<int64_t> ids = row(batch.ids, r);
            const int64_t last = batch.last[r];
            INFO("row " << r << ": " << test::counts_str(ids));
            CHECK((last - 2) % 3 == 0);
            CHECK(farm::is_noun(ids[last]));
            CHECK(batch.labels[r] == (farm::is_plural_noun(ids[2]) ? 1 : 0));
            CHECK(std::all_of(ids.begin() + last + 1, ids.end(), [](int64_t id) { return id == farm::PAD; }));
        }
        rows += batch.ids.size(0);
    }
    CHECK(rows == 300);
}

TEST_CASE("batching: bad arguments are clear errors", "[data][batching]") {
    const std::vector<Sentence> one = {sentence("<s> the dog runs </s>")};
    CHECK_THROWS_WITH(farm::make_lm_batches(one, 0), Contains("batch_size = 0"));
    CHECK_THROWS_WITH(farm::make_prefix_batches(one, -1), Contains("batch_size = -1"));
    const std::vector<Sentence> short_one = {Sentence{{farm::BOS}, 0, 0}};
    CHECK_THROWS_WITH(farm::make_lm_batches(short_one, 4), Contains("sentence 0") && Contains("1 tokens"));
    CHECK(farm::make_lm_batches({}, 4).empty());
}
