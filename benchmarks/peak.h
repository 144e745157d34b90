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
// ag::kernels::kVectorBytes, the GEMM's: 64 bytes with AVX-512, 32 with
// AVX, 16 with SSE or NEON), so the loop uses the widest registers -march=native allows and no
// instruction set is named in the code. peak.cpp is compiled with
// -ffp-contract=fast (the project turns contraction off elsewhere), so that
// a·b + c is one FMA instruction; `objdump -d` of peak.cpp.o shows
// vfmadd...pd on x86.
#include <map>
#include <string>
#include <vector>

namespace bench {

// Lanes of one vector register, in doubles (8 with AVX-512).
int vector_lanes();

// Double-precision FMA peak in GFLOP/s with `threads` threads (std::thread), each
// running the loop on its own core: the best of several ~20 ms runs after a
// warm-up (the clock ramping up, the threads starting), about 0.25 s in
// all. With other work on the machine the figure drops: it is this
// moment's limit, the one a benchmark run next to it meets.
double fma_peak_gflops(int threads);

// The limit of one benchmark run: the peak at each thread count it uses,
// measured before the timed work (gflops(), what fractions are taken of)
// and again after it, because on a shared machine (a virtual machine's
// cores are threads of another machine) the peak itself moves. After the
// second reading it says, a line each, where the machine did not hold still:
// - a thread count's two readings differ by more than 10%: every figure
//   measured between them is uncertain by about as much;
// - 2 threads reach less than 1.8 × the peak of 1: the two threads do not
//   have a core each (another process, or two hyperthreads of one core), so
//   2-thread figures are fractions of a limit that is not two cores'.
class Peak {
public:
    explicit Peak(const std::vector<int>& thread_counts);  // the first reading
    double gflops(int threads) const;                      // the first reading
    // "79.0 GFLOP/s at 1 thread, 154.2 at 2 threads", with " then 77.5" after
    // each first reading once measured again.
    std::string readings() const;
    // After the timed work: measures again and returns what to print, the
    // line "peak, before and after the runs: …" and a "warning: …" line for
    // each of peak_warnings().
    std::string measure_again();

private:
    std::map<int, std::vector<double>> readings_;
};

// How long one cache line takes to go from one core to the other and back,
// in nanoseconds: two std::threads (one on each core while the machine is
// otherwise idle) take turns writing one shared atomic, each waiting to see
// the other's write; the median of 5 rounds of about 10 ms each. Every step
// of data-parallel training moves such lines between the cores (one
// shard's gradients summed by the other thread, the parameters the
// optimizer wrote read by both shards), so this is what the 2-thread rows
// pay for sharing. On a physical machine it is a constant of the chip
// (~50-100 ns within one L3, 2-3x that across); on a virtual machine the
// host places the two vCPUs, and the figure moves when it moves them.
double core_round_trip_ns();

// The warnings of Peak::measure_again() from given readings (thread count → readings, in
// order); apart so that it is tested without measuring.
std::vector<std::string> peak_warnings(const std::map<int, std::vector<double>>& readings);

}  // namespace bench
