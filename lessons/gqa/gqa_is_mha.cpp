#include "lessons/gqa/gqa_is_mha.h"

#include <algorithm>

#include "autograd/autograd.h"
#include "data/batching.h"
#include "data/farm_language.h"
#include "lessons/gqa/kv_heads.h"
#include "nn/attention.h"
#include "nn/param_count.h"

namespace lessons::gqa {

GqaAgainstMha gqa_against_mha_copies(const nn::LMConfig& base, const std::vector<int64_t>& kv_heads, int seeds,
                                     const farm::Language& language) {
    const std::vector<farm::Sentence> test = farm::make_corpora(0, language).test;
    const std::vector<farm::Sentence> first(test.begin(), test.begin() + 64);
    const ag::Tensor ids = farm::make_lm_batches(first, 64).front().ids;
    ag::NoGradGuard no_grad;

    GqaAgainstMha result;
    result.sentences = ids.size(0);
    result.positions = ids.numel();
    for (int seed = 0; seed < seeds; ++seed)
        for (const int64_t kv : kv_heads) {
            nn::LMConfig cfg = base;
            cfg.n_kv_heads = kv;
            const nn::LanguageModel gqa(cfg, static_cast<uint64_t>(seed));
            const auto mha = repeat_kv_heads(gqa);
            const double diff = ag::max_abs_diff(gqa.forward(ids), mha->forward(ids));
            result.worst = std::max(result.worst, diff);
            result.rows.push_back({seed, kv, cfg.n_heads / kv, gqa.num_parameters(), mha->num_parameters(), diff});
        }
    return result;
}

std::vector<AttentionParameters> attention_parameters(int64_t d_model, int64_t n_heads) {
    std::vector<AttentionParameters> rows;
    for (int64_t kv = n_heads; kv >= 1; --kv) {
        if (n_heads % kv != 0) continue;
        nn::LMConfig cfg = nn::LMConfig::modern_lm();
        cfg.d_model = d_model;
        cfg.n_heads = n_heads;
        cfg.n_kv_heads = kv;
        cfg.n_layers = 1;
        ag::Generator gen(0);
        const nn::ModernAttention attention(cfg, gen);
        rows.push_back({kv, n_heads / kv, attention.wq->weight.numel() + attention.wo->weight.numel(),
                        attention.wk->weight.numel() + attention.wv->weight.numel(), attention.num_parameters(),
                        nn::count_parameters(cfg).attention, 2 * kv * cfg.head_dim()});
    }
    return rows;
}

}  // namespace lessons::gqa
