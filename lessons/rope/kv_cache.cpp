#include "lessons/rope/kv_cache.h"

#include <algorithm>

#include "autograd/autograd.h"
#include "data/farm_language.h"
#include "nn/language_model.h"

namespace lessons::rope {
namespace {

// T tokens of farm sentences laid end to end (cut at T).
ag::Tensor farm_tokens(int64_t T, uint64_t seed, const farm::Language& language) {
    ag::Generator gen(seed);
    std::vector<double> ids;
    while (static_cast<int64_t>(ids.size()) < T)
        for (const int64_t id : farm::sample_sentence(static_cast<int>(gen.randint(4)), gen, language).ids)
            ids.push_back(static_cast<double>(id));
    ids.resize(static_cast<size_t>(T));
    return ag::Tensor::from({1, T}, ids);
}

}  // namespace

CachedDecoding decode_with_cache(int64_t T, int seeds, const farm::Language& language) {
    CachedDecoding result;
    ag::NoGradGuard no_grad;
    for (int seed = 0; seed < seeds; ++seed) {
        const nn::LanguageModel model(nn::LMConfig::modern_lm(), static_cast<uint64_t>(seed));
        const ag::Tensor ids = farm_tokens(T, static_cast<uint64_t>(seed), language);
        const ag::Tensor full = model.forward(ids);
        std::vector<nn::KVCache> caches = model.new_caches();
        for (int64_t t = 0; t < T; ++t) {
            const ag::Tensor step = model.forward_cached(ids.narrow(1, t, 1), {t}, caches);
            const double diff = ag::max_abs_diff(step, full.narrow(1, t, 1));
            result.worst = std::max(result.worst, diff);
            result.steps.push_back({seed, t, static_cast<int64_t>(ids.at({0, t})), caches[0].slots(), diff});
        }
    }
    return result;
}

}  // namespace lessons::rope
