#pragma once
// Every differentiable op of the engine. Each is defined with its backward
// right beside it in ops/*.cpp; each checks its shapes and throws
// std::invalid_argument naming the op and the shapes it got.
//
// Integer inputs (token ids, class targets, index lists) are tensors of
// whole numbers stored as double: one scalar type keeps every kernel simple.
// Boolean masks are tensors of 0 and 1.
#include <vector>

#include "autograd/tensor.h"

namespace ag {

// ---- pointwise (ops/pointwise.cpp) ----------------------------------------
// Binary ops broadcast like NumPy: shapes are aligned on the right and a
// size-1 (or missing) dimension stretches to match the other.
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, double s);
Tensor mul(const Tensor& a, double s);
Tensor neg(const Tensor& a);
Tensor pow(const Tensor& a, double exponent);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor gelu(const Tensor& a);  // exact: 0.5 x (1 + erf(x / √2))
Tensor silu(const Tensor& a);  // x · sigmoid(x)
// §3.2 SwiGLU's gate, fused: silu(gate) ⊙ up (same shapes).
Tensor swiglu(const Tensor& gate, const Tensor& up);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, double s);
Tensor operator+(double s, const Tensor& a);
Tensor operator-(const Tensor& a, double s);
Tensor operator-(double s, const Tensor& a);
Tensor operator*(const Tensor& a, double s);
Tensor operator*(double s, const Tensor& a);
Tensor operator/(const Tensor& a, double s);
Tensor operator/(double s, const Tensor& a);

// where(cond, a, b): a where cond != 0, else b (all three broadcast).
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// masked_fill(x, mask, v): v where mask != 0, else x (mask broadcasts to x).
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);

// ---- reductions (ops/reduce.cpp) -------------------------------------------
Tensor sum(const Tensor& x);  // all -> []
// dims: one or more, each once (an empty list is refused, not read as every dim)
Tensor sum(const Tensor& x, const Shape& dims, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, const Shape& dims, bool keepdim = false);
// Maxima carry no gradient: the result never requires grad.
Tensor max(const Tensor& x);
Tensor max(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
// Sum x down to `shape` over the dimensions that broadcasting stretched
// (the backward of every broadcasting op).
Tensor sum_to(const Tensor& x, const Shape& shape);

// ---- matmul (ops/matmul.cpp) -----------------------------------------------
// [M,K] @ [K,N] -> [M,N]; [...,M,K] @ [...,K,N] with broadcast batch dims;
// a 2-D right operand multiplies every matrix of a batched left operand.
Tensor matmul(const Tensor& a, const Tensor& b);
// nn.Linear's product, fused into one op: y = x Wᵀ + b for x [..., in],
// weight [out, in] (PyTorch's layout), bias [out] or undefined (no bias).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// ---- shape and indexing (ops/shape.cpp) -------------------------------------
Tensor reshape(const Tensor& x, const Shape& shape);  // one -1 allowed
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const Shape& dims);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor cat(const std::vector<Tensor>& xs, int64_t dim);
Tensor stack(const std::vector<Tensor>& xs, int64_t dim);
// Rows (or slices along dim) picked by an index list: out.size(dim) = n.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// Embedding lookup: weight [V, d], ids of any shape -> [..., d]. The backward
// scatter-adds rows of the gradient into the rows that were read.
Tensor embedding(const Tensor& weight, const Tensor& ids);

// ---- softmax and losses (ops/softmax.cpp) -----------------------------------
Tensor softmax(const Tensor& x);      // over the last dim
Tensor log_softmax(const Tensor& x);  // over the last dim
// Mean over the targets that are not ignore_index of -log softmax(logits)[t].
// logits [N, C], targets [N] (class ids).
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index = -100);
Tensor mse_loss(const Tensor& prediction, const Tensor& target);  // mean of squares
// Mean binary cross-entropy of sigmoid(logits) against targets in [0, 1]
// (PyTorch's F.binary_cross_entropy_with_logits): a reconstruction loss for
// pixels, computed from the logits so that no log(0) or overflow occurs.
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target);

