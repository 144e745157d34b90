// Attempt (wrong): rms_norm() is one op whose backward calls
// rms_norm_backward(), as asked, but rms_norm_backward() rebuilds the
// forward from engine ops and calls backward() on it: autograd derives the
// gradients, and the formula the exercise asks for is never written.
// grade says: let the engine differentiate
#include "exercises/ex12_rms_norm_backward.h"

namespace ex12 {

RmsNormGrads rms_norm_backward(const ag::Tensor& x, const ag::Tensor& weight, double eps, const ag::Tensor& dy) {
    // the engine runs an op's backward with grad mode off: turn it on again
    const bool was = ag::GradMode::is_enabled();
    ag::GradMode::set_enabled(true);
    ag::Tensor xl = x.detach().contiguous(), wl = weight.detach().contiguous();
    xl.requires_grad_(), wl.requires_grad_();
    const ag::Tensor y = xl / ag::sqrt(ag::mean(xl * xl, {1}, true) + eps) * wl;
    ag::sum(y * dy.detach()).backward();
    ag::GradMode::set_enabled(was);
    return {xl.grad(), wl.grad()};
}

ag::Tensor rms_norm(const ag::Tensor& x, const ag::Tensor& weight, double eps) {
    const ag::Tensor y = [&] {
        ag::NoGradGuard no_grad;
        return x / ag::sqrt(ag::mean(x * x, {1}, true) + eps) * weight;
    }();
    const ag::Tensor xs = x.detach(), ws = weight.detach();
    return ag::record("rms_norm", y.detach(), {x, weight}, [xs, ws, eps](const ag::Tensor& dy) {
        const RmsNormGrads g = rms_norm_backward(xs, ws, eps, dy);
        return std::vector<ag::Tensor>{g.dx, g.dweight};
    });
}

}  // namespace ex12
