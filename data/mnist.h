#pragma once
// The handwritten digits of §2.3-2.5: 10,000 real MNIST digits (28x28 grey
// levels) in MNIST's own IDX format, data/mnist10k-{images-idx3,labels-idx1}
// -ubyte.gz (see data/README.md for their source and licence).
//
// IDX: a big-endian header, then the data one byte per value.
//   images: magic 0x00000803, count, rows, cols, then count·rows·cols pixels
//           (0-255, row by row);
//   labels: magic 0x00000801, count, then count labels (0-9).
// The file in this repository is grouped by label (every 0, then every 1,
// …): split() shuffles with a seed before it splits.
#include <cstdint>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"

namespace mnist {

struct Digits {
    ag::Tensor images;        // [N, rows·cols] pixels scaled to [0, 1] (value / 255)
    std::vector<int> labels;  // [N] digits 0-9
    int64_t rows = 0, cols = 0;
};

// The copies in this repository's data/ folder, as absolute paths fixed at
// build time, so they work from the repository root and from the build tree.
std::string default_images_path();
std::string default_labels_path();

// Reads both gzip-compressed IDX files with zlib and checks them: the
// magic numbers, the sizes in the headers (at most kMaxImages images of at
// most kMaxSide² pixels, at most kMaxBytes decompressed), that the data is exactly as long as the header
// says (a truncated or overlong file is refused), that both files hold the
// same count, and every label 0-9. Anything wrong throws std::runtime_error
// naming the file and the problem, in one line.
Digits load(const std::string& images_path = default_images_path(),
            const std::string& labels_path = default_labels_path());

constexpr int64_t kMaxImages = 1'000'000;
constexpr int64_t kMaxSide = 1024;
constexpr size_t kMaxBytes = size_t{256} << 20;  // MNIST's 60,000 training images are 47 MB

// Rows `rows` of `digits`, in that order.
Digits take(const Digits& digits, const std::vector<int64_t>& rows);

struct Split {
    Digits train;  // N - n_test images
    Digits test;   // n_test images
};
// A seeded random split: the rows in the order farm::permutation(N, gen)
// with gen = ag::Generator(seed) (data/shuffle.h); the first n_test go to
// test, the rest to train. 0 < n_test < N.
Split split(const Digits& digits, int64_t n_test, uint64_t seed);

// n rows of `labels` drawn class-balanced: n / 10 of every digit, and one
// more of each of the first n % 10 digits (0, 1, …); within a digit the
// rows come in the order farm::shuffle draws from `gen`. The rows are
// returned sorted by digit, then by that draw. Throws when a digit has
// fewer rows than it needs.
std::vector<int64_t> balanced_rows(const std::vector<int>& labels, int64_t n, ag::Generator& gen);

}  // namespace mnist