// ---- normalisation (ops/norm.cpp) -----------------------------------------
// Over the last dim d; weight and bias are [d].
// LayerNorm: (x - mean) / sqrt(var + eps) * weight + bias, biased variance.
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);
// §3.2 RMSNorm: x / sqrt(mean(x²) + eps) * weight.
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps = 1e-5);

// ---- attention (ops/attention.cpp) ------------------------------------------
// §5 GQA and §6 sliding windows: scaled dot-product attention, fused (one op,
// one backward) rather than a chain of small ops.
//   q [B, T, Hq, dh];  k, v [B, S, Hkv, dh];  Hq a multiple of Hkv.
// Query head h reads KV head h / g, g = Hq / Hkv (MHA: g = 1; MQA: Hkv = 1).
// Query t, at absolute position q_pos[t], sees key s, at k_pos[s], iff
//   0 <= k_pos[s] <= q_pos[t]   and, with a window W > 0,   q_pos[t] - k_pos[s] < W.
// (A negative key position marks an empty cache slot: never seen.) A query
// that sees no key gets output 0. Scores are q·k / sqrt(dh); softmax over
// the visible keys. Returns [B, T, Hq, dh]. If `weights` is given, it
// receives the attention probabilities [B, Hq, T, S] (no gradient), for
// diagnostics.
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const std::vector<int64_t>& q_pos,
                 const std::vector<int64_t>& k_pos, int64_t window = 0, Tensor* weights = nullptr);
// The training case: T = S, positions 0 … T-1 for queries and keys.
Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v, int64_t window = 0,
                        Tensor* weights = nullptr);

// Packed sequences (no padding): q [N, Hq, dh], k, v [N, Hkv, dh] hold
// several sequences end to end; sequence b is rows starts[b] … starts[b+1]-1
// (starts[0] = 0, starts.back() = N). Row i attends, causally and within the
// window, to the rows of its own sequence only. `weights` (all sequences of
// one length T only) receives [B, Hq, T, T].
Tensor attention_packed(const Tensor& q, const Tensor& k, const Tensor& v, const std::vector<int64_t>& starts,
                        int64_t window = 0, Tensor* weights = nullptr);
// The same from one projection whose rows hold q, k and v side by side:
// qkv [N, (Hq + 2·Hkv)·dh], row i = [q_i (Hq heads) | k_i (Hkv) | v_i (Hkv)]
// (GPT's fused qkv Linear). The same numbers as attention_packed on the
// three column blocks; the gradient is one [N, (Hq + 2·Hkv)·dh] tensor, so
// the projection stays one product, forward and backward. Returns [N, Hq, dh].
Tensor attention_packed_qkv(const Tensor& qkv, int64_t q_heads, int64_t kv_heads, const std::vector<int64_t>& starts,
                            int64_t window = 0, Tensor* weights = nullptr);

// ---- RoPE (ops/rope.cpp) -------------------------------------------------------
// §4 rotary position embedding. x [..., T, H, dh] (dh even): the head vector
// of time step t is rotated pair by pair by the angles positions[t] · θ_i,
// θ_i = base^(-2(i-1)/dh) for pair i = 1 … dh/2 (counted from 1, as §4.5
// does). With dims counted from 0 in the code, pairing Half (Llama,
// GPT-NeoX; §4.6 matrix form) puts dims i-1 and i-1 + dh/2 in pair i;
// Interleaved (RoFormer; the slides' element-wise form) dims 2i-2 and 2i-1. The backward rotates the gradient
// back (by -angle): a rotation's inverse is its transpose.
enum class RopePairing { Half, Interleaved };
Tensor rope(const Tensor& x, const std::vector<int64_t>& positions, double base = 10000.0,
            RopePairing pairing = RopePairing::Half);

// ---- helpers for tests and lessons ------------------------------------------
double max_abs(const Tensor& x);                        // max |x_i|
double max_abs_diff(const Tensor& a, const Tensor& b);  // same shapes

}  // namespace ag
