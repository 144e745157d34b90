#include "data/batching.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "data/shuffle.h"

namespace farm {

namespace {

// The rows of each batch: indices into the sentences, in batch order.
std::vector<std::vector<int64_t>> batch_rows(const char* what, const std::vector<Sentence>& sentences,
                                             int64_t batch_size, ag::Generator* shuffle, std::size_t min_length) {
    if (batch_size < 1) {
        throw std::invalid_argument(fmt::format("{}: batch_size = {}, expected >= 1", what, batch_size));
    }
    const auto n = static_cast<int64_t>(sentences.size());
    for (int64_t i = 0; i < n; ++i) {
        if (sentences[i].ids.size() < min_length) {
            throw std::invalid_argument(fmt::format("{}: sentence {} has {} tokens, expected at least {}", what, i,
                                                    sentences[i].ids.size(), min_length));
        }
    }
    std::vector<int64_t> order(n);
    if (shuffle) {
        order = permutation(n, *shuffle);
    } else {
        std::iota(order.begin(), order.end(), int64_t{0});
    }
    std::vector<std::vector<int64_t>> batches;
    for (int64_t start = 0; start < n; start += batch_size) {
        batches.emplace_back(order.begin() + start, order.begin() + std::min(n, start + batch_size));
    }
    return batches;
}

std::size_t longest(const std::vector<Sentence>& sentences, const std::vector<int64_t>& rows) {
    std::size_t length = 0;
    for (const int64_t r : rows) length = std::max(length, sentences[r].ids.size());
    return length;
}

}  // namespace

std::vector<LmBatch> make_lm_batches(const std::vector<Sentence>& sentences, int64_t batch_size,
                                     ag::Generator* shuffle) {
    std::vector<LmBatch> batches;
    for (const auto& rows : batch_rows("make_lm_batches", sentences, batch_size, shuffle, 2)) {
        const std::size_t T = longest(sentences, rows) - 1;
        const std::size_t B = rows.size();
        std::vector<double> ids(B * T, static_cast<double>(PAD));
        std::vector<double> targets(B * T, static_cast<double>(IGNORE_INDEX));
        std::vector<double> packed_ids, packed_targets;
        LmBatch batch;
        batch.starts.push_back(0);
        for (std::size_t b = 0; b < B; ++b) {
            const std::vector<int64_t>& s = sentences[rows[b]].ids;
            for (std::size_t t = 0; t + 1 < s.size(); ++t) {
                ids[b * T + t] = static_cast<double>(s[t]);
                targets[b * T + t] = static_cast<double>(s[t + 1]);
                packed_ids.push_back(static_cast<double>(s[t]));
                packed_targets.push_back(static_cast<double>(s[t + 1]));
            }
            batch.tokens += static_cast<int64_t>(s.size()) - 1;
            batch.starts.push_back(batch.tokens);
        }
        const ag::Shape shape = {static_cast<int64_t>(B), static_cast<int64_t>(T)};
        batch.ids = ag::Tensor::from(shape, std::move(ids));
        batch.targets = ag::Tensor::from(shape, std::move(targets));
        batch.packed_ids = ag::Tensor::from({batch.tokens}, std::move(packed_ids));
        batch.packed_targets = ag::Tensor::from({batch.tokens}, std::move(packed_targets));
        batches.push_back(std::move(batch));
    }
    return batches;
}

std::vector<PrefixBatch> make_prefix_batches(const std::vector<Sentence>& prefixes, int64_t batch_size,
                                             ag::Generator* shuffle) {
    std::vector<PrefixBatch> batches;
    for (const auto& rows : batch_rows("make_prefix_batches", prefixes, batch_size, shuffle, 1)) {
        const std::size_t T = longest(prefixes, rows);
        const std::size_t B = rows.size();
        std::vector<double> ids(B * T, static_cast<double>(PAD));
        PrefixBatch batch;
        for (std::size_t b = 0; b < B; ++b) {
            const Sentence& p = prefixes[rows[b]];
            std::transform(p.ids.begin(), p.ids.end(), ids.begin() + static_cast<std::ptrdiff_t>(b * T),
                           [](int64_t id) { return static_cast<double>(id); });
            batch.last.push_back(static_cast<int64_t>(p.ids.size()) - 1);
            batch.labels.push_back(p.subject_plural);
        }
        batch.ids = ag::Tensor::from({static_cast<int64_t>(B), static_cast<int64_t>(T)}, std::move(ids));
        batches.push_back(std::move(batch));
    }
    return batches;
}

}  // namespace farm
