// The digits loader: the real file's shape and values, the seeded split,
// and clear errors for a missing or a damaged file.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>

#include "data/digits.h"

using Catch::Contains;
namespace fs = std::filesystem;

namespace {

const optdigits::Digits& digits() {
    static const optdigits::Digits d = optdigits::load_digits();
    return d;
}

// A fresh directory for one test case, removed when the case ends.
struct TempDir {
    fs::path path;
    explicit TempDir(const std::string& name)
        : path(fs::temp_directory_path() / ("farm_data_" + name + "_" + std::to_string(getpid()))) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() { fs::remove_all(path); }
    std::string file(const std::string& name) const { return (path / name).string(); }
};

void write_gz(const std::string& path, const std::string& text) {
    gzFile f = gzopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    REQUIRE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
    REQUIRE(gzclose(f) == Z_OK);
}

std::string line_of(int pixel, int label) {
    std::string line;
    for (int i = 0; i < 64; ++i) line += std::to_string(pixel) + ",";
    return line + std::to_string(label) + "\n";
}

// One row per image: its label then its 64 pixels, for comparing sets of rows.
std::vector<std::vector<double>> rows_of(const optdigits::Digits& d) {
    const std::vector<double> pixels = d.images.to_vector();
    std::vector<std::vector<double>> rows;
    for (std::size_t i = 0; i < d.labels.size(); ++i) {
        std::vector<double> r = {static_cast<double>(d.labels[i])};
        r.insert(r.end(), pixels.begin() + static_cast<std::ptrdiff_t>(64 * i),
                 pixels.begin() + static_cast<std::ptrdiff_t>(64 * (i + 1)));
        rows.push_back(r);
    }
    return rows;
}

}  // namespace

TEST_CASE("digits: 1,797 images of 64 pixels in [0,1], labels 0-9 about 180 each", "[data][digits]") {
    INFO("default path: " << optdigits::default_digits_path());
    CHECK(fs::path(optdigits::default_digits_path()).is_absolute());
    const optdigits::Digits& d = digits();
    REQUIRE(d.images.shape() == ag::Shape{1797, 64});
    REQUIRE(d.labels.size() == 1797);
    const std::vector<double> pixels = d.images.to_vector();
    int64_t off_grid = 0;
    for (const double p : pixels) off_grid += (p < 0.0 || p > 1.0 || p * 16.0 != std::round(p * 16.0));
    CHECK(off_grid == 0);
    CHECK(*std::max_element(pixels.begin(), pixels.end()) == 1.0);
    std::vector<int> counts(10, 0);
    for (const int label : d.labels) {
        REQUIRE((label >= 0 && label <= 9));
        ++counts[label];
    }
    for (int digit = 0; digit < 10; ++digit) {
        INFO("digit " << digit << " appears " << counts[digit] << " times");
        CHECK((counts[digit] >= 170 && counts[digit] <= 190));
    }
    // the file's first line: a zero
    const std::vector<double> first = {0, 0, 5, 13, 9, 1, 0, 0, 0, 0, 13, 15, 10, 15, 5, 0};
    for (std::size_t i = 0; i < first.size(); ++i) CHECK(pixels[i] == first[i] / 16.0);
    CHECK(d.labels[0] == 0);
}

TEST_CASE("digits: the split is a seeded partition", "[data][digits]") {
    const optdigits::DigitsSplit a = optdigits::split_digits(digits(), 297, 0);
    CHECK(a.train.images.shape() == ag::Shape{1500, 64});
    CHECK(a.test.images.shape() == ag::Shape{297, 64});
    CHECK(a.train.labels.size() == 1500);
    CHECK(a.test.labels.size() == 297);
    // train and test together are exactly the data set's rows
    std::vector<std::vector<double>> together = rows_of(a.train), test_rows = rows_of(a.test);
    together.insert(together.end(), test_rows.begin(), test_rows.end());
    std::vector<std::vector<double>> all = rows_of(digits());
    std::sort(together.begin(), together.end());
    std::sort(all.begin(), all.end());
    CHECK(together == all);

    const optdigits::DigitsSplit again = optdigits::split_digits(digits(), 297, 0);
    const optdigits::DigitsSplit other = optdigits::split_digits(digits(), 297, 1);
    CHECK(again.test.labels == a.test.labels);
    CHECK(again.test.images.to_vector() == a.test.images.to_vector());
    CHECK(other.test.images.to_vector() != a.test.images.to_vector());
    CHECK_THROWS_WITH(optdigits::split_digits(digits(), 0, 0), Contains("n_test = 0"));
    CHECK_THROWS_WITH(optdigits::split_digits(digits(), 1797, 0), Contains("n_test = 1797"));
}

