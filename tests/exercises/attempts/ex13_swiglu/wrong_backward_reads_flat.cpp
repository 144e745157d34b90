// Attempt (wrong): writes the whole feed-forward as ONE recorded op with
// loops and a hand-written backward (to keep only x and the gate in memory);
// it makes its inputs contiguous, but reads the incoming gradient's data()
// as a flat array, so a dy that arrives as a non-contiguous view (y used
// through a transpose) is read wrongly: dy.contiguous() first.
#include "exercises/ex13_swiglu.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex13 {
namespace {

double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

}  // namespace

ag::Tensor swiglu(const ag::Tensor& x, const ag::Tensor& w_gate, const ag::Tensor& w_up, const ag::Tensor& w_down) {
    const ag::Tensor xc = x.contiguous(), gc = w_gate.contiguous(), uc = w_up.contiguous(), dc = w_down.contiguous();
    const int64_t d = x.size(-1), f = w_gate.size(0), rows = x.numel() / d;
    // a = x W_gateᵀ, b = x W_upᵀ, h = silu(a) ⊙ b, y = h W_downᵀ
    std::vector<double> a(static_cast<size_t>(rows * f)), b(a.size()), h(a.size()), y(static_cast<size_t>(rows * d));
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < f; ++j) {
            double sa = 0, sb = 0;
            for (int64_t k = 0; k < d; ++k) {
                sa += xc.data()[r * d + k] * gc.data()[j * d + k];
                sb += xc.data()[r * d + k] * uc.data()[j * d + k];
            }
            const size_t i = static_cast<size_t>(r * f + j);
            a[i] = sa, b[i] = sb, h[i] = sa * sigmoid(sa) * sb;
        }
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < d; ++k) {
            double s = 0;
            for (int64_t j = 0; j < f; ++j) s += h[static_cast<size_t>(r * f + j)] * dc.data()[k * f + j];
            y[static_cast<size_t>(r * d + k)] = s;
        }
    return ag::record("swiglu_ffn", ag::Tensor::from(x.shape(), std::move(y)), {x, w_gate, w_up, w_down},
                      [=](const ag::Tensor& g) {
                          const double* dy = g.data();
                          ag::Tensor dx = ag::Tensor::zeros(x.shape()), dwg = ag::Tensor::zeros(w_gate.shape()),
                                     dwu = ag::Tensor::zeros(w_up.shape()), dwd = ag::Tensor::zeros(w_down.shape());
                          for (int64_t r = 0; r < rows; ++r)
                              for (int64_t j = 0; j < f; ++j) {
                                  const size_t i = static_cast<size_t>(r * f + j);
                                  double dh = 0;
                                  for (int64_t k = 0; k < d; ++k) {
                                      dh += dy[r * d + k] * dc.data()[k * f + j];
                                      dwd.data()[k * f + j] += dy[r * d + k] * h[i];
                                  }
                                  const double s = sigmoid(a[i]);
                                  const double da = dh * b[i] * s * (1.0 + a[i] * (1.0 - s)), db = dh * a[i] * s;
                                  for (int64_t k = 0; k < d; ++k) {
                                      dx.data()[r * d + k] += da * gc.data()[j * d + k] + db * uc.data()[j * d + k];
                                      dwg.data()[j * d + k] += da * xc.data()[r * d + k];
                                      dwu.data()[j * d + k] += db * xc.data()[r * d + k];
                                  }
                              }
                          return std::vector<ag::Tensor>{dx, dwg, dwu, dwd};
                      });
}

SwiGLU::SwiGLU(int64_t d_model, int64_t d_ff, ag::Generator& gen) {
    w_gate = register_module("w_gate", std::make_shared<nn::Linear>(nn::LinearOptions(d_model, d_ff).bias(false), gen));
    w_up = register_module("w_up", std::make_shared<nn::Linear>(nn::LinearOptions(d_model, d_ff).bias(false), gen));
    w_down = register_module("w_down", std::make_shared<nn::Linear>(nn::LinearOptions(d_ff, d_model).bias(false), gen));
}

ag::Tensor SwiGLU::forward(const ag::Tensor& x) const {
    return swiglu(x, w_gate->weight, w_up->weight, w_down->weight);
}

}  // namespace ex13
