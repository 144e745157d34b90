#include "data/mnist.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include <zlib.h>

#include "data/shuffle.h"

namespace mnist {

namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // unsigned bytes, 3 dimensions
constexpr uint32_t kLabelsMagic = 0x00000801;  // unsigned bytes, 1 dimension
constexpr int kDigits = 10;

using GzFile = std::unique_ptr<gzFile_s, decltype(&gzclose)>;

[[noreturn]] void refuse(const std::string& path, const std::string& problem) {
    throw std::runtime_error(fmt::format("mnist: {}: {}", path, problem));
}

// A whole gzip-compressed file, at most `limit` bytes once inflated (so a
// header that lies, or a small file that inflates to gigabytes, cannot make
// us allocate without bound). Damaged or cut-off gzip data is refused.
std::string read_gz(const std::string& path, size_t limit) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        refuse(path, fmt::format("no such file. It ships with the repository as data/{} (restore it with "
                                 "`git checkout data/{}`)",
                                 std::filesystem::path(path).filename().string(),
                                 std::filesystem::path(path).filename().string()));
    if (!std::filesystem::is_regular_file(path, ec)) refuse(path, "not a regular file");
    GzFile file(gzopen(path.c_str(), "rb"), &gzclose);
    if (!file) refuse(path, fmt::format("cannot open: {}", std::strerror(errno)));
    std::string bytes;
    char buffer[1 << 16];
    while (true) {
        const int n = gzread(file.get(), buffer, sizeof buffer);
        if (n < 0) {
            int err = Z_OK;
            const char* message = gzerror(file.get(), &err);
            refuse(path, fmt::format("corrupt gzip data (zlib: {})", message));
        }
        if (n == 0) break;
        if (bytes.size() + static_cast<size_t>(n) > limit)
            refuse(path,
                   fmt::format("more than {} MiB once decompressed: larger than an MNIST file may be", limit >> 20));
        bytes.append(buffer, static_cast<size_t>(n));
    }
    int err = Z_OK;
    const char* message = gzerror(file.get(), &err);
    if (err != Z_OK && err != Z_STREAM_END) refuse(path, fmt::format("corrupt gzip data (zlib: {})", message));
    return bytes;
}

uint32_t big_endian(const std::string& bytes, size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
}

// The header's fields after the magic number; `what` names them.
std::vector<int64_t> header(const std::string& path, const std::string& bytes, uint32_t magic,
                            const std::vector<std::string>& what) {
    const size_t size = 4 * (1 + what.size());
    if (bytes.size() < 4)
        refuse(path, fmt::format("{} bytes, shorter than the {}-byte IDX header", bytes.size(), size));
    const uint32_t found = big_endian(bytes, 0);
    if (found != magic) {
        const bool other = found == (magic == kImagesMagic ? kLabelsMagic : kImagesMagic);
        refuse(path,
               fmt::format(
                   "magic number {:#010x}, expected {:#010x} (IDX {}){}", found, magic,
                   magic == kImagesMagic ? "images" : "labels",
                   other ? fmt::format(": this is an IDX {} file", magic == kImagesMagic ? "labels" : "images") : ""));
    }
    if (bytes.size() < size)
        refuse(path, fmt::format("{} bytes, shorter than the {}-byte IDX header", bytes.size(), size));
    std::vector<int64_t> fields;
    for (size_t i = 0; i < what.size(); ++i) fields.push_back(big_endian(bytes, 4 * (i + 1)));
    return fields;
}

void check_length(const std::string& path, const std::string& bytes, size_t header_size, int64_t expected,
                  const std::string& what) {
    const auto found = static_cast<int64_t>(bytes.size() - header_size);
    if (found < expected)
        refuse(path, fmt::format("truncated: {} bytes of {}, the header promises {}", found, what, expected));
    if (found > expected)
        refuse(path,
               fmt::format("{} bytes after the {} the header promises ({} bytes)", found - expected, what, expected));
}

}  // namespace

std::string default_images_path() { return FARM_DATA_DIR "/mnist10k-images-idx3-ubyte.gz"; }
std::string default_labels_path() { return FARM_DATA_DIR "/mnist10k-labels-idx1-ubyte.gz"; }

