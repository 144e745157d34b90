#pragma once
// The machine's limit for the benchmarks to be measured against: the
// double-precision FMA peak of this CPU, measured (not looked up in a data
// sheet), so that "fraction of peak" means the same on any machine.
//
// What it measures: every thread runs a loop of nothing but vector fused
// multiply-adds, a = a·b + c on kChains independent vector registers, so
// the only limit is how many FMAs the cores can start per cycle. One FMA is
// 2 flops per lane, so the figure is 2 × lanes × FMAs / s. It is what a
// GEMM's micro-kernel can at best approach (it also loads its operands), and
// what FLOP-per-token estimates of training are divided into.
//
// Why so: a core has a few FMA units (2 on most x86 cores), each starting
// one vector FMA per cycle, and an FMA takes ~4 cycles to produce its
// result. A single chain a = a·b + c waits for itself and runs at 1/8 of
// the peak; at least units × latency ≈ 8 independent chains keep every unit
// busy. kChains = 12 covers that with room (5-cycle latencies included)
// and still fits, with b and c, in the 16 vector registers of AVX2 or SSE
// (AVX-512 and AArch64 have 32).
//
// The vector width is the compiler's (a GCC/Clang vector of
// __BIGGEST_ALIGNMENT__ bytes: 64 with AVX-512, 32 with AVX, 16 with SSE or
// NEON), so the loop uses the widest registers -march=native allows and no
// instruction set is named in the code. peak.cpp is compiled with
// -ffp-contract=fast (the project turns contraction off elsewhere), so that
// a·b + c is one FMA instruction; `objdump -d` of peak.cpp.o shows
// vfmadd...pd on x86.
namespace bench {

// Lanes of one vector register, in doubles (8 with AVX-512).
int vector_lanes();

// Double-precision FMA peak in GFLOP/s with `threads` threads (std::thread), each
// running the loop on its own core: the best of several ~20 ms runs after a
// warm-up (the clock ramping up, the threads starting), about 0.25 s in
// all. With other work on the machine the figure drops: it is this
// moment's limit, the one a benchmark run next to it meets.
double fma_peak_gflops(int threads);

}  // namespace bench
