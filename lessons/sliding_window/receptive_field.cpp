#include "lessons/sliding_window/receptive_field.h"

#include "autograd/autograd.h"
#include "data/farm_language.h"

namespace lessons::sliding_window {

ReceptiveField measure_receptive_field(const nn::LMConfig& config, int64_t T, int64_t changed, int seeds) {
    ag::NoGradGuard no_grad;
    const nn::Packing packing = nn::Packing::uniform(1, T);
    ReceptiveField result;
    for (int seed = 0; seed < seeds; ++seed) {
        const nn::LanguageModel model(config, static_cast<uint64_t>(seed));
        ag::Generator gen(static_cast<uint64_t>(seed));
        std::vector<double> ids;
        for (int64_t t = 0; t < T; ++t) ids.push_back(static_cast<double>(gen.randint(farm::VOCAB_SIZE)));
        std::vector<double> other = ids;
        other[changed] = static_cast<double>((static_cast<int64_t>(other[changed]) + 1) % farm::VOCAB_SIZE);
        ag::Tensor x = model.tok_emb->forward(ag::Tensor::from({T}, ids));
        ag::Tensor y = model.tok_emb->forward(ag::Tensor::from({T}, other));
        for (int64_t L = 1; L <= config.n_layers; ++L) {
            x = model.layers[static_cast<size_t>(L - 1)]->forward(x, nn::Attend::packed(packing));
            y = model.layers[static_cast<size_t>(L - 1)]->forward(y, nn::Attend::packed(packing));
            LayerReach layer;
            layer.seed = seed;
            layer.layer = L;
            for (int64_t t = 0; t < T; ++t) {
                const bool m = ag::max_abs_diff(x.narrow(0, t, 1), y.narrow(0, t, 1)) > 0.0;
                layer.moved_at.push_back(m ? 1.0 : 0.0);
                if (m) {
                    if (layer.first < 0) layer.first = t;
                    layer.last = t;
                    ++layer.moved;
                }
            }
            layer.reach = layer.last - changed;
            layer.expected = L * (config.window - 1);
            // causal: nothing before `changed` moves; each layer W - 1 further right
            layer.exact = layer.first == changed && layer.reach == layer.expected && layer.moved == layer.expected + 1;
            result.exact_layers += layer.exact;
            result.layers.push_back(std::move(layer));
        }
    }
    return result;
}

}  // namespace lessons::sliding_window
