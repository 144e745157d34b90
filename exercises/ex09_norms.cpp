// Exercise 9 · RMSNorm vs LayerNorm (lecture §3.2; §10 exercise 9)
//
// LayerNorm (lecture 2) centres a vector and scales it to unit variance;
// RMSNorm only scales it by its root mean square, keeping the mean:
//     RMSNorm(x)   = x / sqrt(mean(x²) + eps)
//     LayerNorm(x) = (x - mean(x)) / sqrt(var(x) + eps),  var = mean((x - mean)²)
// (here without the learned scale g and bias β). By hand: x = [1, 2, 3, 4]?
//
// Write rms_norm() and layer_norm() (ex09_norms.h).
//
// Graded: the lecture's [0.365, 0.730, 1.095, 1.461] and
// [-1.342, -0.447, 0.447, 1.342]; one element, constant and zero vectors
// with eps > 0 (finite: LayerNorm gives 0); the reference on random vectors
// (any size from 2, small and large spreads) and eps, from 0 to 1 (eps is
// added under the square root for every vector); a mean far larger than the
// spread (LayerNorm still accurate: var = mean((x - mean)²) as written);
// RMSNorm equals LayerNorm on zero-mean vectors. The usual slips are named.
#include "exercises/ex09_norms.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex09 {

std::vector<double> rms_norm(const std::vector<double>& x, double eps) {
    // TODO
    (void)x, (void)eps;
    throw exercises::not_implemented("ex09 norms: rms_norm");
}

std::vector<double> layer_norm(const std::vector<double>& x, double eps) {
    // TODO
    (void)x, (void)eps;
    throw exercises::not_implemented("ex09 norms: layer_norm");
}

}  // namespace ex09
