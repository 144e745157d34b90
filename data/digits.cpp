#include "data/digits.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <zlib.h>

#include "autograd/generator.h"
#include "data/shuffle.h"

namespace optdigits {

namespace {

constexpr int kPixels = 64;

using GzFile = std::unique_ptr<gzFile_s, decltype(&gzclose)>;

// 65 comma-separated integers: pixels 0-16, then a label 0-9. Returns an
// empty string when the line is good, else what is wrong with it.
std::string parse_line(std::string_view line, std::vector<double>& pixels, std::vector<int>& labels) {
    std::array<int, kPixels + 1> values{};
    int count = 0;
    const char* p = line.data();
    const char* end = line.data() + line.size();
    while (true) {
        if (count == kPixels + 1) return fmt::format("more than {} values", kPixels + 1);
        const auto [next, ec] = std::from_chars(p, end, values[count]);
        if (ec != std::errc() || next == p) {
            return fmt::format("value {} is not an integer: '{}'", count + 1,
                               std::string_view(p, static_cast<std::size_t>(end - p)).substr(0, 12));
        }
        ++count;
        p = next;
        if (p == end) break;
        if (*p != ',') return fmt::format("unexpected '{}' after value {}", *p, count);
        ++p;
    }
    if (count != kPixels + 1) return fmt::format("{} values, expected {} (64 pixels and a label)", count, kPixels + 1);
    for (int i = 0; i < kPixels; ++i) {
        if (values[i] < 0 || values[i] > 16) return fmt::format("pixel {} is {}, expected 0-16", i, values[i]);
    }
    if (values[kPixels] < 0 || values[kPixels] > 9) return fmt::format("label is {}, expected 0-9", values[kPixels]);
    for (int i = 0; i < kPixels; ++i) pixels.push_back(values[i] / 16.0);
    labels.push_back(values[kPixels]);
    return {};
}

// zlib reports a damaged or cut-off stream through gzerror.
void throw_if_corrupt(gzFile file, const std::string& path, int64_t line_no) {
    int err = Z_OK;
    const char* message = gzerror(file, &err);
    if (err != Z_OK && err != Z_STREAM_END) {
        throw std::runtime_error(fmt::format("digits: {}: corrupt gzip data, found while reading line {} (zlib: {})",
                                             path, line_no, message));
    }
}

Digits take_rows(const Digits& digits, const std::vector<int64_t>& rows) {
    const std::vector<double> all = digits.images.to_vector();
    std::vector<double> pixels;
    pixels.reserve(rows.size() * kPixels);
    Digits out;
    for (const int64_t r : rows) {
        pixels.insert(pixels.end(), all.begin() + r * kPixels, all.begin() + (r + 1) * kPixels);
        out.labels.push_back(digits.labels[r]);
    }
    out.images = ag::Tensor::from({static_cast<int64_t>(rows.size()), kPixels}, std::move(pixels));
    return out;
}

}  // namespace

std::string default_digits_path() { return FARM_DATA_DIR "/digits.csv.gz"; }

Digits load_digits(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        throw std::runtime_error(fmt::format(
            "digits: cannot open '{}': no such file. It ships with the repository as data/digits.csv.gz "
            "(restore it with `git checkout data/digits.csv.gz`); the same file is in Debian's python3-sklearn "
            "package as sklearn/datasets/data/digits.csv.gz",
            path));
    }
    if (!std::filesystem::is_regular_file(path, ec)) {
        throw std::runtime_error(fmt::format("digits: cannot open '{}': not a regular file", path));
    }
    GzFile file(gzopen(path.c_str(), "rb"), &gzclose);
    if (!file) throw std::runtime_error(fmt::format("digits: cannot open '{}': {}", path, std::strerror(errno)));

    std::vector<double> pixels;
    std::vector<int> labels;
    char buffer[4096];
    int64_t line_no = 0;
    while (gzgets(file.get(), buffer, static_cast<int>(sizeof buffer)) != nullptr) {
        ++line_no;
        std::string_view line(buffer);
        if (!line.empty() && line.back() == '\n') {
            line.remove_suffix(1);
        } else {  // the last line without a newline, a cut-off stream, or a very long line
            throw_if_corrupt(file.get(), path, line_no);
            if (!gzeof(file.get())) {
                throw std::runtime_error(
                    fmt::format("digits: {}, line {}: longer than {} bytes", path, line_no, sizeof buffer - 1));
            }
        }
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (const std::string problem = parse_line(line, pixels, labels); !problem.empty()) {
            throw std::runtime_error(fmt::format("digits: {}, line {}: {}", path, line_no, problem));
        }
    }
    throw_if_corrupt(file.get(), path, line_no + 1);
    if (labels.empty()) throw std::runtime_error(fmt::format("digits: {}: the file holds no images", path));

    Digits digits;
    digits.images = ag::Tensor::from({static_cast<int64_t>(labels.size()), kPixels}, std::move(pixels));
    digits.labels = std::move(labels);
    return digits;
}

DigitsSplit split_digits(const Digits& digits, int64_t n_test, uint64_t seed) {
    const auto n = static_cast<int64_t>(digits.labels.size());
    if (n_test <= 0 || n_test >= n) {
        throw std::invalid_argument(
            fmt::format("split_digits: n_test = {}, expected 1..{} for {} images", n_test, n - 1, n));
    }
    ag::Generator gen(seed);
    const std::vector<int64_t> order = farm::permutation(n, gen);
    DigitsSplit split;
    split.test = take_rows(digits, {order.begin(), order.begin() + n_test});
    split.train = take_rows(digits, {order.begin() + n_test, order.end()});
    return split;
}

}  // namespace optdigits
