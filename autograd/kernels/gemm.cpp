// GEMM: C[M,N] (+)= op(A)[M,K] · op(B)[K,N], in double precision.
//
// The naive triple loop does 2·M·N·K flops but is limited by memory: every
// multiply-add loads an element of A and one of B. A fast GEMM does the same
// arithmetic, reorganised so that almost every operand comes from a register:
//
//   1. The micro-kernel computes a small MR×NR tile of C, kept in registers for
//      the whole reduction over k. At each k it loads MR numbers of A and NR
//      numbers of B and does MR·NR multiply-adds: an outer product. Each
//      number loaded is used NR (or MR) times.
//   2. Packing copies the parts of op(A) and op(B) that the micro-kernels are
//      about to read into contiguous buffers, in exactly the order they read
//      them. This is where the transposes go: the micro-kernel always sees
//      the same layout, whatever the layout of A and B in memory. (A row
//      panel of an untransposed A is read in place, its MR rows each
//      contiguous in k, and so is a panel of a transposed A or a strip of an
//      untransposed B when few strips or panels would reuse a packed copy:
//      see gemm_rows, kAInPlaceColumns and kBInPlaceRows. A product of few
//      rows with a transposed B is computed as Cᵀ so that its large operand
//      is the one read in place: see transposed_product.)
//   3. Blocking: the reduction is cut into slices of at most KC values of k,
//      and the columns into blocks of NC, so that a packed slice of B (KC×NC)
//      stays in the L2 cache, and a packed row panel of A (MR×KC) in L1 while
//      it is multiplied by every column strip of that slice.
//
// Loop order, outermost first (the split between threads is in gemm_batched):
//   for each column block  jc (NC columns)
//     for each k slice     pc (≤ KC k-values)  pack op(B)[pc.., jc..] (L2)*
//       for each row panel ir (MR rows)        pack op(A)[ir.., pc..] (L1)*
//         for each strip   jr (NR columns)     C tile (+)= A panel · B strip
//   * unless it can be read in place, see point 2.
//
// Determinism: every element C[i][j] is computed by the same instructions in
// the same order: acc = Σ over one k slice in increasing k, then C (+)= acc,
// slice after slice. Tiles at the edges of C are computed in full from
// zero-padded panels and only their valid part is kept, and a panel read in
// place differs from a packed one only in its addresses, so an element's
// value does not depend on where its tile lies; and each thread owns whole
// rows of C (or, in a product of few rows, whole columns: see
// gemm_batched). Hence the result is bitwise the same for any number of
// threads.
#include "autograd/kernels/gemm.h"

#include "autograd/kernels/vector_width.h"

#include "autograd/profile.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "autograd/engine.h"
#include "autograd/thread_pool.h"

