#pragma once
// One GEMM for the forward product and both backward products of matmul.
//
//   C[M,N] (+)= op(A)[M,K] · op(B)[K,N]
//
// op(A) is A (row-major [M,K], leading dimension lda) or, with trans_a, the
// transpose of a row-major [K,M] matrix; likewise op(B). So matmul's three
// products need no transposed copies:
//   forward   Y  = X  · W        gemm(false, false)
//   backward  dX = dY · Wᵀ       gemm(false, true )
//   backward  dW = Xᵀ · dY       gemm(true,  false)
//
// Results are bitwise the same for any thread count: every element of
// C is reduced over k in the same order by exactly one thread.
//
// Given a bias (N numbers) and accumulate false, C = bias + op(A)·op(B),
// the bias added to every row (nn::Linear's y = x Wᵀ + b): bitwise what
// copying the bias into each row of C and accumulating onto it gives,
// without that extra pass over C. bias + C's first k slice is the store
// of the micro-kernel, which adds C + acc when accumulating.
#include <cstdint>

namespace ag::kernels {

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const double* A, int64_t lda, const double* B,
          int64_t ldb, double* C, int64_t ldc, bool accumulate, const double* bias = nullptr);

// A batch of independent products: C_b (+)= op(A_b) · op(B_b) for
// b = 0 … batch-1, with A_b = A + b·stride_a (likewise B, C). A stride of 0
// reuses one matrix for the whole batch (broadcasting); stride_c must not be
// 0. Threads split the (batch, row-block) pairs, so small products such as
// attention's per-head [T,d]·[d,T] still use every core.
void gemm_batched(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N, int64_t K, const double* A,
                  int64_t lda, int64_t stride_a, const double* B, int64_t ldb, int64_t stride_b, double* C, int64_t ldc,
                  int64_t stride_c, bool accumulate, const double* bias = nullptr);

}  // namespace ag::kernels
