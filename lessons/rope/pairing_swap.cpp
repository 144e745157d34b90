#include "lessons/rope/pairing_swap.h"

#include <stdexcept>

#include <fmt/format.h>

#include "data/farm_language.h"
#include "lessons/common/evaluation.h"
#include "lessons/common/model_cache.h"
#include "lessons/common/progress.h"
#include "lessons/common/report.h"
#include "lessons/rope/rotation.h"

namespace lessons::rope {
namespace {

constexpr size_t kQuickTrain = 2000;

ag::RopePairing other(ag::RopePairing p) {
    return p == ag::RopePairing::Half ? ag::RopePairing::Interleaved : ag::RopePairing::Half;
}

// W [heads · dh, d]: the rows of each head reordered, as the dimensions of
// the q (or k) it produces: from the half order to the interleaved one
// (q_int[2i] = q_half[i], q_int[2i+1] = q_half[i + dh/2]) or back.
ag::Tensor permute_head_rows(const ag::Tensor& w, int64_t dh, ag::RopePairing to) {
    const int64_t rows = w.size(0), d = w.size(1);
    const ag::Tensor per_head = ag::reshape(w.t().contiguous(), {d * (rows / dh), dh});  // one head's dims per row
    const ag::Tensor turned = to == ag::RopePairing::Interleaved ? from_half_order(per_head) : to_half_order(per_head);
    return ag::reshape(turned, {d, rows}).t().contiguous();
}

}  // namespace

std::unique_ptr<nn::LanguageModel> with_pairing(const nn::LanguageModel& trained, ag::RopePairing pairing,
                                                bool permute_heads) {
    nn::LMConfig config = trained.config();
    config.rope_pairing = pairing;
    auto model = std::make_unique<nn::LanguageModel>(config, 0);
    const auto source = trained.named_parameters();
    const auto target = model->named_parameters();
    for (size_t i = 0; i < target.size(); ++i) {
        const auto& [name, value] = source[i];
        if (name != target[i].first)
            throw std::logic_error(fmt::format("with_pairing: parameter {} is {} in the copy", name, target[i].first));
        const bool q_or_k = name.find(".attn.wq.") != std::string::npos || name.find(".attn.wk.") != std::string::npos;
        ag::Tensor numbers = value.detach();
        if (permute_heads && q_or_k) numbers = permute_head_rows(numbers, config.head_dim(), pairing);
        ag::Tensor(target[i].second).set_(numbers);
    }
    return model;
}

TrainedSetup trained_setup(const Options& options) {
    const farm::Language language = farm::Language::named(options.language);
    TrainedSetup setup;
    setup.corpora = farm::make_corpora(0, language);
    nn::LMConfig& base = setup.base;
    if (options.quick) {  // small, but trained enough to depend on its pairing
        base.d_model = 16;
        base.d_ff = 44;
        setup.corpora.train.resize(kQuickTrain);
        setup.corpora.test.resize(200);
        setup.training.epochs = 2;
    }
    setup.training_line = fmt::format(
        "ModernLM (d = {}, {} layers, {}/{} heads of {}), seed 0, {} on {} farm sentences", base.d_model, base.n_layers,
        base.n_heads, base.n_kv_heads, base.head_dim(), count_of(setup.training.epochs, "epoch"),
        group_thousands(static_cast<double>(setup.corpora.train.size())));
    return setup;
}

PairingSwap swap_pairings(const Options& options) {
    const TrainedSetup setup = trained_setup(options);
    const farm::Corpora& corpora = setup.corpora;
    const nn::LMConfig& base = setup.base;
    const LmTrainOptions& training = setup.training;
    PairingSwap swap;
    swap.test_sentences = static_cast<int64_t>(corpora.test.size());
    swap.grammar_perplexity = grammar_perplexity(corpora.test, farm::Language::named(options.language));
    swap.training = setup.training_line;
    const ag::RopePairing pairings[] = {ag::RopePairing::Half, ag::RopePairing::Interleaved};
    std::vector<LmRun> specs;
    for (ag::RopePairing pairing : pairings) {
        specs.push_back({base, 0});
        specs.back().config.rope_pairing = pairing;
    }
    Progress progress;
    const std::vector<CachedLm> runs =
        cached_lms(options.out, specs, corpora.train, training, options.quick ? nullptr : &progress);
    for (size_t i = 0; i < specs.size(); ++i) {
        const ag::RopePairing pairing = pairings[i];
        const CachedLm& run = runs[i];
        PairingRun r;
        r.trained = pairing;
        r.status = run.status;
        r.right = perplexity(*run.model, corpora.test);
        r.wrong = perplexity(*with_pairing(*run.model, other(pairing), false), corpora.test);
        r.permuted = perplexity(*with_pairing(*run.model, other(pairing), true), corpora.test);
        swap.runs.push_back(r);
    }
    return swap;
}

}  // namespace lessons::rope
