// matmul: Y = A B, and its two backward products
//   dA = dY Bᵀ,  dB = Aᵀ dY,
// all three on the one GEMM kernel (kernels/gemm.h), which reads the
// transposes in place.
#include "autograd/kernels/gemm.h"
#include "autograd/ops/common.h"

namespace ag {

using detail::fail;
using detail::Grads;

namespace {

// A 2-D operand as the GEMM reads it: row-major, or the transpose of a
// row-major matrix (what W.t() of a contiguous W is), with its leading
// dimension. Anything else is copied to row-major first.
struct Operand {
    Tensor t;  // the tensor whose storage is read
    bool trans;
    int64_t ld;
};

Operand operand(const Tensor& x) {
    const Shape& st = x.strides();
    const int64_t rows = x.size(0), cols = x.size(1);
    if ((st[1] == 1 || cols == 1) && st[0] >= std::max<int64_t>(cols, 1)) return {x, false, st[0]};
    if ((st[0] == 1 || rows == 1) && st[1] >= std::max<int64_t>(rows, 1)) return {x, true, st[1]};
    return {x.contiguous(), false, cols};
}

// [M,K] @ [K,N]. Batched inputs whose right operand is a single matrix are
// flattened to this case by the caller.
Tensor matmul_2d(const Tensor& a_in, const Tensor& b_in) {
    const Operand a = operand(a_in), b = operand(b_in);
    const int64_t M = a_in.size(0), K = a_in.size(1), N = b_in.size(1);
    Tensor y = empty({M, N}, "matmul");
    kernels::gemm(a.trans, b.trans, M, N, K, a.t.data(), a.ld, b.t.data(), b.ld, y.data(), N, false);
    return record("matmul", y, {a.t, b.t}, [a, b, M, N, K](const Tensor& g) {
        const Tensor gc = g.contiguous();
        Tensor da, db;
        if (a.t.requires_grad()) {  // dA[M,K] = dY[M,N] Bᵀ: B's transpose flag flips
            da = empty({M, K});
            kernels::gemm(false, !b.trans, M, K, N, gc.data(), N, b.t.data(), b.ld, da.data(), K, false);
        }
        if (b.t.requires_grad()) {  // dB[K,N] = Aᵀ dY[M,N]
            db = empty({K, N});
            kernels::gemm(!a.trans, false, K, N, M, a.t.data(), a.ld, gc.data(), N, db.data(), N, false);
        }
        return Grads{da, db};
    });
}

// [batch,M,K] @ [batch,K,N], both contiguous with the same batch: the
// same three products, one pair of matrices per batch entry.
Tensor matmul_batched(const Tensor& a, const Tensor& b) {
    const int64_t B = a.size(0), M = a.size(1), K = a.size(2), N = b.size(2);
    Tensor y = empty({B, M, N});
    kernels::gemm_batched(false, false, B, M, N, K, a.data(), K, M * K, b.data(), N, K * N, y.data(), N, M * N, false);
    return record("matmul", y, {a, b}, [a, b, B, M, N, K](const Tensor& g) {
        const Tensor gc = g.contiguous();
        Tensor da, db;
        if (a.requires_grad()) {  // dA_b = dY_b B_bᵀ
            da = empty({B, M, K});
            kernels::gemm_batched(false, true, B, M, K, N, gc.data(), N, M * N, b.data(), N, K * N, da.data(), K, M * K,
                                  false);
        }
        if (b.requires_grad()) {  // dB_b = A_bᵀ dY_b
            db = empty({B, K, N});
            kernels::gemm_batched(true, false, B, K, N, M, a.data(), K, M * K, gc.data(), N, M * N, db.data(), N, K * N,
                                  false);
        }
        return Grads{da, db};
    });
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
    if (a.dim() < 2 || b.dim() < 2)
        fail("matmul", "{} @ {}: both operands need at least 2 dims (reshape a vector to [1,n] or [n,1])",
             shape_str(a.shape()), shape_str(b.shape()));
    const int64_t M = a.size(-2), K = a.size(-1), K2 = b.size(-2), N = b.size(-1);
    if (K != K2)
        fail("matmul", "{} @ {}: inner sizes {} and {} differ", shape_str(a.shape()), shape_str(b.shape()), K, K2);

    // One right-hand matrix for a whole batch (x W in every layer): one big
    // [batch·M, K] @ [K, N] product, which is also the fastest.
    if (b.dim() == 2) {
        if (a.dim() == 2) return matmul_2d(a, b);
        Shape out_shape = a.shape();
        out_shape.back() = N;
        numel_of(out_shape, "matmul");
        return matmul_2d(a.reshape({detail::leading_rows(a), K}), b).reshape(out_shape);
    }

    // Broadcast the batch dims, then run one batched product. An operand
    // with a stretched batch dim is copied out (its gradient is summed back
    // by the engine, which un-broadcasts every input).
    const Shape batch_a(a.shape().begin(), a.shape().end() - 2), batch_b(b.shape().begin(), b.shape().end() - 2);
    Shape batch;
    try {
        batch = detail::broadcast_shapes("matmul", batch_a, batch_b);
    } catch (const std::invalid_argument&) {
        fail("matmul", "{} @ {}: batch dims {} and {} do not broadcast", shape_str(a.shape()), shape_str(b.shape()),
             shape_str(batch_a), shape_str(batch_b));
    }
    Shape shape_a = batch, shape_b = batch, out_shape = batch;
    shape_a.insert(shape_a.end(), {M, K});
    shape_b.insert(shape_b.end(), {K, N});
    out_shape.insert(out_shape.end(), {M, N});
    // the operands stretched to the batch, and the product: any may be too large
    for (const Shape* shape : {&shape_a, &shape_b, &out_shape}) numel_of(*shape, "matmul");
    const auto broadcast = [](const Tensor& x, const Shape& shape) {
        if (x.shape() == shape) return x.contiguous();
        // expand as a recorded op: the gradient of an expanded copy is summed back
        Tensor copy = detail::expand_view(x.detach().contiguous(), shape).contiguous();
        return record("expand", copy, {x}, [](const Tensor& g) { return Grads{g}; });
    };
    const int64_t count = numel_of(batch);
    Tensor y =
        matmul_batched(broadcast(a, shape_a).reshape({count, M, K}), broadcast(b, shape_b).reshape({count, K, N}));
    return y.reshape(out_shape);
}

// y = x Wᵀ + b, and its backward
//   dx = dy W,   dW = dyᵀ x,   db = Σ_rows dy,
// all on the GEMM with W read in its stored [out, in] layout.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
    if (weight.dim() != 2) fail("linear", "weight must be [out, in], got {}", shape_str(weight.shape()));
    if (x.dim() < 1 || x.size(-1) != weight.size(1))
        fail("linear", "input {} does not end in in_features {} of weight {}", shape_str(x.shape()), weight.size(1),
             shape_str(weight.shape()));
    const int64_t in = weight.size(1), out = weight.size(0);
    if (bias.defined() && (bias.dim() != 1 || bias.size(0) != out))
        fail("linear", "bias {} for weight {} (needs [{}])", shape_str(bias.shape()), shape_str(weight.shape()), out);
    const Tensor xc = detail::saved(x), wc = detail::saved(weight);
    const bool need_x = x.requires_grad(), need_w = weight.requires_grad();
    const bool need_b = bias.defined() && bias.requires_grad();
    const int64_t M = detail::leading_rows(x);
    Shape out_shape = x.shape();
    out_shape.back() = out;
    Tensor y = empty(out_shape, "linear");
    const Tensor bc = bias.defined() ? bias.contiguous() : Tensor();  // every row of y starts at b
    kernels::gemm(false, true, M, out, in, xc.data(), in, wc.data(), in, y.data(), out, false,
                  bc.defined() ? bc.data() : nullptr);
    return record("linear", y, {x, weight, bias}, [=](const Tensor& g) {
        const Tensor gc = g.contiguous();
        Tensor dx, dw, db;
        if (need_x) {  // dx[M,in] = dy[M,out] W[out,in]
            Shape shape = gc.shape();
            shape.back() = in;
            dx = empty(shape);
            kernels::gemm(false, false, M, in, out, gc.data(), out, wc.data(), in, dx.data(), in, false);
        }
        if (need_w) {  // dW[out,in] = dyᵀ x
            dw = empty({out, in});
            kernels::gemm(true, false, out, in, M, gc.data(), out, xc.data(), in, dw.data(), in, false);
        }
        if (need_b) {  // db = Σ over rows, in row order
            db = Tensor::zeros({out});
            double* pdb = db.data();
            const double* pg = gc.data();
            for (int64_t r = 0; r < M; ++r)
                for (int64_t j = 0; j < out; ++j) pdb[j] += pg[r * out + j];
        }
        return Grads{dx, dw, db};
    });
}

}  // namespace ag
