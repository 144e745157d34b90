// ag::kernels::gemm and gemm_batched against a naive triple loop: all four
// transpose combinations, odd sizes, padded leading dimensions, accumulate,
// K = 0 and broadcast (stride-0) batches.
#include <cmath>
#include <cstring>
#include <limits>

#include "autograd/kernels/gemm.h"
#include "engine/helpers.h"

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kSentinel = 7777.0;  // C's padding must keep it

// The reference: C[M,N] (+)= op(A) op(B), k summed in order.
void naive_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const double* A, int64_t lda, const double* B,
                int64_t ldb, double* C, int64_t ldc, bool accumulate, double* scale) {
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double s = 0, mag = 0;
            for (int64_t k = 0; k < K; ++k) {
                const double a = ta ? A[k * lda + i] : A[i * lda + k];
                const double b = tb ? B[j * ldb + k] : B[k * ldb + j];
                s += a * b;
                mag += std::fabs(a * b);
            }
            if (accumulate) mag += std::fabs(C[i * ldc + j]);
            C[i * ldc + j] = accumulate ? C[i * ldc + j] + s : s;
            if (scale) scale[i * ldc + j] = mag;
        }
}

// A row-major matrix of `rows` x `cols` in a buffer with leading dimension
// ld >= cols; the padding holds `pad` (NaN: a kernel that reads it shows it).
std::vector<double> make_matrix(int64_t rows, int64_t cols, int64_t ld, ag::Generator& gen, double pad) {
    std::vector<double> m(static_cast<std::size_t>(std::max<int64_t>(rows * ld, 1)), pad);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) m[r * ld + c] = gen.uniform(-1, 1);
    return m;
}

struct Case {
    bool ta, tb;
    int64_t M, N, K, lda, ldb, ldc;
    bool accumulate;
};

std::string describe(const Case& c) {
    return fmt::format("gemm(trans_a={}, trans_b={}, M={}, N={}, K={}, lda={}, ldb={}, ldc={}, accumulate={})", c.ta,
                       c.tb, c.M, c.N, c.K, c.lda, c.ldb, c.ldc, c.accumulate);
}

// Runs one case; returns an empty string when it matches the reference.
std::string run_case(const Case& c, ag::Generator& gen) {
    const int64_t a_rows = c.ta ? c.K : c.M, a_cols = c.ta ? c.M : c.K;
    const int64_t b_rows = c.tb ? c.N : c.K, b_cols = c.tb ? c.K : c.N;
    const auto A = make_matrix(a_rows, a_cols, c.lda, gen, kNaN);
    const auto B = make_matrix(b_rows, b_cols, c.ldb, gen, kNaN);
    // C starts as random numbers (accumulate) or garbage (overwrite)
    std::vector<double> C = make_matrix(c.M, c.N, c.ldc, gen, kSentinel);
    if (!c.accumulate)
        for (int64_t i = 0; i < c.M; ++i)
            for (int64_t j = 0; j < c.N; ++j) C[i * c.ldc + j] = 12345.0;
    std::vector<double> ref = C, scale(C.size(), 0.0);
    naive_gemm(c.ta, c.tb, c.M, c.N, c.K, A.data(), c.lda, B.data(), c.ldb, ref.data(), c.ldc, c.accumulate,
               scale.data());
    ag::kernels::gemm(c.ta, c.tb, c.M, c.N, c.K, A.data(), c.lda, B.data(), c.ldb, C.data(), c.ldc, c.accumulate);
    for (int64_t i = 0; i < c.M; ++i) {
        for (int64_t j = 0; j < c.ldc; ++j) {
            const std::size_t p = static_cast<std::size_t>(i * c.ldc + j);
            if (j >= c.N) {
                if (C[p] != kSentinel)
                    return fmt::format("{}: padding C[{}][{}] was overwritten with {}", describe(c), i, j, C[p]);
                continue;
            }
            const double tol = 1e-14 * (scale[p] + 1.0) + 1e-14 * static_cast<double>(c.K) * scale[p];
            if (!(std::fabs(C[p] - ref[p]) <= tol))
                return fmt::format("{}: C[{}][{}] expected {:.17g}, actual {:.17g}", describe(c), i, j, ref[p], C[p]);
        }
    }
    return {};
}

}  // namespace

