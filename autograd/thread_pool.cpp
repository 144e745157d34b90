#include "autograd/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "autograd/engine.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ag {
namespace {

// One spin-loop iteration: tells the core that this is a wait (on x86 the
// other hyperthread gets the pipeline, and leaving the loop does not flush
// it), so spinning costs the machine as little as spinning can.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// ---- how threads wait ---------------------------------------------------------
//
// A training step starts a region every few microseconds to a few hundred
// (one per kernel that is worth splitting), with serial work in between
// (graph building, small ops). Waking a sleeping thread costs a system call
// and 10-50 µs before it runs, so a worker that has just finished a piece
// first SPINS for the next region: it watches one atomic word, with a pause
// instruction per round, for at most kSpin. Only then does it SLEEP on a
// condition variable (a futex) until the next region wakes it.
//
// Why bounded: an unbounded spin (OpenMP's OMP_WAIT_POLICY=active, or
// libgomp's default of 300,000 rounds) wins a little on an idle machine and
// loses badly on a shared one: a spinning worker holds a core that another
// process, or our own caller, needs, and with one busy process beside it the
// 2-thread rate fell below the 1-thread rate. After kSpin the worker costs
// nothing, and a late worker costs little anyway: the caller runs any piece
// that no worker has claimed yet.
//
// The caller waiting for the last pieces to finish spins longer, kJoinSpin,
// before it sleeps: it has nothing else to do, its spinning delays no piece
// (the workers run on other cores), and a sleeping caller costs a wake-up
// at the end of the region, every region. Measured (bench_train --profile,
// ModernLM, 2 threads, where the two shards of a step finish tens of µs
// apart; a noisy virtual machine): the threads' start and join took
// 0.12-0.23 ms per step (median 0.18 of five runs) with 50 µs, 0.07-0.15
// (median 0.145 of three) with 200 µs and 0.11-0.13 with 1 ms.
constexpr auto kSpin = std::chrono::microseconds(50);
constexpr auto kJoinSpin = std::chrono::microseconds(200);

// Spins until done() or until `spin` has passed; true if done().
template <typename Done>
bool spin_until(Done done, std::chrono::microseconds spin) {
    const auto until = std::chrono::steady_clock::now() + spin;
    for (;;) {
        for (int i = 0; i < 64; ++i) {  // a clock read per 64 rounds (~2-10 µs)
            if (done()) return true;
            cpu_relax();
        }
        if (std::chrono::steady_clock::now() >= until) return done();
    }
}

thread_local bool in_region = false;  // see detail::in_parallel_region()

// Marks this thread as running pieces of a region for a scope.
struct InRegion {
    bool previous = in_region;
    InRegion() { in_region = true; }
    ~InRegion() { in_region = previous; }
    InRegion(const InRegion&) = delete;
    InRegion& operator=(const InRegion&) = delete;
};

// The thread count: AG_NUM_THREADS when set (the test presets use 1),
// otherwise the hardware's thread count, as OpenMP's default was.
int default_threads() {
    if (const char* env = std::getenv("AG_NUM_THREADS")) {
        char* end = nullptr;
        const long n = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && n >= 1 && n <= 4096) return static_cast<int>(n);
    }
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::atomic<int>& thread_count() {
    static std::atomic<int> count{default_threads()};
    return count;
}

// Runs every piece once, the first exception kept for the caller.
class Region {
public:
    void run(int64_t p, const detail::PieceFn& piece) {
        try {
            piece(p);
        } catch (...) {
            const std::lock_guard<std::mutex> lock(error_mutex_);
            if (!error_) error_ = std::current_exception();
        }
    }
    void rethrow() {
        std::exception_ptr e = std::move(error_);
        error_ = nullptr;
        if (e) std::rethrow_exception(e);
    }

private:
    std::mutex error_mutex_;
    std::exception_ptr error_;
};

class Pool {
public:
    ~Pool() {
        {
            const std::lock_guard<std::mutex> lock(wake_mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (std::thread& t : workers_) t.join();
    }

    // One user thread at a time: false (run serially) when another one is
    // inside a region.
    bool try_enter() { return owner_.try_lock(); }

    // With owner_ held: pieces on `threads` threads, the caller included.
    void run(int64_t pieces, int threads, detail::PieceFn piece) {
        const std::lock_guard<std::mutex> owned(owner_, std::adopt_lock);
        // A new worker starts with the generation before this region's as
        // the last one it saw, so it joins this region as soon as it runs
        // (had it read the state itself, it could see this region already
        // published and wait for the next one: a first region that is one
        // long parallel_tasks would then run on the caller alone).
        while (static_cast<int>(workers_.size()) < threads - 1)
            workers_.emplace_back([this, seen = generation_] { work(seen); });
        piece_ = &piece;
        pieces_ = pieces;
        unfinished_.store(pieces, std::memory_order_relaxed);
        // Publish: a new generation with every piece unclaimed. Workers read
        // piece_/pieces_ only after claiming a piece of this generation, and
        // the caller changes them only when every piece is finished.
        {
            const std::lock_guard<std::mutex> lock(wake_mutex_);
            generation_ = (generation_ + 1) & 0xffffffffu;
            state_.store(generation_ << 32 | static_cast<uint64_t>(pieces), std::memory_order_release);
        }
        wake_.notify_all();  // cheap when nobody sleeps (no system call)
        {
            const InRegion inside;
            claim_and_run(generation_);  // the caller is a worker too
        }
        // Wait for pieces that workers claimed and still run.
        if (!spin_until([this] { return unfinished_.load(std::memory_order_acquire) == 0; }, kJoinSpin)) {
            std::unique_lock<std::mutex> lock(done_mutex_);
            done_.wait(lock, [this] { return unfinished_.load(std::memory_order_acquire) == 0; });
        }
        region_.rethrow();
    }

private:
    // Claims unclaimed pieces of generation `gen` until none is left. The
    // state word is generation << 32 | unclaimed pieces, so a thread that
    // looks late (at a generation already over) claims nothing.
    void claim_and_run(uint64_t gen) {
        uint64_t s = state_.load(std::memory_order_acquire);
        while ((s >> 32) == gen && (s & 0xffffffffu) != 0) {
            if (!state_.compare_exchange_weak(s, s - 1, std::memory_order_acquire, std::memory_order_acquire)) continue;
            const int64_t p = pieces_ - static_cast<int64_t>(s & 0xffffffffu);
            region_.run(p, *piece_);
            if (unfinished_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                // The last piece: wake the caller if it went to sleep.
                { const std::lock_guard<std::mutex> lock(done_mutex_); }
                done_.notify_one();
            }
            s = state_.load(std::memory_order_acquire);
        }
    }

    // `seen`: the last generation this worker has taken part in.
    void work(uint64_t seen) {
        in_region = true;  // everything a worker runs is inside a region
        for (;;) {
            const auto news = [&] { return (state_.load(std::memory_order_acquire) >> 32) != seen; };
            if (!spin_until(news, kSpin)) {
                std::unique_lock<std::mutex> lock(wake_mutex_);
                wake_.wait(lock, [&] { return stop_ || news(); });
                if (stop_) return;
            }
            seen = state_.load(std::memory_order_acquire) >> 32;
            claim_and_run(seen);
        }
    }

    std::mutex owner_;  // held by the user thread whose region runs
    std::vector<std::thread> workers_;

    // the region being run
    const detail::PieceFn* piece_ = nullptr;
    int64_t pieces_ = 0;
    std::atomic<uint64_t> state_{0};  // generation << 32 | unclaimed pieces
    std::atomic<int64_t> unfinished_{0};
    Region region_;

    uint64_t generation_ = 0;  // written under wake_mutex_
    std::mutex wake_mutex_;
    std::condition_variable wake_;  // a new generation, or stop_
    bool stop_ = false;
    std::mutex done_mutex_;
    std::condition_variable done_;  // unfinished_ reached 0
};

Pool& pool() {
    static Pool p;
    return p;
}

}  // namespace

void set_num_threads(int n) {
    if (n < 1) throw std::invalid_argument(fmt::format("set_num_threads: need at least 1 thread, got {}", n));
    thread_count().store(n, std::memory_order_relaxed);
}

int num_threads() { return thread_count().load(std::memory_order_relaxed); }

namespace detail {

bool in_parallel_region() { return in_region; }

void run_pieces(int64_t pieces, PieceFn piece) {
    if (pieces <= 0) return;
    if (pieces == 1) {  // not a region: kernels inside may still split
        piece(0);
        return;
    }
    if (pieces > int64_t{std::numeric_limits<uint32_t>::max()})
        throw std::invalid_argument(fmt::format("run_pieces: {} pieces, at most 2^32 - 1", pieces));
    const int threads = static_cast<int>(std::min<int64_t>(pieces, num_threads()));
    if (threads > 1 && !in_region) {
        Pool& p = pool();
        if (p.try_enter()) {
            p.run(pieces, threads, piece);
            return;
        }
    }
    // Serially on this thread: one thread, inside another region, or another
    // user thread owns the workers. Same pieces, same results.
    const InRegion inside;
    Region region;
    for (int64_t i = 0; i < pieces; ++i) region.run(i, piece);
    region.rethrow();
}

}  // namespace detail

void parallel_tasks(int64_t count, const std::function<void(int64_t)>& fn, int max_threads) {
    if (max_threads < 0)
        throw std::invalid_argument(fmt::format("parallel_tasks: max_threads {} (0: all threads)", max_threads));
    if (count <= 0) return;
    // One piece per thread; each piece takes the next task until none is
    // left, so a thread that finishes early takes more tasks.
    std::atomic<int64_t> next{0};
    std::mutex error_mutex;
    std::exception_ptr error;
    auto piece = [&](int64_t) {
        for (int64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < count;) {
            try {
                fn(i);
            } catch (...) {
                const std::lock_guard<std::mutex> lock(error_mutex);
                if (!error) error = std::current_exception();
            }
        }
    };
    int64_t pieces = std::min<int64_t>(count, num_threads());
    if (max_threads > 0) pieces = std::min<int64_t>(pieces, max_threads);
    if (pieces == 1 && (count > 1 || max_threads == 1)) {
        // One thread for every task: a region of one piece, so that the
        // kernels inside stay on this thread (run_pieces makes a single piece
        // a plain call, whose kernels split: right for one task alone,
        // unless max_threads asked for the caller only).
        const InRegion inside;
        piece(0);
    } else {
        detail::run_pieces(pieces, piece);
    }
    if (error) std::rethrow_exception(error);
}

}  // namespace ag
