#include "lessons/rope/rotate_values.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "autograd/autograd.h"
#include "data/batching.h"
#include "lessons/common/evaluation.h"
#include "lessons/common/model_cache.h"
#include "lessons/common/progress.h"
#include "lessons/rope/pairing_swap.h"

namespace lessons::rope {
namespace {

constexpr int64_t kBatch = 128;

// What each shift sums over the test batches: the token losses.
struct Sums {
    double loss = 0, rotated_loss = 0;
};

}  // namespace

ag::Tensor logits_by_hand(const nn::LanguageModel& model, const ag::Tensor& ids, const nn::Packing& packing,
                          int64_t shift, bool rotate_values, ag::Tensor* first_attention) {
    const nn::LMConfig& cfg = model.config();
    if (cfg.model != nn::ModelKind::ModernLM || cfg.pos != nn::PosEncoding::Rope)
        throw std::invalid_argument("logits_by_hand: a ModernLM with RoPE");
    const int64_t N = ids.size(0), dh = cfg.head_dim();
    std::vector<int64_t> positions = packing.positions;
    for (int64_t& p : positions) p += shift;
    const auto turn = [&](const ag::Tensor& t) { return ag::rope(t, positions, cfg.rope_base, cfg.rope_pairing); };

    ag::Tensor h = model.tok_emb->forward(ids);  // [N, d]: RoPE adds nothing here
    for (size_t l = 0; l < model.layers.size(); ++l) {
        const auto& block = dynamic_cast<const nn::ModernBlock&>(*model.layers[l]);
        const nn::ModernAttention& attn = *block.attn;
        const ag::Tensor x = block.attn_norm->forward(h);
        // §4.2 q and k turned by their own positions, in every layer; v not (unless asked)
        const ag::Tensor q = turn(attn.wq->forward(x).reshape({N, cfg.n_heads, dh}));
        const ag::Tensor k = turn(attn.wk->forward(x).reshape({N, cfg.n_kv_heads, dh}));
        ag::Tensor v = attn.wv->forward(x).reshape({N, cfg.n_kv_heads, dh});
        if (rotate_values) v = turn(v);
        const ag::Tensor heads = ag::attention_packed(q, k, v, packing.starts, cfg.window);  // [N, Hq, dh]
        if (l == 0 && first_attention) *first_attention = heads;
        h = h + attn.wo->forward(heads.reshape({N, cfg.d_model}));
        h = h + block.mlp->forward(block.mlp_norm->forward(h));
    }
    return model.head->forward(model.final_norm->forward(h));
}

RotatedValues rotate_values(const Options& options, const std::vector<int64_t>& shifts) {
    if (shifts.empty() || shifts.front() != 0) throw std::invalid_argument("rotate_values: the first shift is 0");
    const TrainedSetup setup = trained_setup(options);
    Progress progress;
    std::vector<CachedLm> runs = cached_lms(options.out, {{setup.base, 0}}, setup.corpora.train, setup.training,
                                            options.quick ? nullptr : &progress);
    const nn::LanguageModel& model = *runs.front().model;
    const std::vector<farm::Sentence>& test = setup.corpora.test;

    RotatedValues result;
    result.status = runs.front().status;
    result.training = setup.training_line;
    result.test_sentences = static_cast<int64_t>(test.size());
    result.engine_perplexity = perplexity(model, test);
    for (const int64_t s : shifts) result.shifts.push_back({s});

    ag::NoGradGuard no_grad;
    std::vector<Sums> sums(shifts.size());
    int64_t tokens = 0;
    for (const farm::LmBatch& batch : farm::make_lm_batches(test, kBatch)) {
        const nn::Packing packing = nn::Packing::from_starts(batch.starts);
        const auto loss = [&](const ag::Tensor& logits) {
            return ag::cross_entropy(logits, batch.packed_targets).item() * static_cast<double>(batch.tokens);
        };
        // shift 0 first: the reference every other shift is compared with
        ag::Tensor logits0, rotated0, attention0, rotated_attention0;
        for (size_t i = 0; i < shifts.size(); ++i) {
            ag::Tensor attention, rotated_attention;
            const ag::Tensor logits = logits_by_hand(model, batch.packed_ids, packing, shifts[i], false, &attention);
            const ag::Tensor rotated =
                logits_by_hand(model, batch.packed_ids, packing, shifts[i], true, &rotated_attention);
            if (i == 0) {
                logits0 = logits, rotated0 = rotated, attention0 = attention, rotated_attention0 = rotated_attention;
                result.by_hand_difference = std::max(
                    result.by_hand_difference, ag::max_abs_diff(logits, model.forward(batch.packed_ids, packing)));
            }
            ShiftRow& row = result.shifts[i];
            sums[i].loss += loss(logits);
            sums[i].rotated_loss += loss(rotated);
            row.attention_change = std::max(row.attention_change, ag::max_abs_diff(attention, attention0));
            row.rotated_attention_change =
                std::max(row.rotated_attention_change, ag::max_abs_diff(rotated_attention, rotated_attention0));
            row.logit_change = std::max(row.logit_change, ag::max_abs_diff(logits, logits0));
            row.rotated_logit_change = std::max(row.rotated_logit_change, ag::max_abs_diff(rotated, rotated0));
        }
        tokens += batch.tokens;
    }
    for (size_t i = 0; i < shifts.size(); ++i) {
        result.shifts[i].perplexity = std::exp(sums[i].loss / static_cast<double>(tokens));
        result.shifts[i].rotated_perplexity = std::exp(sums[i].rotated_loss / static_cast<double>(tokens));
    }
    return result;
}

}  // namespace lessons::rope