namespace ag::kernels {
namespace {

// The target's vector register, in doubles (vector_width.h: 8 with AVX-512,
// 4 with AVX/AVX2, 2 with SSE or NEON), and how many such registers there are.
constexpr int64_t kVectorLanes = kVectorBytes / sizeof(double);
#if defined(__AVX512F__) || defined(__aarch64__)
constexpr int64_t kRegisters = 32;
#else
constexpr int64_t kRegisters = 16;
#endif
// The register tile of C: MR rows × NR columns, a row being NV vectors. The
// tile's MR·NV accumulators, the NV vectors of B and the broadcast A value
// must fit in the registers together, or the compiler keeps accumulators on
// the stack and the kernel runs at a twentieth of its speed (measured: a
// 16-vector tile on AVX2's 16 registers, 5% of the FMA peak).
// - 32 registers (AVX-512, AArch64): 8 × 2 vectors, 16 accumulators.
// - 16 registers (AVX2, SSE): 4 × 2 vectors, 8 accumulators: 8 independent
//   FMA chains, as many as 2 FMA units with a 4-cycle latency need. Measured
//   on an AMD Zen 1 (AVX2) at the training shapes: 77-100% of the FMA peak,
//   against 59-92% for 6 × 2, 55-81% for 8 × 1, 57-81% for 3 × 4 and 52-73%
//   for 4 × 3 (whose 12-column strips leave ragged edges at N = 64 and 256).
// Each k step loads NV vectors of B and MR values of A for MR·NV FMAs.
// MR = 8 and 4 and NR = 16 and 8 divide the sizes that occur in practice
// (64, 164, 256, 2048, ...). The tile's shape does not change any result:
// each element of C sums the same products in the same order whatever tile
// it lies in (see "Determinism" above).
constexpr int64_t MR = kRegisters == 32 ? 8 : 4;
constexpr int64_t NV = 2;
constexpr int64_t NR = NV * kVectorLanes;
static_assert(MR * NV + NV + 1 <= kRegisters, "the register tile must fit in the vector registers");
// Cache blocking: a packed A panel is MR×KC doubles = 8-16 KiB (L1 is 32-48
// KiB), a packed B slice at most KC×NC doubles = 512 KiB (L2 is 0.5-2 MiB).
constexpr int64_t KC = 256;
constexpr int64_t NC = 256;
static_assert(NC % NR == 0, "a column block is whole strips");
// An untransposed B is read in place (row stride ldb) instead of packed when
// a thread's share of C has at most this many rows: packing a slice of B
// costs a pass over it, repaid only by the row panels that then read the
// packed copy (M/MR of them). With few panels (dW = dYᵀ·X has M = d_in = 64
// rows) the copy costs more than the strided reads; with more (a training
// shard's ~164 rows, dW with d_in = 256) the packed strip's contiguous
// 8-32 KiB stays in L1 for every panel, while a strip of B read in place,
// its rows 512 B to 2 KiB apart, maps onto a few of L1's 64 sets and is
// fetched again from L2 for each panel (measured on an Intel Xeon: packing
// at 164 and 256 rows is 2-15% faster, at 64 rows 9% slower).
constexpr int64_t kBInPlaceRows = 64;
// A transposed A's panel is read in place when at most this many columns
// (4 strips) reuse it; see gemm_rows.
constexpr int64_t kAInPlaceColumns = 4 * NR;

// A 64-byte aligned scratch buffer that only ever grows; one per thread, so
// calls after the first allocate nothing.
class PackBuffer {
public:
    ~PackBuffer() { std::free(data_); }
    double* get(int64_t n) {
        if (n > size_) {
            std::free(data_);
            data_ = static_cast<double*>(std::aligned_alloc(64, (n * 8 + 63) / 64 * 64));
            size_ = n;
        }
        return data_;
    }

private:
    double* data_ = nullptr;
    int64_t size_ = 0;
};

thread_local PackBuffer a_buffer;
thread_local PackBuffer b_buffer;
thread_local PackBuffer c_buffer;  // Cᵀ of a product computed the other way round (transposed_product)

// One vector register of doubles (GCC's and Clang's vector extension), and
// half of one (for the narrowest edge strips, see edge_tile).
using Vector = double __attribute__((vector_size(kVectorLanes * sizeof(double))));
using HalfVector = double __attribute__((vector_size(kVectorLanes / 2 * sizeof(double))));

// (By reference: a function that returns or takes a 64-byte vector by value
// has another ABI with AVX-512 than without, which GCC warns about.)
template <typename Vec>
inline void load(Vec& v, const double* p) {
    std::memcpy(&v, p, sizeof v);
}
template <typename Vec>
inline void store(double* p, const Vec& v) {
    std::memcpy(p, &v, sizeof v);
}

// An L×L block transposed in registers (L = kVectorLanes), for packing a
// transposed B. Element (i, t) is lane t of row i. Round h (h = 1, 2, 4, …,
// L/2) exchanges the bit worth h between the row number and the lane number:
// it pairs rows i and i + h (i & h = 0); row i keeps its lanes t with
// t & h = 0 and takes into its lanes t + h the lanes t of row i + h; row
// i + h gets the lanes t + h of both. Once every bit is exchanged, element
// (i, t) sits at (t, i). For L = 2, one round: rows (a b), (c d) become
// (a c), (b d). For L = 8, 3 rounds of 8 shuffles (4 pairs, 2 each),
// against 64 scalar loads and 64 stores.
template <int64_t h, size_t... t>
inline void swap_bit(Vector& lo, Vector& hi, std::index_sequence<t...>) {
    const Vector a = lo, b = hi;  // in a shuffle of (a, b), lane L + t is b's lane t
    lo = __builtin_shufflevector(a, b, (t & h ? kVectorLanes + t - h : t)...);
    hi = __builtin_shufflevector(a, b, (t & h ? kVectorLanes + t : t + h)...);
}

template <int64_t h = 1>
inline void transpose(Vector (&rows)[kVectorLanes]) {
    if constexpr (h < kVectorLanes) {
#pragma GCC unroll 8
        for (int64_t i = 0; i < kVectorLanes; ++i)
            if (!(i & h)) swap_bit<h>(rows[i], rows[i + h], std::make_index_sequence<kVectorLanes>{});
        transpose<2 * h>(rows);
    }
}

// Pack rows [i0, i0+m) × k in [k0, k0+kc) of op(A) into an MR×kc panel stored
// column by column, Ap[k·MR + i] = op(A)[i0+i][k0+k], rows m..MR-1 zero: the
// MR numbers the micro-kernel broadcasts at step k lie side by side. For a
// transposed A they are also side by side in A (op(A)[i][k] = A[k·lda + i]),
// so each column is one contiguous copy. Used for a transposed A, and for the
// last, partial panel of an untransposed one.
void pack_a(bool trans, const double* A, int64_t lda, int64_t i0, int64_t m, int64_t k0, int64_t kc, double* Ap) {
    for (int64_t k = 0; k < kc; ++k) {
        double* dst = Ap + k * MR;
        if (trans) {
            const double* a = A + (k0 + k) * lda + i0;
#pragma omp simd
            for (int64_t i = 0; i < MR; ++i) dst[i] = i < m ? a[i] : 0.0;
        } else {  // op(A)[i][k] = A[i·lda + k]: one number from each row
            for (int64_t i = 0; i < MR; ++i) dst[i] = i < m ? A[(i0 + i) * lda + k0 + k] : 0.0;
        }
    }
}

// Pack k in [k0, k0+kc) × columns [j0, j0+n) of op(B) into strips of NR
// columns, each stored row by row: Bp[(s·kc + k)·NR + j] = op(B)[k0+k][j0+s·NR+j].
// Columns past n in the last strip are zero. The micro-kernel reads a strip
// one row k at a time (two vector loads).
void pack_b(bool trans, const double* B, int64_t ldb, int64_t k0, int64_t kc, int64_t j0, int64_t n, double* Bp) {
    const int64_t full = n / NR, rest = n % NR;  // whole strips, ragged columns
    if (!trans) {                                // op(B)[k][j] = B[k·ldb + j]: walk B row by row, contiguously
        for (int64_t k = 0; k < kc; ++k) {
            const double* b = B + (k0 + k) * ldb + j0;
            for (int64_t s = 0; s < full; ++s) {
                double* dst = Bp + (s * kc + k) * NR;
#pragma omp simd
                for (int64_t j = 0; j < NR; ++j) dst[j] = b[s * NR + j];
            }
            if (rest > 0) {
                double* dst = Bp + (full * kc + k) * NR;
                for (int64_t j = 0; j < NR; ++j) dst[j] = j < rest ? b[full * NR + j] : 0.0;
            }
        }
    } else {  // op(B)[k][j] = B[j·ldb + k]: transpose
        // Row k of a strip is element k of NR rows of B. A full strip goes
        // L values of k at a time: each of its NV blocks of L rows of B is
        // loaded as L vectors (L consecutive k each), transposed in registers
        // and stored as L rows of the strip. The other values (a ragged
        // strip, the last kc % L values of k) are copied one by one, which
        // for a full strip was NR scalar loads and stores per k: 0.30 ns an
        // element, 30% of Y = X·Wᵀ's time on 20 rows (lesson 01's digit
        // nets), against 0.19 ns and 21% with the transposes (Zen 4).
        constexpr int64_t L = kVectorLanes;
        const int64_t strips = full + (rest > 0 ? 1 : 0);
        for (int64_t s = 0; s < strips; ++s) {
            const int64_t cols = s < full ? NR : rest;
            const double* b = B + (j0 + s * NR) * ldb + k0;
            double* dst = Bp + s * kc * NR;
            int64_t k = 0;
            if (cols == NR) {
                for (; k + L <= kc; k += L)
                    for (int64_t v = 0; v < NV; ++v) {
                        Vector block[L];
                        for (int64_t i = 0; i < L; ++i) load(block[i], b + (v * L + i) * ldb + k);
                        transpose(block);
                        for (int64_t i = 0; i < L; ++i) store(dst + (k + i) * NR + v * L, block[i]);
                    }
            }
            for (; k < kc; ++k) {
#pragma omp simd
                for (int64_t j = 0; j < NR; ++j) dst[k * NR + j] = j < cols ? b[j * ldb + k] : 0.0;
            }
        }
    }
}

// The micro-kernel: acc[R][NR] = Σ_k Ap[:, k] ⊗ Bp[k, :], one outer product
// per k, then C (+)= acc for a full R×NR tile of C (row stride ldc; R = MR,
// or MR/2 for a short edge panel, see edge_kernel). The A
// panel's element (i, k) is at Ap[i·rs + k·cs]: rs = lda, cs = 1 for a panel
// read in place from an untransposed A, rs = 1, cs = MR for a packed one.
// A row of the tile is V vectors (GCC's vector extension, one register
// each; V = NV, or 1 for a narrow edge strip, see edge_kernel), and each k
// step is V vector loads of B, R broadcasts of A and R·V fused
// multiply-adds.
// Every loop over the rows is unrolled whole, so acc's indices are
// constants and it stays in registers for the whole call (as an array of
// doubles with `omp simd` loops GCC kept it on the stack between the
// loops: 16 vector stores and loads more per call). Unrolling k by 4 as
// well leaves fewer loop-counter instructions competing with the FMAs for
// execution ports; each acc[i][j] still sums in k order. Step k = 0 sets
// acc to 0 + a·b (kc >= 1), which is what a first step from acc = 0
// computes, down to the sign of a zero. The store is C = C + acc (add),
// bias + acc (given a bias: the tile's NR entries of a row added to every
// row of C), or acc.
template <int64_t R = MR, int64_t V = NV, typename Vec = Vector>
void micro_kernel(int64_t kc, const double* __restrict Ap, int64_t rs, int64_t cs, const double* __restrict Bp,
                  int64_t ldb, double* __restrict C, int64_t ldc, bool add, const double* __restrict bias) {
    constexpr int64_t kLanes = sizeof(Vec) / sizeof(double);
    Vec acc[R][V], b[V];
    for (int64_t v = 0; v < V; ++v) load(b[v], Bp + v * kLanes);
#pragma GCC unroll 8
    for (int64_t i = 0; i < R; ++i)
        for (int64_t v = 0; v < V; ++v) acc[i][v] = 0.0 + Ap[i * rs] * b[v];
#pragma GCC unroll 4
    for (int64_t k = 1; k < kc; ++k) {
        for (int64_t v = 0; v < V; ++v) load(b[v], Bp + k * ldb + v * kLanes);
#pragma GCC unroll 8
        for (int64_t i = 0; i < R; ++i) {
            const double a = Ap[i * rs + k * cs];
            for (int64_t v = 0; v < V; ++v) acc[i][v] += a * b[v];
        }
    }
#pragma GCC unroll 8
    for (int64_t i = 0; i < R; ++i)
        for (int64_t v = 0; v < V; ++v) {
            double* c = C + i * ldc + v * kLanes;
            Vec base;  // what acc is added to: C itself, or the bias
            if (add) {
                load(base, c);
                store(c, base + acc[i][v]);
            } else if (bias) {
                load(base, bias + v * kLanes);
                store(c, base + acc[i][v]);
            } else {
                store(c, acc[i][v]);
            }
        }
}

// An m×n tile on the bottom or right edge of C (m < MR or n < NR): the
// micro-kernel computes the full tile from the zero-padded panels into a
// scratch tile, and only the valid part goes into C, with the same final
// addition a full tile does. A strip of at most one vector's columns takes
// the micro-kernel one vector wide, and one of at most half a vector's (the
// 4 left of GPT's 68-word vocabulary: 4 strips of 16 and 4) half a vector
// wide, whose FMAs a core with 256-bit units (Zen 4) does two at a time
// (that product 51.6 → 53.8 GFLOP/s); a panel of at most MR/2 rows (the 4
// left of a training shard's 164: 20 panels of 8 and 4) takes the
// micro-kernel MR/2 rows tall: half the FMAs of the padded tile. Each
// element still sums the same products in the same order.
template <int64_t R>
void edge_tile(int64_t kc, const double* Ap, int64_t rs, int64_t cs, const double* Bp, int64_t ldb, double* tile,
               int64_t n) {
    if (n <= kVectorLanes / 2)
        micro_kernel<R, 1, HalfVector>(kc, Ap, rs, cs, Bp, ldb, tile, NR, false, nullptr);
    else if (n <= kVectorLanes)
        micro_kernel<R, 1>(kc, Ap, rs, cs, Bp, ldb, tile, NR, false, nullptr);
    else
        micro_kernel<R, NV>(kc, Ap, rs, cs, Bp, ldb, tile, NR, false, nullptr);
}

void edge_kernel(int64_t kc, const double* Ap, int64_t rs, int64_t cs, const double* Bp, int64_t ldb, double* C,
                 int64_t ldc, int64_t m, int64_t n, bool add, const double* bias) {
    alignas(64) double tile[MR * NR];
    if (m <= MR / 2)
        edge_tile<MR / 2>(kc, Ap, rs, cs, Bp, ldb, tile, n);
    else
        edge_tile<MR>(kc, Ap, rs, cs, Bp, ldb, tile, n);
    for (int64_t i = 0; i < m; ++i) {
        double* c = C + i * ldc;
        const double* t = tile + i * NR;
        if (add) {
            for (int64_t j = 0; j < n; ++j) c[j] += t[j];
        } else if (bias) {
            for (int64_t j = 0; j < n; ++j) c[j] = bias[j] + t[j];
        } else {
            for (int64_t j = 0; j < n; ++j) c[j] = t[j];
        }
    }
}

// Rows [i0, i1) of one product, on the calling thread: the loop nest above.
void gemm_rows(bool trans_a, bool trans_b, int64_t i0, int64_t i1, int64_t N, int64_t K, const double* A, int64_t lda,
               const double* B, int64_t ldb, double* C, int64_t ldc, bool accumulate, const double* bias) {
    // K is cut into equal slices of at most KC (K = 300 gives 150 + 150, not
    // 256 + 44), so no slice is too short to amortise writing its C tiles.
    const int64_t slices = (K + KC - 1) / KC;
    const int64_t kc_max = (K + slices - 1) / slices;
    double* Ap = a_buffer.get(MR * kc_max);
    double* Bp = b_buffer.get(kc_max * std::min((N + NR - 1) / NR * NR, NC));
    const bool b_in_place = !trans_b && i1 - i0 <= kBInPlaceRows;
    for (int64_t jc = 0; jc < N; jc += NC) {
        const int64_t nc = std::min(NC, N - jc);
        for (int64_t pc = 0; pc < K; pc += kc_max) {
            const int64_t kc = std::min(kc_max, K - pc);
            // The first slice overwrites C (with bias + its sums, given a
            // bias) unless asked to accumulate; later slices add their
            // partial sums to it.
            const bool add = accumulate || pc > 0;
            if (!b_in_place) {
                pack_b(trans_b, B, ldb, pc, kc, jc, nc, Bp);
            } else if (nc % NR != 0) {  // full strips are read in place; pack the ragged last one
                const int64_t j_last = nc / NR * NR;
                pack_b(false, B, ldb, pc, kc, jc + j_last, nc - j_last, Bp + j_last * kc);
            }
            for (int64_t ir = i0; ir < i1; ir += MR) {
                const int64_t m = std::min(MR, i1 - ir);
                // A full panel of an untransposed A is read in place (row stride
                // lda): copying it would only add a pass over A, which is often the
                // largest operand, while the hardware prefetcher streams its MR rows
                // during the first micro-kernel. So is a full panel of a transposed A
                // when at most kAInPlaceColumns columns of C reuse it: its MR numbers
                // at step k are side by side in row k of A (rs = 1, cs = lda), and
                // packing them would cost as much as the few strips that read them
                // (dW = dYᵀ·X with d_in = 64 columns). Other panels are packed.
                const bool in_place = m == MR && (!trans_a || nc <= kAInPlaceColumns);
                if (!in_place) pack_a(trans_a, A, lda, ir, m, pc, kc, Ap);
                const double* a = !in_place ? Ap : trans_a ? A + pc * lda + ir : A + ir * lda + pc;
                const int64_t rs = !in_place || trans_a ? 1 : lda;
                const int64_t cs = !in_place ? MR : trans_a ? lda : 1;
                for (int64_t jr = 0; jr < nc; jr += NR) {
                    const int64_t n = std::min(NR, nc - jr);
                    double* Ct = C + ir * ldc + jc + jr;
                    const bool in_place_strip = b_in_place && n == NR;
                    const double* b = in_place_strip ? B + pc * ldb + jc + jr : Bp + jr * kc;
                    const int64_t b_stride = in_place_strip ? ldb : NR;
                    const double* bias_t = bias ? bias + jc + jr : nullptr;
                    if (m == MR && n == NR)
                        micro_kernel(kc, a, rs, cs, b, b_stride, Ct, ldc, add, bias_t);
                    else
                        edge_kernel(kc, a, rs, cs, b, b_stride, Ct, ldc, m, n, add, bias_t);
                }
            }
        }
    }
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const double* A, int64_t lda, const double* B,
          int64_t ldb, double* C, int64_t ldc, bool accumulate, const double* bias) {
    gemm_batched(trans_a, trans_b, 1, M, N, K, A, lda, 0, B, ldb, 0, C, ldc, 0, accumulate, bias);
}

namespace {

// The products of gemm_batched, split between the threads (K >= 1).
void split_between_threads(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N, int64_t K, const double* A,
                           int64_t lda, int64_t stride_a, const double* B, int64_t ldb, int64_t stride_b, double* C,
                           int64_t ldc, int64_t stride_c, bool accumulate, const double* bias) {
    // The work is batch × panels row panels of MR rows, numbered matrix by
    // matrix. Each thread takes one contiguous range of these numbers, so it
    // owns whole rows of C and packs each slice of B once per matrix it
    // touches. Below ~1 MFLOP (~10 µs) a second thread costs more than it saves;
    // inside another parallel region (the shards of lessons::ShardedGradient)
    // the caller's threads are already busy, so the product runs on the
    // calling thread.
    //
    // A single product of fewer than two row panels per thread (lesson 01's
    // batches of 20 rows: 3 panels) splits its columns instead, by whole
    // strips of NR: each thread then packs only its part of B, where split
    // by rows each thread packs all of it (and 20 rows split 8 / 12). Either
    // way an element is computed whole by one thread, the same way. 2
    // threads, 20 rows (Zen 4): dX = dY·W 83 → 105 GFLOP/s, and Y = X·Wᵀ
    // 62 → 82 (when K >= KC it now goes the transposed way: 83-98).
    const int64_t panels = (M + MR - 1) / MR;
    const int64_t total = batch * panels;
    const int64_t strips = (N + NR - 1) / NR;
    const int64_t max_threads = ag::num_threads();
    const bool by_columns = batch == 1 && panels < 2 * max_threads && strips > 1;
    const double flops = 2.0 * double(batch) * double(M) * double(N) * double(K);
    const auto columns = [&](int64_t t, int64_t threads) {
        const int64_t j0 = strips * t / threads * NR, j1 = std::min(N, strips * (t + 1) / threads * NR);
        if (j0 < j1)
            gemm_rows(trans_a, trans_b, 0, M, j1 - j0, K, A, lda, trans_b ? B + j0 * ldb : B + j0, ldb, C + j0, ldc,
                      accumulate, bias ? bias + j0 : nullptr);
    };
    const auto rows = [&](int64_t t, int64_t threads) {
        const int64_t end = total * (t + 1) / threads;
        for (int64_t p = total * t / threads; p < end;) {
            const int64_t b = p / panels;  // matrix, and its panels [first, last)
            const int64_t first = p % panels;
            const int64_t last = std::min(panels, first + (end - p));
            gemm_rows(trans_a, trans_b, first * MR, std::min(M, last * MR), N, K, A + b * stride_a, lda,
                      B + b * stride_b, ldb, C + b * stride_c, ldc, accumulate, bias);
            p += last - first;
        }
    };
    const int64_t threads = std::min(max_threads, by_columns ? strips : total);
    if (flops <= 1e6 || threads == 1 || ag::detail::in_parallel_region()) {
        rows(0, 1);
        return;
    }
    auto piece = [&](int64_t t) { by_columns ? columns(t, threads) : rows(t, threads); };
    ag::detail::run_pieces(threads, piece);
}

// Few rows of C and a transposed B, such as Y = X·Wᵀ on lesson 01's
// batches of 20 digits (W is [N, K]): packing op(B) = Wᵀ, N·K numbers, costs
// as much as ~6 rows of C do (a transposing copy, 0.19 ns a number, against
// 2 FLOPs a row at ~16 a cycle): a fifth of the time at 20 rows. So
// Cᵀ = W·op(A)ᵀ is computed instead, into a scratch [N, M]: W is then an
// untransposed A, whose panels are read in place, and op(A)ᵀ the
// transposed B, M·K numbers to pack. Each element sums the same products
// in the same order (a·b = b·a exactly) from the same start (C when
// accumulating, the bias, or nothing), so the result is the same to the
// bit. Cᵀ's M columns are strips of NR and an edge strip (20 = 16 + 4,
// half a vector wide: see edge_tile). Copying C into and out of the scratch
// costs a few ns an element of C, repaid only when N is well above M and
// the sum long (K >= KC): Zen 4, 1 thread, 20 rows, Y = X·Wᵀ 784 → 256
// 45.8 → 52.0 GFLOP/s and 256 → 784 44.6 → 50.4 (at 32 × 192, K = 64 it
// would lose 15 %). Up to 64 rows: at 64 × 256, K = 256 the two ways tie,
// and more rows repay the packing of op(B) (a training shard's 164).
constexpr int64_t kTransposeRows = 64;

void transposed_product(int64_t M, int64_t N, int64_t K, const double* A, int64_t lda, const double* B, int64_t ldb,
                        double* C, int64_t ldc, bool accumulate, const double* bias) {
    double* ct = c_buffer.get(N * M);  // Cᵀ, [N, M]
    if (accumulate || bias)
        for (int64_t j = 0; j < N; ++j)
            for (int64_t i = 0; i < M; ++i) ct[j * M + i] = accumulate ? C[i * ldc + j] : bias[j];
    split_between_threads(false, true, 1, N, M, K, B, ldb, 0, A, lda, 0, ct, M, 0, accumulate || bias, nullptr);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = ct[j * M + i];
}

}  // namespace

void gemm_batched(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N, int64_t K, const double* A,
                  int64_t lda, int64_t stride_a, const double* B, int64_t ldb, int64_t stride_b, double* C, int64_t ldc,
                  int64_t stride_c, bool accumulate, const double* bias) {
    if (batch <= 0 || M <= 0 || N <= 0) return;
    const profile::Stopwatch timed(&profile::Counters::gemm_seconds);  // bench_train --profile
    profile::count_gemm(2.0 * double(batch) * double(M) * double(N) * double(K));
    if (K <= 0) {  // an empty sum: C = 0 (or the bias in every row), or C unchanged when accumulating
        if (!accumulate)
            for (int64_t b = 0; b < batch; ++b)
                for (int64_t i = 0; i < M; ++i) {
                    double* c = C + b * stride_c + i * ldc;
                    if (bias)
                        std::copy_n(bias, N, c);
                    else
                        std::fill_n(c, N, 0.0);
                }
        return;
    }
    if (batch == 1 && !trans_a && trans_b && M <= kTransposeRows && 2 * M <= N && K >= KC) {
        transposed_product(M, N, K, A, lda, B, ldb, C, ldc, accumulate, bias);
        return;
    }
    split_between_threads(trans_a, trans_b, batch, M, N, K, A, lda, stride_a, B, ldb, stride_b, C, ldc, stride_c,
                          accumulate, bias);
}

}  // namespace ag::kernels
