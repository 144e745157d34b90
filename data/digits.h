#pragma once
// The handwritten digits of the autoencoder lessons (§2.3-2.4): the UCI
// "Optical Recognition of Handwritten Digits" test set, 1,797 images of 8x8
// pixels, shipped as data/digits.csv.gz (see data/README.md for its source
// and licence). Each line: 64 pixel values 0-16 (row by row), then the label.
#include <cstdint>
#include <string>
#include <vector>

#include "autograd/tensor.h"

// Namespace optdigits, the UCI set's own name, not farm: the digits are no
// part of the farm language (they only borrow its shuffle).
namespace optdigits {

struct Digits {
    ag::Tensor images;        // [N, 64] pixels scaled to [0, 1] (value / 16)
    std::vector<int> labels;  // [N] digits 0-9
};

// The copy in this repository's data/ folder, as an absolute path fixed at
// build time, so it works from the repository root and from the build tree.
std::string default_digits_path();

// Reads the gzip-compressed CSV with zlib. Every line must hold 65 integers,
// pixels 0-16 and a label 0-9. A missing file throws std::runtime_error with
// the path and where to get the file; a bad line or corrupt gzip data throws
// std::runtime_error naming the file and the line number.
Digits load_digits(const std::string& path = default_digits_path());

struct DigitsSplit {
    Digits train;  // N - n_test images
    Digits test;   // n_test images
};
// A seeded random split: the rows in the order farm::permutation(N, gen)
// with gen = ag::Generator(seed) (data/shuffle.h); the first n_test go to
// test, the rest to train. 0 < n_test < N.
DigitsSplit split_digits(const Digits& digits, int64_t n_test, uint64_t seed);

}  // namespace optdigits
