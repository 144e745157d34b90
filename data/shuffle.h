#pragma once
// Seeded shuffling, the one place it is done (batches, the subject-number
// labels, the digits split). Fisher-Yates, drawing in this order:
//   for i = n-1 down to 1:  j = gen.randint(i + 1);  swap(v[i], v[j])
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "autograd/generator.h"

namespace farm {

template <class T>
void shuffle(std::vector<T>& v, ag::Generator& gen) {
    for (int64_t i = static_cast<int64_t>(v.size()) - 1; i > 0; --i) {
        std::swap(v[i], v[gen.randint(i + 1)]);
    }
}

// 0..n-1 in a random order.
inline std::vector<int64_t> permutation(int64_t n, ag::Generator& gen) {
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), int64_t{0});
    shuffle(order, gen);
    return order;
}

}  // namespace farm
