#include "lessons/autograd_recap/mlp.h"

#include <cmath>

#include "autograd/generator.h"
#include "autograd/ops.h"

namespace lessons::autograd_recap {

Mlp Mlp::make(uint64_t seed) {
    ag::Generator gen(seed);
    Mlp m;
    m.x = ag::Tensor::randn({batch, inputs}, gen);
    std::vector<double> ids;
    for (int64_t n = 0; n < batch; ++n) ids.push_back(static_cast<double>(gen.randint(classes)));
    m.targets = ag::Tensor::from({batch}, ids);

    const auto init = [&](const ag::Shape& shape, int64_t fan_in) {
        const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
        return ag::Tensor::uniform(shape, gen, -bound, bound, /*requires_grad=*/true);
    };
    m.W1 = init({hidden, inputs}, inputs);
    m.b1 = init({hidden}, inputs);
    m.W2 = init({classes, hidden}, hidden);
    m.b2 = init({classes}, hidden);

    m.x.set_name("x");
    m.targets.set_name("targets");
    m.W1.set_name("W1");
    m.b1.set_name("b1");
    m.W2.set_name("W2");
    m.b2.set_name("b2");
    return m;
}

Mlp Mlp::with_parameters(const std::vector<ag::Tensor>& p) const {
    Mlp m = *this;
    m.W1 = p.at(0);
    m.b1 = p.at(1);
    m.W2 = p.at(2);
    m.b2 = p.at(3);
    return m;
}

ag::Tensor Mlp::loss() const {
    const ag::Tensor h = ag::tanh(ag::matmul(x, W1.t()) + b1);
    const ag::Tensor logits = ag::matmul(h, W2.t()) + b2;
    return ag::cross_entropy(logits, targets);
}

}  // namespace lessons::autograd_recap
