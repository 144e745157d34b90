// Attempt (wrong): records ONE op, as asked, but hands both rotations to
// the engine's fused ag::rope, run on a thread of its own so that the
// calling thread's ops look clean; the exercise forbids ag::rope on every
// thread.
// grade says: you called ag::rope
#include "exercises/ex11_rope_apply.h"

#include <thread>

namespace ex11 {

namespace {

// ag::rope on rows of x [T, d] (one head), on another thread, no graph kept.
ag::Tensor rope_elsewhere(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                          ag::RopePairing pairing) {
    ag::Tensor y;
    std::thread worker([&] {
        ag::NoGradGuard no_grad;
        const int64_t T = x.size(0), d = x.size(1);
        y = ag::rope(x.detach().contiguous().reshape({T, 1, d}), positions, base, pairing).reshape({T, d});
    });
    worker.join();
    return y.contiguous();
}

}  // namespace

ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    return ag::record("rope_apply", rope_elsewhere(x, positions, base, pairing), {x},
                      [positions, base, pairing](const ag::Tensor& dy) {
                          std::vector<int64_t> back;
                          for (int64_t m : positions) back.push_back(-m);
                          return std::vector<ag::Tensor>{rope_elsewhere(dy, back, base, pairing)};
                      });
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    std::vector<int64_t> positions;
    for (int64_t t = 0; t < x.size(0); ++t) positions.push_back(t);
    return rope_apply(x, positions, base, pairing);
}

}  // namespace ex11
