#include "lessons/modern_transformer/position_diagnosis.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "data/batching.h"

namespace lessons::modern_transformer {

// The weights come from ag::attention_packed, which lays a batch's sequences
// end to end and fills a dense [N, N] matrix per head before cutting out the
// [T, T] blocks (N = B·T): quadratic in the batch, so the batches stay small
// (32 prefixes of at most 21 tokens: 4 heads × 672² doubles, 14 MB a layer).
constexpr int64_t kBatch = 32;

std::vector<double> subject_attention_per_k(const nn::LanguageModel& model,
                                            const std::vector<std::vector<farm::Sentence>>& sets) {
    ag::NoGradGuard no_grad;
    const int64_t H = model.config().n_heads;
    std::vector<double> per_k;
    for (const auto& set : sets) {
        double total = 0;
        // Every prefix of a set has 3 + 3k tokens: no padding.
        for (const farm::PrefixBatch& batch : farm::make_prefix_batches(set, kBatch)) {
            std::vector<ag::Tensor> weights;    // per layer [B, Hq, T, T]
            model.hidden(batch.ids, &weights);  // the output head is not needed
            const int64_t B = batch.ids.size(0), T = batch.ids.size(1);
            for (int64_t b = 0; b < B; ++b) {
                const int64_t t = batch.last[static_cast<size_t>(b)];
                double largest = 0;
                for (const ag::Tensor& w : weights) {
                    const ag::Tensor p = w.contiguous();
                    for (int64_t h = 0; h < H; ++h)
                        largest = std::max(largest, p.data()[((b * H + h) * T + t) * T + kSubject]);
                }
                total += largest;
            }
        }
        per_k.push_back(total / static_cast<double>(set.size()));
    }
    return per_k;
}

AttentionMap attention_map(const nn::LanguageModel& model, const farm::Sentence& sentence) {
    ag::NoGradGuard no_grad;
    AttentionMap map;
    map.ids = sentence.ids;
    if (!map.ids.empty() && map.ids.back() == farm::EOS) map.ids.pop_back();
    map.verb_query = kSubject + 3 * sentence.k;
    const auto T = static_cast<int64_t>(map.ids.size());
    if (map.verb_query >= T) throw std::invalid_argument("attention_map: the sentence has no verb");
    std::vector<ag::Tensor> weights;  // per layer [1, H, T, T]
    model.hidden(ag::Tensor::from({1, T}, std::vector<double>(map.ids.begin(), map.ids.end())), &weights);
    const int64_t H = model.config().n_heads;
    for (const ag::Tensor& w : weights) {
        const ag::Tensor p = w.contiguous();
        auto& layer = map.weights.emplace_back();
        for (int64_t h = 0; h < H; ++h) {
            auto& head = layer.emplace_back();
            for (int64_t t = 0; t < T; ++t)
                head.emplace_back(p.data() + (h * T + t) * T, p.data() + (h * T + t + 1) * T);
        }
    }
    for (size_t l = 0; l < map.weights.size(); ++l)
        for (size_t h = 0; h < map.weights[l].size(); ++h)
            if (map.subject_weight(l, h) > map.subject_weight(map.layer, map.head)) map.layer = l, map.head = h;
    return map;
}

double AttentionMap::subject_weight(size_t l, size_t h) const {
    return weights.at(l).at(h).at(static_cast<size_t>(verb_query)).at(static_cast<size_t>(kSubject));
}

const farm::Sentence& example_sentence(const std::vector<farm::Sentence>& sentences, int k) {
    const farm::Sentence* first = nullptr;
    for (const farm::Sentence& s : sentences) {
        if (s.k != k) continue;
        if (!first) first = &s;
        bool opposite = true;  // attractor i's noun is token kSubject + 3i
        for (int i = 1; i <= k; ++i)
            opposite = opposite &&
                       farm::is_plural_noun(s.ids[static_cast<size_t>(kSubject + 3 * i)]) != (s.subject_plural == 1);
        if (opposite) return s;
    }
    if (!first) throw std::invalid_argument(fmt::format("example_sentence: no sentence has k = {}", k));
    return *first;
}

namespace {

// Pearson's r = Σ(x - x̄)(y - ȳ) / sqrt(Σ(x - x̄)² · Σ(y - ȳ)²).
double correlation(const std::vector<double>& x, const std::vector<double>& y) {
    const auto n = static_cast<double>(x.size());
    const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n, my = std::accumulate(y.begin(), y.end(), 0.0) / n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : std::numeric_limits<double>::quiet_NaN();
}

WeightExplains weight_explains(const std::vector<ModelDiagnosis>& models) {
    std::vector<double> weight, accuracy;
    for (const ModelDiagnosis& m : models) {
        weight.push_back(m.weight_beyond);
        accuracy.push_back(m.accuracy_beyond);
    }
    WeightExplains result;
    result.correlation = correlation(weight, accuracy);
    // The models by weight, heaviest first (ties in the table's order);
    // the first `above` of them are above the split.
    std::vector<size_t> order(models.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weight[a] > weight[b]; });
    const auto split = [&](size_t above) {
        WeightExplains s = result;
        s.threshold = weight[order[above - 1]];
        s.above = static_cast<int>(above);
        s.below = static_cast<int>(order.size() - above);
        s.lowest_above = std::numeric_limits<double>::infinity();
        s.highest_below = -s.lowest_above;
        for (size_t i = 0; i < order.size(); ++i) {
            const double a = accuracy[order[i]];
            if (i < above)
                s.lowest_above = std::min(s.lowest_above, a);
            else
                s.highest_below = std::max(s.highest_below, a);
        }
        if (s.below == 0) s.highest_below = std::numeric_limits<double>::quiet_NaN();
        return s;
    };
    result = split(order.size());
    for (size_t above = 1; above < order.size(); ++above) {
        if (weight[order[above - 1]] == weight[order[above]]) continue;  // equal weights stay on one side
        const WeightExplains s = split(above);
        if (result.below == 0 || s.lowest_above - s.highest_below > result.lowest_above - result.highest_below)
            result = s;
    }
    return result;
}

}  // namespace