Digits load(const std::string& images_path, const std::string& labels_path) {
    constexpr size_t kHeader = 16, kLabelsHeader = 8;
    const std::string pixels = read_gz(images_path, kMaxBytes);
    const std::vector<int64_t> h = header(images_path, pixels, kImagesMagic, {"count", "rows", "cols"});
    const int64_t count = h[0], rows = h[1], cols = h[2];
    if (count < 1 || count > kMaxImages)
        refuse(images_path, fmt::format("the header says {} images, expected 1 … {}", count, kMaxImages));
    if (rows < 1 || rows > kMaxSide || cols < 1 || cols > kMaxSide)
        refuse(images_path, fmt::format("the header says {}x{} pixels, expected 1 … {} a side", rows, cols, kMaxSide));
    check_length(images_path, pixels, kHeader, count * rows * cols,
                 fmt::format("pixels ({} images of {}x{})", count, rows, cols));

    const std::string label_bytes = read_gz(labels_path, kMaxBytes);
    const int64_t label_count = header(labels_path, label_bytes, kLabelsMagic, {"count"})[0];
    if (label_count != count)
        refuse(labels_path, fmt::format("{} labels for the {} images of {}", label_count, count, images_path));
    check_length(labels_path, label_bytes, kLabelsHeader, count, "labels");

    Digits digits;
    digits.rows = rows;
    digits.cols = cols;
    for (int64_t i = 0; i < count; ++i) {
        const int label = static_cast<unsigned char>(label_bytes[kLabelsHeader + static_cast<size_t>(i)]);
        if (label >= kDigits) refuse(labels_path, fmt::format("label {} is {}, expected 0-9", i, label));
        digits.labels.push_back(label);
    }
    std::vector<double> scaled(static_cast<size_t>(count * rows * cols));
    for (size_t i = 0; i < scaled.size(); ++i) scaled[i] = static_cast<unsigned char>(pixels[kHeader + i]) / 255.0;
    digits.images = ag::Tensor::from({count, rows * cols}, std::move(scaled));
    return digits;
}

Digits take(const Digits& digits, const std::vector<int64_t>& rows) {
    const int64_t d = digits.images.size(1), n = digits.images.size(0);
    const std::vector<double> all = digits.images.to_vector();
    std::vector<double> pixels;
    pixels.reserve(rows.size() * static_cast<size_t>(d));
    Digits out;
    out.rows = digits.rows;
    out.cols = digits.cols;
    for (const int64_t r : rows) {
        if (r < 0 || r >= n) throw std::out_of_range(fmt::format("mnist::take: row {} of {} images", r, n));
        pixels.insert(pixels.end(), all.begin() + r * d, all.begin() + (r + 1) * d);
        out.labels.push_back(digits.labels[static_cast<size_t>(r)]);
    }
    out.images = ag::Tensor::from({static_cast<int64_t>(rows.size()), d}, std::move(pixels));
    return out;
}

Split split(const Digits& digits, int64_t n_test, uint64_t seed) {
    const auto n = static_cast<int64_t>(digits.labels.size());
    if (n_test <= 0 || n_test >= n)
        throw std::invalid_argument(
            fmt::format("mnist::split: n_test = {}, expected 1 … {} for {} images", n_test, n - 1, n));
    ag::Generator gen(seed);
    const std::vector<int64_t> order = farm::permutation(n, gen);
    return {take(digits, {order.begin() + n_test, order.end()}), take(digits, {order.begin(), order.begin() + n_test})};
}

std::vector<int64_t> balanced_rows(const std::vector<int>& labels, int64_t n, ag::Generator& gen) {
    if (n < 0) throw std::invalid_argument(fmt::format("mnist::balanced_rows: n = {}", n));
    std::vector<std::vector<int64_t>> by_digit(kDigits);
    for (size_t i = 0; i < labels.size(); ++i)
        by_digit.at(static_cast<size_t>(labels[i])).push_back(static_cast<int64_t>(i));
    std::vector<int64_t> rows;
    for (int digit = 0; digit < kDigits; ++digit) {
        std::vector<int64_t>& candidates = by_digit[static_cast<size_t>(digit)];
        const int64_t want = n / kDigits + (digit < n % kDigits ? 1 : 0);
        if (want > static_cast<int64_t>(candidates.size()))
            throw std::invalid_argument(fmt::format("mnist::balanced_rows: {} images of digit {} wanted, {} there",
                                                    want, digit, candidates.size()));
        farm::shuffle(candidates, gen);
        rows.insert(rows.end(), candidates.begin(), candidates.begin() + want);
    }
    return rows;
}

}  // namespace mnist