TEST_CASE("gemm matches a naive loop for all transposes and odd sizes", "[engine][gemm]") {
    ag::Generator gen(31);
    // Edge tiles of every kind. Right-edge strips (a strip is 16 columns
    // with AVX-512, 8 with AVX2): one vector wide or less (1, 3, 17, 33, 65,
    // 130) and wider than one vector (12, 23, 28). Bottom-edge panels (8
    // rows with AVX-512, 4 with AVX2) of at most half a panel's rows (1, 17,
    // 33, 65, 130) and of more (23, and 3 with AVX2).
    const int64_t sizes[] = {1, 3, 12, 17, 23, 28, 33, 65, 130};
    const int64_t pads[] = {0, 1, 5};
    int count = 0, failures = 0;
    for (int t = 0; t < 4; ++t) {
        const bool ta = t & 1, tb = t & 2;
        for (int64_t M : sizes)
            for (int64_t N : sizes)
                for (int64_t K : sizes) {
                    const int64_t pad = pads[count % 3];
                    Case c{ta,
                           tb,
                           M,
                           N,
                           K,
                           (ta ? M : K) + pad,
                           (tb ? K : N) + pad,
                           N + pads[(count + 1) % 3],
                           count % 2 == 0};
                    ++count;
                    const std::string err = run_case(c, gen);
                    if (!err.empty() && failures++ < 5) {
                        INFO(err);
                        CHECK(err.empty());
                    }
                }
    }
    INFO(failures << " of " << count << " cases differ from the naive loop");
    CHECK(failures == 0);
}

TEST_CASE("gemm with large leading dimensions and both accumulate modes", "[engine][gemm]") {
    ag::Generator gen(32);
    for (int t = 0; t < 4; ++t)
        for (bool acc : {false, true})
            for (int64_t pad : {0, 3, 64}) {
                const bool ta = t & 1, tb = t & 2;
                const int64_t M = 33, N = 65, K = 17;
                const Case c{ta, tb, M, N, K, (ta ? M : K) + pad, (tb ? K : N) + pad, N + pad + 1, acc};
                const std::string err = run_case(c, gen);
                INFO(err);
                CHECK(err.empty());
            }
}

TEST_CASE("gemm with K = 0 sets or keeps C", "[engine][gemm]") {
    for (int t = 0; t < 4; ++t) {
        const bool ta = t & 1, tb = t & 2;
        const double A[1] = {kNaN}, B[1] = {kNaN};
        std::vector<double> C(3 * 4, 5.0);
        ag::kernels::gemm(ta, tb, 3, 4, 0, A, ta ? 3 : 1, B, tb ? 1 : 4, C.data(), 4, true);
        CAPTURE(ta, tb);
        CHECK(C == std::vector<double>(12, 5.0));  // accumulate: C + 0
        ag::kernels::gemm(ta, tb, 3, 4, 0, A, ta ? 3 : 1, B, tb ? 1 : 4, C.data(), 4, false);
        CHECK(C == std::vector<double>(12, 0.0));  // overwrite: the empty sum 0
    }
}

TEST_CASE("gemm with a bias is bitwise the bias copied into C, then accumulated onto", "[engine][gemm]") {
    // nn::Linear's y = x Wᵀ + b: the bias enters in the store of the first
    // k slice (K = 600: three slices) and the edge tiles (M, N not multiples
    // of the tile), and C's old numbers (NaN here) are never read.
    ag::Generator gen(34);
    int cases = 0;
    for (int t = 0; t < 4; ++t)
        for (int64_t M : {1, 9, 164})
            for (int64_t N : {3, 16, 28, 70})
                for (int64_t K : {0, 1, 64, 600}) {
                    const bool ta = t & 1, tb = t & 2;
                    const auto A = make_matrix(ta ? K : M, ta ? M : K, ta ? M : K, gen, 0.0);
                    const auto B = make_matrix(tb ? N : K, tb ? K : N, tb ? K : N, gen, 0.0);
                    const auto bias = make_matrix(1, N, N, gen, 0.0);
                    std::vector<double> copied(static_cast<std::size_t>(M * N)), C(copied.size(), kNaN);
                    for (int64_t i = 0; i < M; ++i) std::copy_n(bias.data(), N, copied.data() + i * N);
                    const int64_t lda = std::max<int64_t>(ta ? M : K, 1), ldb = std::max<int64_t>(tb ? K : N, 1);
                    ag::kernels::gemm(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, copied.data(), N, true);
                    ag::kernels::gemm(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, C.data(), N, false, bias.data());
                    CAPTURE(ta, tb, M, N, K);
                    REQUIRE(std::memcmp(C.data(), copied.data(), C.size() * sizeof(double)) == 0);
                    ++cases;
                }
    CHECK(cases == 192);
}

