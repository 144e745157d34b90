#include "autograd/storage.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "autograd/profile.h"

namespace ag::detail {

namespace {

// ---- whose block is it --------------------------------------------------------
//
// Freed blocks are kept by size class and handed out again, most recently
// freed first (its lines are likely still in cache). Each thread keeps its
// own BlockCache, and a block goes back to the cache of the thread that
// allocated it, whichever thread frees it: a header in front of the block
// names that cache.
//
// Why per thread: on a machine whose cores do not share their caches, a
// line that another core wrote last is fetched from that core, several
// times slower than from one's own caches (here: ~28 GB/s against ~100).
// With one shared list, a training step's two shards (one per thread) got
// each other's blocks of the step before at random, and every such block
// was fetched across. Why the allocating thread's cache and not the
// freeing thread's: some blocks are made on one thread and dropped on
// another every step (the summed gradients, made by whichever thread sums a
// parameter and dropped by the caller's zero_grad()); returning them to the
// freeing thread would drain one cache into the other, step after step,
// while the first thread allocates fresh memory from the system.
//
// A thread that ends gives its cache, blocks and all, to the next thread
// that starts allocating, so there are never more caches than threads alive
// at once. Caches are never destroyed: a block may be freed long after the
// thread that allocated it has ended, even after static destructors ran.
struct BlockCache {
    std::mutex mutex;
    std::unordered_map<std::size_t, std::vector<void*>> free_blocks;
};

// The caches of threads that have ended, to be adopted by new threads.
struct SpareCaches {
    std::mutex mutex;
    std::vector<BlockCache*> caches;
    std::size_t made = 0;  // caches there are, in use or spare
};

SpareCaches& spare_caches() {
    static SpareCaches* p = new SpareCaches;  // never destroyed, like the caches
    return *p;
}

// Bytes in all caches together: at most kCachedBudget, beyond which freed
// blocks go back to the system.
constexpr std::size_t kCachedBudget = std::size_t{1} << 30;  // 1 GiB
std::atomic<std::size_t> cached_bytes{0};

thread_local BlockCache* this_thread_cache = nullptr;  // trivially destructible: safe to read at any time

// Hands this thread's cache on when the thread ends.
struct GiveCacheBack {
    ~GiveCacheBack() {
        if (!this_thread_cache) return;
        SpareCaches& spare = spare_caches();
        const std::lock_guard<std::mutex> lock(spare.mutex);
        spare.caches.push_back(this_thread_cache);  // room reserved when it was made: cannot throw
        this_thread_cache = nullptr;
    }
};
thread_local GiveCacheBack give_cache_back;

BlockCache& my_cache() {
    if (this_thread_cache) return *this_thread_cache;
    (void)&give_cache_back;  // registers the hand-on at thread exit
    SpareCaches& spare = spare_caches();
    const std::lock_guard<std::mutex> lock(spare.mutex);
    if (spare.caches.empty()) {
        spare.caches.reserve(spare.made + 1);  // room for every cache to be spare at once
        this_thread_cache = new BlockCache;
        ++spare.made;
    } else {
        this_thread_cache = spare.caches.back();
        spare.caches.pop_back();
    }
    return *this_thread_cache;
}

// Each block is kHeader bytes into its allocation; the header holds the
// owning cache. 64 bytes keep the block on a cache line (and an AVX-512
// vector) boundary.
constexpr std::size_t kHeader = 64;

BlockCache*& owner(void* block) { return *reinterpret_cast<BlockCache**>(static_cast<char*>(block) - kHeader); }

// No memory has 2^62 bytes. (Past 2^63, rounded()'s power of two would
// overflow to 0 and never stop doubling.)
constexpr std::size_t kLargestBlock = std::size_t{1} << 62;

// Size classes: multiples of 64 bytes up to 4 KiB, then four classes per
// power of two (2^k · 1, 1.25, 1.5, 1.75). Batches of packed sequences vary
// in size from step to step; classes let them reuse each other's blocks,
// at the cost of at most 25% unused space.
std::size_t rounded(std::size_t bytes) {
    if (bytes <= 4096) return (bytes + 63) / 64 * 64;
    std::size_t power = 4096;
    while (power * 2 < bytes) power *= 2;
    const std::size_t quarter = power / 4;
    return (bytes + quarter - 1) / quarter * quarter;
}

std::atomic<std::size_t> live{0}, peak{0};

void count_allocation(std::size_t size) {
    const std::size_t now = live.fetch_add(size, std::memory_order_relaxed) + size;
    std::size_t seen = peak.load(std::memory_order_relaxed);
    while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
}

}  // namespace

void* pool_allocate(std::size_t bytes) {
    if (bytes == 0) bytes = 64;
    if (bytes > kLargestBlock) throw std::bad_alloc();
    const std::size_t size = rounded(bytes);
    const profile::Stopwatch timed(&profile::Counters::alloc_seconds);  // bench_train --profile
    profile::count_allocation();
    count_allocation(size);
    BlockCache& cache = my_cache();
    {
        const std::lock_guard<std::mutex> lock(cache.mutex);
        auto it = cache.free_blocks.find(size);
        if (it != cache.free_blocks.end() && !it->second.empty()) {
            void* block = it->second.back();
            it->second.pop_back();
            cached_bytes.fetch_sub(size, std::memory_order_relaxed);
            return block;
        }
    }
    char* allocation = static_cast<char*>(std::aligned_alloc(64, kHeader + size));
    if (!allocation) {
        live.fetch_sub(size, std::memory_order_relaxed);
        throw std::bad_alloc();
    }
    void* block = allocation + kHeader;
    owner(block) = &cache;
    return block;
}

void pool_deallocate(void* block, std::size_t bytes) noexcept {
    if (!block) return;
    if (bytes == 0) bytes = 64;
    const std::size_t size = rounded(bytes);
    live.fetch_sub(size, std::memory_order_relaxed);
    BlockCache& cache = *owner(block);
    if (cached_bytes.fetch_add(size, std::memory_order_relaxed) + size <= kCachedBudget) {
        const std::lock_guard<std::mutex> lock(cache.mutex);
        try {
            cache.free_blocks[size].push_back(block);
            return;
        } catch (...) {  // no memory for the bookkeeping: free the block instead
        }
    }
    cached_bytes.fetch_sub(size, std::memory_order_relaxed);
    std::free(static_cast<char*>(block) - kHeader);
}

}  // namespace ag::detail

namespace ag {

MemoryStats memory_stats() {
    return {detail::live.load(std::memory_order_relaxed), detail::peak.load(std::memory_order_relaxed)};
}

void reset_peak_memory() {
    detail::peak.store(detail::live.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

}  // namespace ag
