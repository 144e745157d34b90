#pragma once
// The target's widest vector register, in bytes: what the GEMM's
// micro-kernel and the benchmarks' FMA peak loop are built from (GCC's and
// Clang's vector extension). __BIGGEST_ALIGNMENT__ gives it: 64 with
// AVX-512, 32 with AVX/AVX2, 16 with SSE. At least 16: Apple's arm64
// compilers say 8, yet NEON's registers hold 16 bytes (2 doubles), and a
// vector of one double would halve the kernels' width.
namespace ag::kernels {

constexpr int kVectorBytes = __BIGGEST_ALIGNMENT__ < 16 ? 16 : __BIGGEST_ALIGNMENT__;

}  // namespace ag::kernels