TEST_CASE("gemm without accumulate overwrites C even if it holds NaN", "[engine][gemm]") {
    // accumulate=false means C = op(A)·op(B): C's old numbers are never read
    ag::Generator gen(33);
    const int64_t M = 17, N = 33, K = 5;
    const auto A = make_matrix(M, K, K, gen, 0.0);
    const auto B = make_matrix(K, N, N, gen, 0.0);
    std::vector<double> C(M * N, kNaN), ref(M * N, 0.0);
    naive_gemm(false, false, M, N, K, A.data(), K, B.data(), N, ref.data(), N, false, nullptr);
    ag::kernels::gemm(false, false, M, N, K, A.data(), K, B.data(), N, C.data(), N, false);
    int nans = 0;
    for (double v : C) nans += std::isnan(v);
    INFO(nans << " of " << C.size() << " elements of C are NaN after an overwriting gemm");
    CHECK(nans == 0);
}

namespace {
std::string run_batched(bool ta, bool tb, int64_t batch, int64_t M, int64_t N, int64_t K, bool bcast_a, bool bcast_b,
                        int64_t pad, bool acc, ag::Generator& gen) {
    const int64_t a_rows = ta ? K : M, a_cols = ta ? M : K, lda = a_cols + pad;
    const int64_t b_rows = tb ? N : K, b_cols = tb ? K : N, ldb = b_cols + pad;
    const int64_t ldc = N + pad;
    // matrices of a batch are a gap apart: stride = rows·ld + 7
    const int64_t sa = bcast_a ? 0 : a_rows * lda + 7, sb = bcast_b ? 0 : b_rows * ldb + 7;
    const int64_t sc = M * ldc + 7;
    const auto A = make_matrix(bcast_a ? 1 : batch, sa ? sa : a_rows * lda, sa ? sa : a_rows * lda, gen, 0.0);
    const auto B = make_matrix(bcast_b ? 1 : batch, sb ? sb : b_rows * ldb, sb ? sb : b_rows * ldb, gen, 0.0);
    std::vector<double> C = make_matrix(batch, sc, sc, gen, 0.0);
    std::vector<double> ref = C;
    for (int64_t b = 0; b < batch; ++b)
        naive_gemm(ta, tb, M, N, K, A.data() + b * sa, lda, B.data() + b * sb, ldb, ref.data() + b * sc, ldc, acc,
                   nullptr);
    ag::kernels::gemm_batched(ta, tb, batch, M, N, K, A.data(), lda, sa, B.data(), ldb, sb, C.data(), ldc, sc, acc);
    const std::string what = fmt::format(
        "gemm_batched(trans_a={}, trans_b={}, batch={}, M={}, N={}, K={}, stride_a={}, stride_b={}, pad={}, "
        "accumulate={})",
        ta, tb, batch, M, N, K, sa, sb, pad, acc);
    for (std::size_t p = 0; p < C.size(); ++p) {
        const int64_t b = static_cast<int64_t>(p) / sc, in = static_cast<int64_t>(p) % sc;
        const int64_t i = in / ldc, j = in % ldc;
        const bool inside = i < M && j < N;
        if (!inside && C[p] != ref[p])
            return fmt::format("{}: C outside the matrices changed at batch {} offset {}", what, b, in);
        if (inside && !(std::fabs(C[p] - ref[p]) <= 1e-13 * (1.0 + static_cast<double>(K))))
            return fmt::format("{}: batch {} C[{}][{}] expected {:.17g}, actual {:.17g}", what, b, i, j, ref[p], C[p]);
    }
    return {};
}
}  // namespace

TEST_CASE("gemm_batched matches a naive loop, with broadcast operands", "[engine][gemm]") {
    ag::Generator gen(34);
    for (int t = 0; t < 4; ++t) {
        const bool ta = t & 1, tb = t & 2;
        for (int bc = 0; bc < 3; ++bc) {
            const bool bcast_a = bc == 1, bcast_b = bc == 2;
            for (bool acc : {false, true}) {
                const std::string e1 = run_batched(ta, tb, 3, 17, 33, 65, bcast_a, bcast_b, 0, acc, gen);
                INFO(e1);
                CHECK(e1.empty());
                const std::string e2 = run_batched(ta, tb, 5, 3, 1, 17, bcast_a, bcast_b, 2, acc, gen);
                INFO(e2);
                CHECK(e2.empty());
                // attention-like: many small products
                const std::string e3 = run_batched(ta, tb, 16, 8, 8, 4, bcast_a, bcast_b, 1, acc, gen);
                INFO(e3);
                CHECK(e3.empty());
            }
        }
    }
    // K = 0 in a batch: overwrite gives zeros
    const std::string e0 = run_batched(false, false, 2, 3, 4, 0, false, true, 0, false, gen);
    INFO(e0);
    CHECK(e0.empty());
}

