// Matmul benchmark: our GEMM against OpenBLAS on the products training
// makes (one shard of a language model's batch, and lesson 01's digit nets
// on their batches) and on those of a larger Transformer-sized layer (2048
// rows = batch × sequence).
//
// For each shape it prints GFLOP/s (2·M·N·K flops per product) of
// ag::kernels::gemm with 1 and 2 engine threads, as a fraction of the
// machine's FMA peak at that thread count (measured first, and again after
// the runs to see whether the machine held still: benchmarks/peak.h)
// and, when built with OpenBLAS (HAVE_CBLAS), of cblas_dgemm with 1 and 2
// threads and the ratios. Each figure is the best of 5 runs, each run
// repeating the product for ~0.2 s.
//
// Before timing, it checks that our result matches a naive triple loop to
// 1e-12 (relative to the largest |C|) and is bitwise the same with 1 and 2
// threads; it prints a line for any failure and exits with status 1.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "autograd/engine.h"
#include "autograd/kernels/gemm.h"
#include "benchmarks/peak.h"
#include "lessons/common/cli.h"
#include "lessons/pretrain_finetune/digits_comparison.h"
#include "nn/config.h"

#ifdef HAVE_CBLAS
#include <cblas.h>
#endif

namespace {

// C[M,N] = op(A)·op(B), as gemm_batched sees it: batch products with the
// operands stored row-major and tightly packed, op(X) = X or Xᵀ.
struct Shape {
    std::string name, what;
    bool trans_a, trans_b;
    int64_t batch, M, N, K;
    int64_t lda() const { return trans_a ? M : K; }
    int64_t ldb() const { return trans_b ? K : N; }
    double flops() const { return 2.0 * double(batch * M) * double(N) * double(K); }
};

struct Operands {
    std::vector<double> A, B, C;
};

Operands make_operands(const Shape& s, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    Operands o{std::vector<double>(s.batch * s.M * s.K), std::vector<double>(s.batch * s.K * s.N),
               std::vector<double>(s.batch * s.M * s.N)};
    for (double& x : o.A) x = u(rng);
    for (double& x : o.B) x = u(rng);
    return o;
}

void run_ours(const Shape& s, Operands& o) {
    ag::kernels::gemm_batched(s.trans_a, s.trans_b, s.batch, s.M, s.N, s.K, o.A.data(), s.lda(), s.M * s.K, o.B.data(),
                              s.ldb(), s.K * s.N, o.C.data(), s.N, s.M * s.N, false);
}

#ifdef HAVE_CBLAS
void run_openblas(const Shape& s, Operands& o) {
    for (int64_t b = 0; b < s.batch; ++b)
        cblas_dgemm(CblasRowMajor, s.trans_a ? CblasTrans : CblasNoTrans, s.trans_b ? CblasTrans : CblasNoTrans,
                    int(s.M), int(s.N), int(s.K), 1.0, o.A.data() + b * s.M * s.K, int(s.lda()),
                    o.B.data() + b * s.K * s.N, int(s.ldb()), 0.0, o.C.data() + b * s.M * s.N, int(s.N));
}
#endif

// Seconds per call of f: the best of 5 runs, each repeating f for ~0.2 s.
template <class F>
double best_seconds(F&& f) {
    using clock = std::chrono::steady_clock;
    f();  // warm up: page in C, allocate the packing buffers, start threads
    double best = 1e30;
    for (int run = 0; run < 5; ++run) {
        int64_t calls = 0;
        const auto t0 = clock::now();
        double elapsed = 0.0;
        do {
            f();
            ++calls;
            elapsed = std::chrono::duration<double>(clock::now() - t0).count();
        } while (elapsed < 0.2);
        best = std::min(best, elapsed / double(calls));
    }
    return best;
}

// Our result against a naive triple loop, and 1 thread against 2 threads.
bool verify(const Shape& s, Operands& o) {
    bool ok = true;
    ag::set_num_threads(1);
    run_ours(s, o);
    const std::vector<double> one_thread = o.C;
    ag::set_num_threads(2);
    run_ours(s, o);
    if (std::memcmp(one_thread.data(), o.C.data(), o.C.size() * sizeof(double)) != 0) {
        fmt::print("FAILED {}: 1 and 2 threads differ bitwise\n", s.name);
        ok = false;
    }
    double max_err = 0.0, max_ref = 0.0;
    for (int64_t b = 0; b < s.batch; ++b) {
        const double* A = o.A.data() + b * s.M * s.K;
        const double* B = o.B.data() + b * s.K * s.N;
        const double* C = o.C.data() + b * s.M * s.N;
        for (int64_t i = 0; i < s.M; ++i)
            for (int64_t j = 0; j < s.N; ++j) {
                double ref = 0.0;
                for (int64_t k = 0; k < s.K; ++k)
                    ref += (s.trans_a ? A[k * s.lda() + i] : A[i * s.lda() + k]) *
                           (s.trans_b ? B[j * s.ldb() + k] : B[k * s.ldb() + j]);
                max_err = std::max(max_err, std::fabs(C[i * s.N + j] - ref));
                max_ref = std::max(max_ref, std::fabs(ref));
            }
    }
    if (max_err > 1e-12 * max_ref) {
        fmt::print("FAILED {}: max |ours - naive| / max |C| = {:.2e}\n", s.name, max_err / max_ref);
        ok = false;
    }
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app(
        "GFLOP/s of the engine's GEMM on the products the lessons make, at 1 and 2 threads, as a fraction of this "
        "machine's measured FMA peak (and OpenBLAS's beside it when built with it). It takes no options.",
        "bench_matmul");
    if (const auto status = lessons::parse_command_line(app, argc, argv, "bench_matmul")) return *status;
    // First every product nn::Linear makes in training, as it makes it (W
    // is [out, in]: Y = X·Wᵀ, dX = dY·W, dW = dYᵀ·X), on one shard of a
    // batch (16 sentences, 164 rows, the mean of bench_train's epoch): GPT's
    // q, k and v in one product 64 → 192 and its o 64 → 64 (ModernLM's q
    // and o too), its feed-forward layers 64 → 256 and 256 → 64 and the
    // output head 64 → 68 (the vocabulary); ModernLM's K/V projections
    // 64 → 32 (2 KV heads of 16) and SwiGLU's 64 → 172 and 172 → 64. Then
    // lesson 01's digit nets (part 1), with the lesson's own sizes and
    // batches: the first autoencoder layer, the most of its time, encoding
    // 784 pixels into 256 units (its input is the data: no dX) and decoding
    // back, on batches of 20 rows, and the same first layer fine-tuned on
    // batches of 100. Then one layer Y = X·W with X [2048,64], W [64,256]
    // and its backward products, the other projections of such a layer, and
    // attention's batched scores.
    // A layer whose input is the data needs no dX.
    enum class Input { Activations, Data };
    const auto d = [](int64_t n) { return std::to_string(n); };
    const auto linear = [&](int64_t in, int64_t out, int64_t rows, Input input) {
        std::vector<Shape> products = {
            {"Y = X·Wᵀ", d(rows) + "x" + d(in) + " @ (" + d(out) + "x" + d(in) + ")ᵀ", false, true, 1, rows, out, in}};
        if (input == Input::Activations)
            products.push_back(
                {"dX = dY·W", d(rows) + "x" + d(out) + " @ " + d(out) + "x" + d(in), false, false, 1, rows, in, out});
        products.push_back({"dW = dYᵀ·X", "(" + d(rows) + "x" + d(out) + ")ᵀ @ " + d(rows) + "x" + d(in), true, false,
                            1, out, in, rows});
        return products;
    };
    // The layers' sizes from the models' own configs (nn/config.h).
    const nn::LMConfig gpt = nn::LMConfig::gpt(), modern = nn::LMConfig::modern_lm();
    const int64_t dm = gpt.d_model, gpt_kv = gpt.n_kv_heads * gpt.head_dim(),
                  kv = modern.n_kv_heads * modern.head_dim();
    const std::vector<std::pair<int64_t, int64_t>> layers = {
        // in → out
        // GPT: q, k and v as one product (nn::GptAttention::attend_packed), o;
        // the feed-forward layers; the head
        {dm, dm + 2 * gpt_kv},
        {dm, dm},
        {dm, gpt.d_ff},
        {gpt.d_ff, dm},
        {dm, gpt.vocab},
        // ModernLM: k, v (its q and o are d → d, above); SwiGLU's gate, up and down
        {modern.d_model, kv},
        {modern.d_model, modern.d_ff},
        {modern.d_ff, modern.d_model},
    };
    std::vector<Shape> shapes;
    for (const auto& [in, out] : layers)
        for (const Shape& s : linear(in, out, 164, Input::Activations)) shapes.push_back(s);
    // Lesson 01's digits (lessons/pretrain_finetune/digits_comparison.h); the
    // number of labelled images (300, the lesson's default) changes no size.
    const auto digits = lessons::pretrain_finetune::DigitsSetup::full(300);
    const int64_t pixels = digits.deep_widths[0], units = digits.deep_widths[1];
    const int64_t ae_rows = digits.autoencoder.batch_size, ft_rows = digits.finetune.batch_size;
    for (const auto& [in, out, rows, input] : std::vector<std::tuple<int64_t, int64_t, int64_t, Input>>{
             {pixels, units, ae_rows, Input::Data},         // the first autoencoder's encoder
             {units, pixels, ae_rows, Input::Activations},  // and its decoder
             {pixels, units, ft_rows, Input::Data}})        // the first layer, fine-tuned
        for (const Shape& s : linear(in, out, rows, input)) shapes.push_back(s);
    const std::vector<Shape> layer = {
        {"Y = X·W", "2048x64 @ 64x256", false, false, 1, 2048, 256, 64},
        {"Y = X·W", "2048x64 @ 64x64", false, false, 1, 2048, 64, 64},
        {"Y = X·W", "2048x172 @ 172x64", false, false, 1, 2048, 64, 172},
        {"Y = X·W", "2048x256 @ 256x64", false, false, 1, 2048, 64, 256},
        {"dX = dY·Wᵀ", "2048x256 @ (64x256)ᵀ", false, true, 1, 2048, 64, 256},
        {"dW = Xᵀ·dY", "(2048x64)ᵀ @ 2048x256", true, false, 1, 64, 256, 2048},
        {"S = Q·Kᵀ", "16 × 256x32 @ (256x32)ᵀ", false, true, 16, 256, 256, 32},
    };
    shapes.insert(shapes.end(), layer.begin(), layer.end());
    std::mt19937_64 rng(2024);
    std::vector<Operands> operands;
    bool ok = true;
    for (const Shape& s : shapes) {
        operands.push_back(make_operands(s, rng));
        ok = verify(s, operands.back()) && ok;
    }
    if (ok) fmt::print("verified: matches the naive loop to 1e-12, 1 thread == 2 threads bitwise\n");
    bench::Peak peak({1, 2});
    fmt::print("peak: FMA loop in double precision ({} lanes a vector): {}\n", bench::vector_lanes(), peak.readings());

    // All our runs first, then all OpenBLAS runs: each library's idle threads
    // spin for a while after a call and would steal the other's second core.
    std::vector<double> ours1, ours2, blas1, blas2;
    for (size_t i = 0; i < shapes.size(); ++i)
        for (int threads : {1, 2}) {
            ag::set_num_threads(threads);
            const double sec = best_seconds([&] { run_ours(shapes[i], operands[i]); });
            (threads == 1 ? ours1 : ours2).push_back(shapes[i].flops() / sec * 1e-9);
        }
#ifdef HAVE_CBLAS
    for (size_t i = 0; i < shapes.size(); ++i)
        for (int threads : {1, 2}) {
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
            openblas_set_num_threads(threads);
#endif
            const double sec = best_seconds([&] { run_openblas(shapes[i], operands[i]); });
            (threads == 1 ? blas1 : blas2).push_back(shapes[i].flops() / sec * 1e-9);
        }
#endif
    fmt::print("{}", peak.measure_again());

    fmt::print("\nGFLOP/s (double precision; 1T/2T = 1/2 threads; peak: ours as a fraction of the FMA peak)\n");
    fmt::print("{:<11} {:<24} {:>8} {:>8} {:>7} {:>7}", "product", "shape", "ours 1T", "ours 2T", "peak 1T", "peak 2T");
    if (!blas1.empty()) fmt::print(" {:>8} {:>8} {:>9} {:>9}", "BLAS 1T", "BLAS 2T", "ratio 1T", "ratio 2T");
    fmt::print("\n");
    for (size_t i = 0; i < shapes.size(); ++i) {
        // fmt pads by code points; "·" and "ᵀ" are one each, as wanted.
        fmt::print("{:<11} {:<24} {:>8.1f} {:>8.1f} {:>6.1f}% {:>6.1f}%", shapes[i].name, shapes[i].what, ours1[i],
                   ours2[i], 100.0 * ours1[i] / peak.gflops(1), 100.0 * ours2[i] / peak.gflops(2));
        if (!blas1.empty())
            fmt::print(" {:>8.1f} {:>8.1f} {:>9.2f} {:>9.2f}", blas1[i], blas2[i], ours1[i] / blas1[i],
                       ours2[i] / blas2[i]);
        fmt::print("\n");
    }
    if (blas1.empty()) fmt::print("(built without OpenBLAS: no comparison)\n");
    return ok ? 0 : 1;
}
