#pragma once
// The numbers behind tensors: a std::vector<double> whose allocator
//  - leaves new elements uninitialised (every op writes all of its output;
//    factories such as zeros() fill explicitly), and
//  - recycles freed blocks by size class. A training step allocates the
//    same buffers every step; handing them back to the OS and faulting
//    fresh pages in each time costs more than the arithmetic of a small
//    model.
#include <cstddef>
#include <new>
#include <vector>

namespace ag {

// Bytes of tensor storage in use now (allocated and not yet freed) and the
// most there has been since the last reset_peak_memory(): what a
// computation needs in memory, counted rather than guessed (PyTorch's
// torch.cuda.max_memory_allocated). Block sizes as allocated (rounded up
// to the pool's size classes).
struct MemoryStats {
    std::size_t live_bytes = 0, peak_bytes = 0;
};
MemoryStats memory_stats();
void reset_peak_memory();  // peak := live

namespace detail {
void* pool_allocate(std::size_t bytes);
void pool_deallocate(void* p, std::size_t bytes) noexcept;
}  // namespace detail

template <typename T>
struct PoolAllocator {
    using value_type = T;
    PoolAllocator() = default;
    template <typename U>
    PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT: converting, as allocators must
    T* allocate(std::size_t n) {
        std::size_t bytes;
        if (__builtin_mul_overflow(n, sizeof(T), &bytes)) throw std::bad_alloc();  // not a wrapped-round small block
        return static_cast<T*>(detail::pool_allocate(bytes));
    }
    void deallocate(T* p, std::size_t n) noexcept { detail::pool_deallocate(p, n * sizeof(T)); }
    template <typename U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;  // default-initialise: no zeroing
    }
    template <typename U, typename... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
    template <typename U>
    bool operator==(const PoolAllocator<U>&) const {
        return true;
    }
    template <typename U>
    bool operator!=(const PoolAllocator<U>&) const {
        return false;
    }
};

using Storage = std::vector<double, PoolAllocator<double>>;

}  // namespace ag