TEST_CASE("digits: a missing file says where it should be and how to get it", "[data][digits][errors]") {
    const TempDir dir("missing");
    const std::string path = dir.file("nowhere.csv.gz");
    CHECK_THROWS_AS(optdigits::load_digits(path), std::runtime_error);
    CHECK_THROWS_WITH(optdigits::load_digits(path), Contains(path) && Contains("no such file") &&
                                                        Contains("data/digits.csv.gz") && Contains("python3-sklearn"));
}

TEST_CASE("digits: a bad line names the file and the line", "[data][digits][errors]") {
    const TempDir dir("bad_lines");
    const std::string good = line_of(3, 7);
    struct Case {
        const char* name;
        std::string second_line;
        const char* problem;
    };
    const std::vector<Case> cases = {
        {"pixel above 16", line_of(17, 1), "pixel 0 is 17"},
        {"negative pixel", line_of(-1, 1), "pixel 0 is -1"},
        {"label 10", line_of(0, 10), "label is 10"},
        {"64 values", good.substr(good.find(',') + 1), "64 values, expected 65"},
        {"66 values", "0," + good, "more than 65 values"},
        {"not a number", "x" + good, "value 1 is not an integer"},
        {"a space", " " + good, "value 1 is not an integer"},
        {"empty line", "\n", "value 1 is not an integer"},
        {"semicolons", "1;" + good, "unexpected ';'"},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        const std::string path = dir.file("bad.csv.gz");
        write_gz(path, good + c.second_line + good);
        CHECK_THROWS_AS(optdigits::load_digits(path), std::runtime_error);
        CHECK_THROWS_WITH(optdigits::load_digits(path), Contains(path) && Contains("line 2") && Contains(c.problem));
    }
    // and good lines load: scaled by 1/16, last line without a newline, CRLF
    const std::string path = dir.file("good.csv.gz");
    std::string crlf = line_of(16, 9);
    crlf.insert(crlf.size() - 1, "\r");
    write_gz(path, good + crlf + good.substr(0, good.size() - 1));
    const optdigits::Digits d = optdigits::load_digits(path);
    CHECK(d.images.shape() == ag::Shape{3, 64});
    CHECK(d.labels == std::vector<int>{7, 9, 7});
    CHECK(d.images.at({0, 0}) == 3.0 / 16.0);
    CHECK(d.images.at({1, 63}) == 1.0);

    write_gz(path, "");
    CHECK_THROWS_WITH(optdigits::load_digits(path), Contains(path) && Contains("no images"));
}

TEST_CASE("digits: corrupt gzip data is an error, not a short data set", "[data][digits][errors]") {
    const TempDir dir("corrupt");
    std::ifstream in(optdigits::default_digits_path(), std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), {}};
    REQUIRE(bytes.size() > 1000);

    SECTION("cut off in the middle") {
        const std::string path = dir.file("cut.csv.gz");
        std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
        CHECK_THROWS_AS(optdigits::load_digits(path), std::runtime_error);
        CHECK_THROWS_WITH(optdigits::load_digits(path), Contains(path) && Contains("corrupt gzip data"));
    }
    SECTION("damaged bytes") {
        std::string damaged = bytes;
        for (std::size_t i = 200; i < 260; ++i) damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
        const std::string path = dir.file("damaged.csv.gz");
        std::ofstream(path, std::ios::binary) << damaged;
        CHECK_THROWS_AS(optdigits::load_digits(path), std::runtime_error);
        CHECK_THROWS_WITH(optdigits::load_digits(path), Contains(path) && Contains("corrupt gzip data"));
    }
    SECTION("a wrong checksum: the damage is found at the end, after most lines parsed") {
        std::string damaged = bytes;
        damaged[bytes.size() - 5] = static_cast<char>(damaged[bytes.size() - 5] ^ 1);  // the CRC-32 in the trailer
        const std::string path = dir.file("checksum.csv.gz");
        std::ofstream(path, std::ios::binary) << damaged;
        CHECK_THROWS_WITH(optdigits::load_digits(path), Contains(path) && Contains("corrupt gzip data"));
    }
}