const ModelDiagnosis& PositionDiagnosis::at(size_t encoding, int seed) const {
    for (const ModelDiagnosis& m : models)
        if (m.encoding == encoding && m.seed == seed) return m;
    throw std::out_of_range("PositionDiagnosis::at: no such encoding and seed");
}

PositionDiagnosis diagnose_positions(const PositionEncodings& encodings, const FarmRuns& runs) {
    PositionDiagnosis result;
    const std::array<EncodingRuns, 3>& all = encodings.encodings;
    const size_t seeds = all[0].models.size();
    for (size_t seed = 0; seed < seeds; ++seed)
        for (size_t e = 0; e < all.size(); ++e) {
            ModelDiagnosis m;
            m.encoding = e;
            m.seed = static_cast<int>(seed);
            m.weight = subject_attention_per_k(*all[e].models[seed].model, runs.agreement);
            for (const AgreementResult& a : all[e].scores[seed]) m.p_correct.push_back(a.p_correct);
            m.weight_within = mean_over_k(m.weight, 1, 3);
            m.weight_beyond = mean_over_k(m.weight, 4, 6);
            m.p_beyond = mean_over_k(m.p_correct, 4, 6);
            m.accuracy_beyond = all[e].beyond[seed];
            result.models.push_back(std::move(m));
        }
    result.explains = weight_explains(result.models);
    const nn::LanguageModel& rope = *all[kRope].models[0].model;
    result.example = attention_map(rope, example_sentence(runs.test, kExampleK));
    result.long_example = attention_map(rope, runs.agreement.at(kLongExampleK - 1).at(0));
    return result;
}

PositionRows untouched_position_rows(const nn::LanguageModel& trained, uint64_t init_seed, int64_t steps,
                                     const LmTrainOptions& training) {
    if (!trained.pos_emb) throw std::invalid_argument("untouched_position_rows: the model has no learned positions");
    const nn::LanguageModel fresh(trained.config(), init_seed);
    const ag::Tensor now = trained.pos_emb->weight.contiguous(), before = fresh.pos_emb->weight.contiguous();
    const int64_t rows = now.size(0), d = now.size(1);
    // The factor AdamW's step applies (nn/optim.cpp), in the same arithmetic.
    const double factor = 1.0 - training.lr * training.weight_decay;

    PositionRows result;
    result.decay = std::pow(factor, static_cast<double>(steps));
    double norm_sum[2] = {0, 0};
    int64_t count[2] = {0, 0};
    for (int64_t r = 0; r < rows; ++r) {
        bool same = true;
        double moved = 0, norm2 = 0;
        for (int64_t j = 0; j < d; ++j) {
            double x = before.data()[r * d + j];
            for (int64_t s = 0; s < steps; ++s) x *= factor;
            const double y = now.data()[r * d + j];
            same = same && x == y;
            moved = std::max(moved, std::fabs(y - x));
            norm2 += y * y;
        }
        result.untouched.push_back(same);
        if (!same) result.max_moved = std::max(result.max_moved, moved);
        norm_sum[same] += std::sqrt(norm2);
        ++count[same];
    }
    result.mean_norm_untouched = count[1] ? norm_sum[1] / static_cast<double>(count[1]) : 0.0;
    result.mean_norm_trained = count[0] ? norm_sum[0] / static_cast<double>(count[0]) : 0.0;
    return result;
}

UntrainedRows find_untrained_rows(const std::vector<CachedLm>& learned, const FarmRuns& runs) {
    UntrainedRows result;
    result.longest = static_cast<int64_t>(longest_sentence(runs.train));
    result.first_untrained = result.longest - 1;
    const int64_t rows = learned.at(0).model->config().max_len;
    for (int64_t i = 0; i < rows; ++i) result.predicted.push_back(i >= result.first_untrained);
    for (size_t seed = 0; seed < learned.size(); ++seed) {
        const CachedLm& run = learned[seed];
        result.found.push_back(
            untouched_position_rows(*run.model, static_cast<uint64_t>(seed), optimiser_steps(run), runs.training));
        result.match.push_back(result.found.back().untouched == result.predicted);
        result.as_predicted = result.as_predicted && result.match.back();
    }
    for (size_t i = 0; i < runs.agreement.size(); ++i) {
        const int64_t last = kSubject + 3 * static_cast<int64_t>(i + 1);
        result.verb_position.push_back(last);
        result.untrained_read.push_back(std::max<int64_t>(0, last - result.first_untrained + 1));
    }
    return result;
}

}  // namespace lessons::modern_transformer
