// Attempt (wrong): hands the whole job to the engine's fused ag::rope, run
// on a thread of its own so that the calling thread's ops look clean; the
// exercise forbids ag::rope on every thread.
#include "exercises/ex11_rope_apply.h"

#include <thread>

namespace ex11 {

ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    ag::Tensor y;
    std::thread worker([&] {
        y = ag::rope(x.reshape({x.size(0), 1, x.size(1)}), positions, base, pairing).reshape({x.size(0), x.size(1)});
    });
    worker.join();
    return y;
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    std::vector<int64_t> positions;
    for (int64_t t = 0; t < x.size(0); ++t) positions.push_back(t);
    return rope_apply(x, positions, base, pairing);
}

}  // namespace ex11
