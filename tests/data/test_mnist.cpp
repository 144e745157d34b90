// The MNIST reader: the real files' shape and values, the seeded split and
// the class-balanced draw, and a one-line refusal for every way an IDX file
// can be missing, damaged or lying about its size.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

#include <zlib.h>

#include "catch.h"
#include "scratch.h"

#include "data/mnist.h"

using Catch::Contains;
namespace fs = std::filesystem;

namespace {

const mnist::Digits& digits() {
    static const mnist::Digits d = mnist::load();
    return d;
}

void write_gz(const std::string& path, const std::string& bytes) {
    gzFile f = gzopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    if (!bytes.empty())
        REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
    REQUIRE(gzclose(f) == Z_OK);
}

std::string be32(uint32_t v) {
    return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

// An IDX images file of n images of r x c pixels, pixel i of image k = (k + i) % 256.
std::string images_idx(uint32_t n, uint32_t r, uint32_t c) {
    std::string s = be32(0x803) + be32(n) + be32(r) + be32(c);
    for (uint32_t k = 0; k < n; ++k)
        for (uint32_t i = 0; i < r * c; ++i) s += static_cast<char>((k + i) % 256);
    return s;
}
std::string labels_idx(const std::string& labels) {
    return be32(0x801) + be32(static_cast<uint32_t>(labels.size())) + labels;
}

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST_CASE("mnist: 10,000 images of 28x28 pixels in [0,1], the class counts of the file", "[data][mnist]") {
    INFO("default paths: " << mnist::default_images_path() << ", " << mnist::default_labels_path());
    CHECK(fs::path(mnist::default_images_path()).is_absolute());
    const mnist::Digits& d = digits();
    REQUIRE(d.images.shape() == ag::Shape{10000, 784});
    CHECK(d.rows == 28);
    CHECK(d.cols == 28);
    REQUIRE(d.labels.size() == 10000);
    const std::vector<double> pixels = d.images.to_vector();
    int64_t off_grid = 0;
    for (const double p : pixels) off_grid += (p < 0.0 || p > 1.0 || p * 255.0 != std::round(p * 255.0));
    CHECK(off_grid == 0);
    CHECK(*std::max_element(pixels.begin(), pixels.end()) == 1.0);
    std::vector<int> counts(10, 0);
    for (const int label : d.labels) ++counts.at(static_cast<size_t>(label));
    CHECK(counts == std::vector<int>{1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978});
    // grouped by label, as the README says: the first image is a 0, the last a 9
    CHECK(d.labels.front() == 0);
    CHECK(d.labels.back() == 9);
    // a digit is ink in the middle, blank at the corners: mean of the 4x4 corners against the centre
    double corner = 0, centre = 0;
    for (int64_t k = 0; k < 100; ++k)
        for (int64_t y = 0; y < 4; ++y)
            for (int64_t x = 0; x < 4; ++x) {
                corner += d.images.at({k * 97, y * 28 + x});
                centre += d.images.at({k * 97, (12 + y) * 28 + 12 + x});
            }
    CHECK(corner == 0.0);
    CHECK(centre > 100.0);
}

TEST_CASE("mnist: the split is a seeded partition of the rows", "[data][mnist]") {
    const mnist::Split a = mnist::split(digits(), 2000, 0);
    CHECK(a.train.images.shape() == ag::Shape{8000, 784});
    CHECK(a.test.images.shape() == ag::Shape{2000, 784});
    CHECK(a.test.labels.size() == 2000);
    // the test set mixes the digits although the file is grouped by label
    std::map<int, int> test_counts;
    for (const int l : a.test.labels) ++test_counts[l];
    CHECK(test_counts.size() == 10);
    for (const auto& [digit, count] : test_counts) {
        INFO("digit " << digit << ": " << count << " test images");
        CHECK((count > 140 && count < 270));
    }
    // label sums: train and test together are all of the data set
    const auto sum = [](const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); };
    CHECK(sum(a.train.labels) + sum(a.test.labels) == sum(digits().labels));
    const mnist::Split again = mnist::split(digits(), 2000, 0);
    const mnist::Split other = mnist::split(digits(), 2000, 1);
    CHECK(again.test.labels == a.test.labels);
    CHECK(again.test.images.to_vector() == a.test.images.to_vector());
    CHECK(other.test.labels != a.test.labels);
    CHECK_THROWS_WITH(mnist::split(digits(), 0, 0), Contains("n_test = 0"));
    CHECK_THROWS_WITH(mnist::split(digits(), 10000, 0), Contains("n_test = 10000"));
}

TEST_CASE("mnist: balanced_rows draws n/10 of every digit, seeded", "[data][mnist]") {
    const std::vector<int> labels = mnist::split(digits(), 2000, 0).train.labels;
    ag::Generator gen(7);
    const std::vector<int64_t> rows = mnist::balanced_rows(labels, 300, gen);
    REQUIRE(rows.size() == 300);
    std::map<int, int> counts;
    for (const int64_t r : rows) ++counts[labels.at(static_cast<size_t>(r))];
    for (int digit = 0; digit < 10; ++digit) CHECK(counts[digit] == 30);
    std::vector<int64_t> sorted = rows;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // no row twice

    ag::Generator same(7), other(8);
    CHECK(mnist::balanced_rows(labels, 300, same) == rows);
    CHECK(mnist::balanced_rows(labels, 300, other) != rows);

    ag::Generator g2(0);
    const std::vector<int64_t> odd = mnist::balanced_rows(labels, 103, g2);
    std::map<int, int> odd_counts;
    for (const int64_t r : odd) ++odd_counts[labels.at(static_cast<size_t>(r))];
    CHECK(odd.size() == 103);
    CHECK(odd_counts[0] == 11);
    CHECK(odd_counts[2] == 11);
    CHECK(odd_counts[3] == 10);
    ag::Generator g3(0);
    CHECK_THROWS_WITH(mnist::balanced_rows(labels, 100000, g3), Contains("digit 0"));
}

TEST_CASE("mnist: small well-formed files load, scaled by 1/255", "[data][mnist]") {
    const test::ScratchDir dir("mnist_good");
    write_gz(dir.file("i.gz"), images_idx(3, 2, 5));
    write_gz(dir.file("l.gz"), labels_idx(std::string("\x07\x00\x09", 3)));
    const mnist::Digits d = mnist::load(dir.file("i.gz"), dir.file("l.gz"));
    CHECK(d.images.shape() == ag::Shape{3, 10});
    CHECK(d.rows == 2);
    CHECK(d.cols == 5);
    CHECK(d.labels == std::vector<int>{7, 0, 9});
    CHECK(d.images.at({2, 3}) == 5.0 / 255.0);
}

TEST_CASE("mnist: every damaged file is refused in one line naming the file", "[data][mnist][errors]") {
    const test::ScratchDir dir("mnist_bad");
    const std::string good_images = images_idx(3, 2, 5), good_labels = labels_idx(std::string("\x01\x02\x03", 3));
    struct Case {
        const char* name;
        std::string images, labels;
        const char* blamed;  // "images" or "labels": which file the message names
        const char* problem;
    };
    std::string labels_as_images = labels_idx(std::string(3, '\x01'));
    const std::vector<Case> cases = {
        {"images file is a labels file", labels_as_images, good_labels, "images", "this is an IDX labels file"},
        {"labels file is an images file", good_images, good_images, "labels", "this is an IDX images file"},
        {"wrong magic", be32(0x12345678) + good_images.substr(4), good_labels, "images", "magic number 0x12345678"},
        {"empty", "", good_labels, "images", "shorter than the 16-byte IDX header"},
        {"header cut", good_images.substr(0, 10), good_labels, "images", "shorter than the 16-byte IDX header"},
        {"pixels cut", good_images.substr(0, good_images.size() - 1), good_labels, "images", "truncated: 29 bytes"},
        {"bytes after the pixels", good_images + "x", good_labels, "images", "1 bytes after the pixels"},
        {"zero images", images_idx(0, 2, 5), labels_idx(""), "images", "0 images"},
        {"too many images", be32(0x803) + be32(2000000) + be32(28) + be32(28), good_labels, "images", "2000000 images"},
        {"a huge side", be32(0x803) + be32(1) + be32(0xffffffff) + be32(0xffffffff), good_labels, "images",
         "4294967295x4294967295 pixels"},
        {"fewer labels", good_images, labels_idx(std::string(2, '\x01')), "labels", "2 labels for the 3 images"},
        {"labels cut", good_images, good_labels.substr(0, good_labels.size() - 1), "labels",
         "truncated: 2 bytes of labels"},
        {"label 10", good_images, labels_idx(std::string("\x01\x0a\x03", 3)), "labels", "label 1 is 10, expected 0-9"},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        write_gz(dir.file("images.gz"), c.images);
        write_gz(dir.file("labels.gz"), c.labels);
        const std::string blamed = dir.file(std::string(c.blamed) + ".gz");
        try {
            mnist::load(dir.file("images.gz"), dir.file("labels.gz"));
            FAIL("loaded without complaint");
        } catch (const std::runtime_error& e) {
            const std::string message = e.what();
            INFO(message);
            CHECK_THAT(message, Contains(blamed) && Contains(c.problem));
            CHECK(message.find('\n') == std::string::npos);
        }
    }
}

TEST_CASE("mnist: a missing file, a directory, damaged gzip data", "[data][mnist][errors]") {
    const test::ScratchDir dir("mnist_gzip");
    const std::string labels = mnist::default_labels_path();
    CHECK_THROWS_WITH(mnist::load(dir.file("nowhere.gz"), labels),
                      Contains("nowhere.gz") && Contains("no such file") && Contains("git checkout"));
    CHECK_THROWS_WITH(mnist::load(dir.path.string(), labels), Contains("not a regular file"));

    const std::string bytes = read_bytes(mnist::default_images_path());
    REQUIRE(bytes.size() > 100000);
    SECTION("cut off in the middle") {
        std::ofstream(dir.file("cut.gz"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
        CHECK_THROWS_WITH(mnist::load(dir.file("cut.gz"), labels), Contains("cut.gz") && Contains("corrupt gzip data"));
    }
    SECTION("damaged bytes") {
        std::string damaged = bytes;
        for (size_t i = 5000; i < 5060; ++i) damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
        std::ofstream(dir.file("damaged.gz"), std::ios::binary) << damaged;
        CHECK_THROWS_WITH(mnist::load(dir.file("damaged.gz"), labels), Contains("corrupt gzip data"));
    }
    SECTION("a wrong checksum in the gzip trailer") {
        std::string damaged = bytes;
        damaged[bytes.size() - 5] = static_cast<char>(damaged[bytes.size() - 5] ^ 1);
        std::ofstream(dir.file("crc.gz"), std::ios::binary) << damaged;
        CHECK_THROWS_WITH(mnist::load(dir.file("crc.gz"), labels), Contains("corrupt gzip data"));
    }
    SECTION("a small file that inflates past the size limit") {
        gzFile f = gzopen(dir.file("bomb.gz").c_str(), "wb9");
        REQUIRE(f != nullptr);
        const std::string zeros(size_t{1} << 20, '\0');
        for (size_t mib = 0; mib <= (mnist::kMaxBytes >> 20); ++mib)
            REQUIRE(gzwrite(f, zeros.data(), static_cast<unsigned>(zeros.size())) > 0);
        REQUIRE(gzclose(f) == Z_OK);
        CHECK(fs::file_size(dir.file("bomb.gz")) < (size_t{2} << 20));
        CHECK_THROWS_WITH(mnist::load(dir.file("bomb.gz"), labels), Contains("more than 256 MiB once decompressed"));
    }
}
