#include "autograd/storage.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "autograd/profile.h"

namespace ag::detail {

namespace {

// Freed blocks by size, kept up to a budget; beyond it they go back to the
// system. Blocks are 64-byte aligned (one cache line, an AVX-512 vector).
struct BlockCache {
    static constexpr std::size_t kBudget = std::size_t{1} << 30;  // 1 GiB of cached blocks at most
    std::mutex mutex;
    std::unordered_map<std::size_t, std::vector<void*>> free_blocks;
    std::size_t cached = 0;
};

BlockCache& block_cache() {
    static BlockCache* p = new BlockCache;  // never destroyed: tensors may die after static destructors run
    return *p;
}

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
    {
        BlockCache& p = block_cache();
        std::lock_guard<std::mutex> lock(p.mutex);
        auto it = p.free_blocks.find(size);
        if (it != p.free_blocks.end() && !it->second.empty()) {
            void* block = it->second.back();
            it->second.pop_back();
            p.cached -= size;
            return block;
        }
    }
    void* block = std::aligned_alloc(64, size);
    if (!block) {
        live.fetch_sub(size, std::memory_order_relaxed);
        throw std::bad_alloc();
    }
    return block;
}

void pool_deallocate(void* block, std::size_t bytes) noexcept {
    if (!block) return;
    if (bytes == 0) bytes = 64;
    const std::size_t size = rounded(bytes);
    live.fetch_sub(size, std::memory_order_relaxed);
    BlockCache& p = block_cache();
    {
        std::lock_guard<std::mutex> lock(p.mutex);
        if (p.cached + size <= BlockCache::kBudget) {
            try {
                p.free_blocks[size].push_back(block);
                p.cached += size;
                return;
            } catch (...) {  // no memory for the bookkeeping: free the block instead
            }
        }
    }
    std::free(block);
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