TEST_CASE("gemm and gemm_batched are bitwise equal for 1 and 2 threads", "[engine][gemm][threads]") {
    ag::Generator gen(35);
    // 130 rows split by rows between the threads; 20 rows (3 row panels)
    // split by columns, whole strips of the 257 (the last one ragged), with
    // and without a bias
    const int64_t N = 257, K = 129;
    const auto B = make_matrix(K, N, N, gen, 0.0);
    const auto bias = make_matrix(1, N, N, gen, 0.0);
    for (const int64_t M : {130, 20}) {
        const auto A = make_matrix(M, K, K, gen, 0.0);
        const auto At = make_matrix(K, M, M, gen, 0.0);
        for (int t = 0; t < 8; ++t) {
            const bool ta = t & 1, tb = t & 2, with_bias = t & 4;
            const auto& a = ta ? At : A;
            const int64_t lda = ta ? M : K;
            // B as [K,N] (ldb N) or, transposed, read as [N,K] rows of the same buffer (ldb K)
            const int64_t ldb = tb ? K : N;
            std::vector<double> c1(M * N), c2(M * N);
            for (const int threads : {1, 2}) {
                const ag::ThreadCountGuard use(threads);
                ag::kernels::gemm(ta, tb, M, N, K, a.data(), lda, B.data(), ldb, (threads == 1 ? c1 : c2).data(), N,
                                  false, with_bias ? bias.data() : nullptr);
            }
            CAPTURE(M, ta, tb, with_bias);
            CHECK(std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(double)) == 0);
        }
    }
    const int64_t batch = 6, m = 64, n = 64, k = 32;
    const auto BA = make_matrix(batch, m * k, m * k, gen, 0.0);
    const auto BB = make_matrix(1, k * n, k * n, gen, 0.0);
    std::vector<double> c1(batch * m * n), c2(batch * m * n);
    for (const int threads : {1, 2}) {
        const ag::ThreadCountGuard use(threads);
        ag::kernels::gemm_batched(false, false, batch, m, n, k, BA.data(), k, m * k, BB.data(), n, 0,
                                  (threads == 1 ? c1 : c2).data(), n, m * n, false);
    }
    CHECK(std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(double)) == 0);
}

TEST_CASE("a few rows times a transposed B, computed as Cᵀ, are bitwise those rows of a taller product",
          "[engine][gemm][threads]") {
    // Y = X·Wᵀ with at most 64 rows, at least twice as many columns and
    // K >= 256 (lesson 01's batches of 20 digits) is computed as
    // Yᵀ = W·Xᵀ. Each of its elements must still be the one the usual way
    // computes: rows 0 … M-1 of the same product with 80 more rows (which
    // goes the usual way) must be the same to the bit, with a bias, onto C
    // (accumulate) or over it, at 1 and 2 threads, and C's padding
    // (ldc > N) must keep its numbers.
    ag::Generator gen(36);
    int cases = 0;
    for (const int64_t M : {1, 4, 20, 64})
        for (const int64_t N : {128, 257})
            for (const int64_t K : {256, 784})
                for (int mode = 0; mode < 3; ++mode) {  // plain, bias, accumulate
                    const int64_t tall = M + 80, ldc = N + 3;
                    const auto A = make_matrix(tall, K, K, gen, 0.0);    // X: its first M rows, or all
                    const auto W = make_matrix(N, K, K + 1, gen, kNaN);  // op(B) = Wᵀ, ldb = K + 1
                    const auto bias = make_matrix(1, N, N, gen, 0.0);
                    const auto start = make_matrix(tall, N, ldc, gen, kSentinel);  // C before, and its padding
                    const double* b = mode == 1 ? bias.data() : nullptr;
                    std::vector<double> expected = start;
                    ag::kernels::gemm(false, true, tall, N, K, A.data(), K, W.data(), K + 1, expected.data(), ldc,
                                      mode == 2, b);
                    expected.resize(static_cast<std::size_t>(M * ldc));
                    for (const int threads : {1, 2}) {
                        const ag::ThreadCountGuard use(threads);
                        std::vector<double> C(start.begin(), start.begin() + M * ldc);
                        ag::kernels::gemm(false, true, M, N, K, A.data(), K, W.data(), K + 1, C.data(), ldc, mode == 2,
                                          b);
                        CAPTURE(M, N, K, mode, threads);
                        REQUIRE(std::memcmp(C.data(), expected.data(), C.size() * sizeof(double)) == 0);
                    }
                    ++cases;
                }
    CHECK(cases == 48);
}
