// Checkpoints: the safetensors format byte for byte, round trips, every
// corrupt file refused with a message that names the problem (a changed
// data byte and a NaN too), zero-size tensors, saves of one file at once,
// and load_into's name and shape checks.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "catch.h"
#include "scratch.h"

#include "engine/helpers.h"
#include "nn/checkpoint.h"
#include "nn/config.h"

namespace fs = std::filesystem;
using ag::Tensor;

namespace {

// A module with two parameters and a child: names "a", "bias", "child.weight".
struct TinyChild : nn::Module {
    explicit TinyChild(ag::Generator& gen) { weight = register_parameter("weight", Tensor::randn({2, 3}, gen)); }
    Tensor weight;
};

struct Tiny : nn::Module {
    explicit Tiny(uint64_t seed) {
        ag::Generator gen(seed);
        a = register_parameter("a", Tensor::randn({3}, gen));
        bias = register_parameter("bias", Tensor::randn({2, 2}, gen));
        child = register_module("child", std::make_shared<TinyChild>(gen));
    }
    Tensor a, bias;
    std::shared_ptr<TinyChild> child;
};

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The 8-byte little-endian length of a header.
std::string length_le(uint64_t n) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
    return s;
}

// Little-endian bytes of doubles (what the data section holds).
std::string f64_bytes(const std::vector<double>& values) {
    std::string s(values.size() * 8, '\0');
    std::memcpy(s.data(), values.data(), s.size());
    return s;
}

// A safetensors file from a header text and a data section.
std::string safetensors_file(const std::string& header, const std::string& data) {
    return length_le(header.size()) + header + data;
}

// The message load_safetensors throws for this file, or "" if it loads.
std::string load_error(const std::string& path) {
    try {
        nn::load_safetensors(path);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

std::string load_into_error(nn::Module& m, const nn::Checkpoint& ckpt) {
    try {
        nn::load_into(m, ckpt);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

std::vector<std::vector<double>> values_of(const nn::Module& m) {
    std::vector<std::vector<double>> out;
    for (const Tensor& p : m.parameters()) out.push_back(p.to_vector());
    return out;
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("checkpoint: a module round-trips bit for bit, with names and metadata", "[nn][checkpoint]") {
    const test::ScratchDir dir("checkpoint");
    const std::string path = dir.file("tiny.safetensors");
    Tiny saved(1);
    // Values that a decimal format would mangle: -0, the smallest
    // subnormal, the largest double, 1/3.
    saved.a.data()[0] = -0.0;
    saved.a.data()[1] = 5e-324;
    saved.a.data()[2] = 1.7976931348623157e308;
    saved.bias.data()[0] = 1.0 / 3.0;
    const std::map<std::string, std::string> metadata = {{"model", "tiny"},
                                                         {"config", R"({"d": 3, "note": "a \"quoted\" word"})"}};
    nn::save(saved, path, metadata);

    // 8 + header + 3 + 4 + 6 doubles; the header is padded to a multiple of 8.
    const std::string bytes = read_bytes(path);
    uint64_t header_len = 0;
    std::memcpy(&header_len, bytes.data(), 8);
    CHECK(header_len % 8 == 0);
    CHECK(bytes.size() == 8 + header_len + 13 * 8);
    CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);  // no temporary file left

    const nn::Checkpoint ckpt = nn::load_safetensors(path);
    CHECK(ckpt.metadata == metadata);
    const auto expected = saved.named_parameters();
    REQUIRE(ckpt.tensors.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        INFO("tensor " << i << ": expected " << expected[i].first << ", found " << ckpt.tensors[i].first);
        CHECK(ckpt.tensors[i].first == expected[i].first);
        CHECK(ckpt.tensors[i].second.shape() == expected[i].second.shape());
        CHECK(bitwise_equal(ckpt.tensors[i].second.to_vector(), expected[i].second.to_vector()));
        CHECK_FALSE(ckpt.tensors[i].second.requires_grad());
    }

    // Into another model: same values, same tensor handles.
    Tiny loaded(2);
    const double* storage_before = loaded.child->weight.data();
    nn::load_into(loaded, ckpt);
    CHECK(loaded.child->weight.data() == storage_before);
    CHECK(loaded.child->weight.requires_grad());
    const auto want = values_of(saved), got = values_of(loaded);
    for (std::size_t i = 0; i < want.size(); ++i) {
        INFO("parameter " << i << "\n  expected " << test::values_str(want[i]) << "\n  found    "
                          << test::values_str(got[i]));
        CHECK(bitwise_equal(got[i], want[i]));
    }
}

TEST_CASE("checkpoint: a file written by hand byte for byte loads, and save writes the same bytes",
          "[nn][checkpoint]") {
    const test::ScratchDir dir("checkpoint");
    const std::string header = R"({"__metadata__":{"format":"pt"},)"
                               R"("x":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},)"
                               R"("y":{"dtype":"F64","shape":[],"data_offsets":[16,24]}})";
    REQUIRE(header.size() == 140);
    // 1.5 = 0x3FF8000000000000, -2 = 0xC000000000000000, 0.25 = 0x3FD0000000000000,
    // each stored least significant byte first.
    const std::string data = std::string("\x00\x00\x00\x00\x00\x00\xF8\x3F", 8) +
                             std::string("\x00\x00\x00\x00\x00\x00\x00\xC0", 8) +
                             std::string("\x00\x00\x00\x00\x00\x00\xD0\x3F", 8);
    const std::string by_hand = std::string("\x8C\x00\x00\x00\x00\x00\x00\x00", 8) + header + data;  // 140 = 0x8C
    write_bytes(dir.file("hand.safetensors"), by_hand);

    const nn::Checkpoint ckpt = nn::load_safetensors(dir.file("hand.safetensors"));
    CHECK(ckpt.metadata == std::map<std::string, std::string>{{"format", "pt"}});
    REQUIRE(ckpt.tensors.size() == 2);
    CHECK(ckpt.tensors[0].first == "x");
    CHECK_TENSOR(ckpt.tensors[0].second, {2}, {1.5, -2.0}, 0.0);
    CHECK(ckpt.tensors[1].first == "y");
    CHECK_TENSOR(ckpt.tensors[1].second, {}, {0.25}, 0.0);

    // Our writer: the same header with the data's CRC-32 (Python's
    // zlib.crc32 of the 24 data bytes is 0xa37a65dd) first in the metadata
    // and the rest's last (zlib.crc32(b"format\0pt\0") is 0x68e5a7ae): 192
    // bytes = 0xC0, a multiple of 8 already.
    nn::save_safetensors(dir.file("ours.safetensors"),
                         {{"x", Tensor::from({2}, {1.5, -2.0})}, {"y", Tensor::scalar(0.25)}}, {{"format", "pt"}});
    const std::string ours = read_bytes(dir.file("ours.safetensors"));
    std::string with_crc = header;
    with_crc.insert(header.find("\"format\""), R"("data_crc32":"a37a65dd",)");
    with_crc.insert(with_crc.find("\"pt\"") + 4, R"(,"metadata_crc32":"68e5a7ae")");
    const std::string expected = std::string("\xC0\x00\x00\x00\x00\x00\x00\x00", 8) + with_crc + data;
    CHECK(ours == expected);
    // It loads with the metadata it was given: the checksum belongs to the file.
    CHECK(nn::load_safetensors(dir.file("ours.safetensors")).metadata == ckpt.metadata);
}

TEST_CASE("checkpoint: save writes views row-major and refuses bad names", "[nn][checkpoint]") {
    const test::ScratchDir dir("checkpoint");
    const std::string path = dir.file("t.safetensors");
    const Tensor m = Tensor::from({2, 3}, {1, 2, 3, 4, 5, 6});
    nn::save_safetensors(path, {{"mt", m.t()}});
    const nn::Checkpoint ckpt = nn::load_safetensors(path);
    CHECK(ckpt.metadata.empty());
    CHECK_TENSOR(ckpt.tensors.at(0).second, {3, 2}, {1, 4, 2, 5, 3, 6}, 0.0);

    // A refused save leaves the previous file as it was.
    const std::string before = read_bytes(path);
    CHECK_THROWS_WITH(nn::save_safetensors(path, {{"w", m}, {"w", m}}), Catch::Contains("'w'"));
    CHECK_THROWS_WITH(nn::save_safetensors(path, {{"__metadata__", m}}), Catch::Contains("reserved"));
    CHECK_THROWS_WITH(nn::save_safetensors(path, {{"", m}}), Catch::Contains("bad tensor name"));
    CHECK(read_bytes(path) == before);
    CHECK_THROWS_WITH(nn::save_safetensors(dir.file("no/such/dir/x.safetensors"), {{"w", m}}),
                      Catch::Contains("cannot create"));
}

TEST_CASE("checkpoint: corrupt files are refused with a message naming the problem", "[nn][checkpoint]") {
    const test::ScratchDir dir("checkpoint");
    const std::string good_path = dir.file("good.safetensors");
    nn::save_safetensors(good_path, {{"w", Tensor::from({2}, {1.0, 2.0})}, {"b", Tensor::scalar(3.0)}});
    const std::string good = read_bytes(good_path);
    REQUIRE(load_error(good_path).empty());

    const std::string entry_w = R"("w":{"dtype":"F64","shape":[2],"data_offsets":[0,16]})";
    const std::string three = f64_bytes({1.0, 2.0, 3.0});
    struct Case {
        const char* what;
        std::string bytes;
        std::string error;
    };
    uint64_t good_len = 0;
    std::memcpy(&good_len, good.data(), 8);
    std::string flipped = good;
    flipped[7] = '\x40';  // one bit of the length's top byte: 2^62 more
    std::string past_end = good;
    past_end.replace(0, 8, length_le(good.size()));
    const std::vector<Case> cases = {
        {"empty file", "", "has 0 bytes, fewer than the 8 of the header length"},
        {"5 bytes", "abcde", "has 5 bytes, fewer than the 8"},
        {"flipped header length", flipped, fmt::format("header length {} is absurd", (uint64_t{1} << 62) + good_len)},
        {"header length past the end", past_end,
         fmt::format("header length {} runs past the end of the file ({} bytes)", good.size(), good.size())},
        {"truncated data", good.substr(0, good.size() - 8),
         "past the end of the data (16 bytes): the file is truncated"},
        {"truncated header", good.substr(0, 20), "runs past the end of the file (20 bytes)"},
        {"bad JSON", safetensors_file(R"({"w": {"dtype": "F64",)", ""),
         "the header is not valid JSON (parse error at line 1, column 23: syntax error while parsing object key - "
         "unexpected end of input; expected string literal)"},
        {"one tensor twice", safetensors_file("{" + entry_w + "," + entry_w + "}", three.substr(0, 16)),
         "the header is not valid JSON (duplicate key \"w\")"},
        {"nested too deep", safetensors_file("{\"w\": " + std::string(300, '[') + std::string(300, ']') + "}", ""),
         "the header is not valid JSON (nested deeper than 256 arrays/objects)"},
        {"a million brackets", safetensors_file(std::string(1'000'000, '['), ""), "nested deeper than 256"},
        {"not UTF-8", safetensors_file("{\"w\xff\": 1}", ""), "the header is not valid JSON (parse error"},
        {"JSON array", safetensors_file("[1, 2]", ""), "the header is a JSON array, not an object"},
        {"entry not an object", safetensors_file(R"({"w": 5})", ""), "tensor 'w' is a JSON number, not an object"},
        {"no dtype", safetensors_file(R"({"w":{"shape":[2],"data_offsets":[0,16]}})", three.substr(0, 16)),
         "tensor 'w' has no \"dtype\""},
        {"no shape", safetensors_file(R"({"w":{"dtype":"F64","data_offsets":[0,16]}})", three.substr(0, 16)),
         "tensor 'w' has no \"shape\""},
        {"no data_offsets", safetensors_file(R"({"w":{"dtype":"F64","shape":[2]}})", three.substr(0, 16)),
         "tensor 'w' has no \"data_offsets\""},
        {"F32", safetensors_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", three.substr(0, 8)),
         "tensor 'w' has dtype F32; only F64 is supported"},
        {"negative dim",
         safetensors_file(R"({"w":{"dtype":"F64","shape":[-2],"data_offsets":[0,16]}})", three.substr(0, 16)),
         "tensor 'w' shape entry is -2, not a whole number >= 0"},
        {"offsets not a pair",
         safetensors_file(R"({"w":{"dtype":"F64","shape":[2],"data_offsets":[16]}})", three.substr(0, 16)),
         "tensor 'w' has data_offsets [16], not [begin, end]"},
        {"end before begin",
         safetensors_file(R"({"w":{"dtype":"F64","shape":[0],"data_offsets":[16,0]}})", three.substr(0, 16)),
         "tensor 'w' has data_offsets [16, 0] that end before they begin"},
        {"size does not match the shape",
         safetensors_file(R"({"w":{"dtype":"F64","shape":[2],"data_offsets":[0,24]}})", three),
         "tensor 'w' has data_offsets [0, 24] holding 24 bytes, but its shape [2] of F64 needs 16 bytes"},
        {"shape far too big",
         safetensors_file(R"({"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,24]}})", three),
         "needs more than the file holds"},
        {"overlap",
         safetensors_file("{" + entry_w + R"(,"v":{"dtype":"F64","shape":[],"data_offsets":[8,16]}})",
                          three.substr(0, 16)),
         "tensors 'w' and 'v' overlap in the data (bytes [8, 16))"},
        {"gap",
         safetensors_file("{" + entry_w + R"(,"v":{"dtype":"F64","shape":[],"data_offsets":[24,32]}})",
                          f64_bytes({1, 2, 3, 4})),
         "data bytes [16, 24) belong to no tensor"},
        {"trailing bytes", safetensors_file("{" + entry_w + "}", three),
         "data bytes [16, 24) at the end belong to no tensor"},
        {"metadata not strings", safetensors_file(R"({"__metadata__":{"epoch":3}})", ""),
         "__metadata__ value 'epoch' is a number, not a string"},
    };
    for (const Case& c : cases) {
        const std::string path = dir.file("bad.safetensors");
        write_bytes(path, c.bytes);
        const std::string error = load_error(path);
        INFO("case: " << c.what << "\n  expected a message containing: " << c.error
                      << "\n  found: " << (error.empty() ? "(it loaded)" : error));
        CHECK(error.find(c.error) != std::string::npos);
        CHECK(error.find(path) != std::string::npos);  // the message names the file
    }

    const std::string missing = dir.file("missing.safetensors");
    CHECK(load_error(missing) == fmt::format("load_safetensors: '{}': no such file", missing));
    CHECK(load_error(dir.path.string()).find("not a regular file") != std::string::npos);
}

// nlohmann alone would keep a repeated key's last value: a checkpoint could
// load as a model nobody saved.
TEST_CASE("checkpoint: a key twice in the header or in the config metadata is refused, naming it", "[nn][checkpoint]") {
    const test::ScratchDir dir("checkpoint");
    const std::string path = dir.file("twice.safetensors");
    for (const auto& [header, key] : std::vector<std::pair<std::string, std::string>>{
             {R"({"__metadata__":{"config":"{}","config":"{}"}})", "\"config\""},
             {R"({"w":{"dtype":"F64","shape":[0],"dtype":"F32","data_offsets":[0,0]}})", "\"dtype\""},
             {R"({"__metadata__":{"model":"gpt"},"__metadata__":{"model":"modern_lm"}})", "\"__metadata__\""}}) {
        write_bytes(path, safetensors_file(header, ""));
        CHECK_THAT(load_error(path), Catch::Contains("the header is not valid JSON (duplicate key " + key + ")"));
    }

    // The config is JSON inside a metadata string: the header is fine, the
    // config is not.
    std::string config = nn::LMConfig::modern_lm().to_json();
    const std::string once = "\"vocab\":68";
    config.replace(config.find(once), once.size(), once + ",\"vocab\":999");
    nn::save_safetensors(path, {{"w", Tensor::from({2}, {1.0, 2.0})}}, {{"config", config}});
    const nn::Checkpoint ckpt = nn::load_safetensors(path);
    CHECK_THROWS_WITH(nn::LMConfig::from_json(ckpt.metadata.at("config")),
                      "model config: not JSON (duplicate key \"vocab\")");
}

TEST_CASE("checkpoint: load_into refuses missing, unexpected and mis-shaped tensors, changing nothing",
          "[nn][checkpoint]") {
    const test::ScratchDir dir("checkpoint");
    const std::string path = dir.file("tiny.safetensors");
    Tiny source(1);
    nn::save(source, path);
    const nn::Checkpoint good = nn::load_safetensors(path);

    Tiny model(2);
    const auto before = values_of(model);
    auto unchanged = [&] {
        const auto now = values_of(model);
        for (std::size_t i = 0; i < now.size(); ++i)
            if (!bitwise_equal(now[i], before[i])) return false;
        return true;
    };
    // good.tensors: a [3], bias [2,2], child.weight [2,3]
    SECTION("missing") {
        nn::Checkpoint c = good;
        c.tensors.erase(c.tensors.begin() + 1);
        CHECK(load_into_error(model, c) == "checkpoint: missing bias");
    }
    SECTION("unexpected") {
        nn::Checkpoint c = good;
        c.tensors.emplace_back("foo.weight", Tensor::zeros({1}));
        CHECK(load_into_error(model, c) == "checkpoint: unexpected foo.weight");
    }
    SECTION("mis-shaped") {
        nn::Checkpoint c = good;
        c.tensors[2].second = Tensor::zeros({3, 2});
        CHECK(load_into_error(model, c) == "checkpoint: child.weight has shape [3,2], the model has [2,3]");
    }
    SECTION("all at once, and 'a' alone would have matched") {
        nn::Checkpoint c = good;
        c.tensors[2].second = Tensor::zeros({3, 2});
        c.tensors.erase(c.tensors.begin() + 1);
        c.tensors.emplace_back("foo.weight", Tensor::zeros({1}));
        c.tensors.emplace_back("child.bias", Tensor::zeros({2}));
        CHECK(load_into_error(model, c) ==
              "checkpoint: missing bias; unexpected foo.weight, child.bias; child.weight has shape [3,2], the model "
              "has [2,3]");
    }
    CHECK(unchanged());
}

// ---- issue 13: well-formed but wrong, and two writers at once ---------------

// A bit flipped in the data section changes no structure: only the
// checksum save writes into the metadata catches it.
TEST_CASE("checkpoint: the data's and the metadata's CRC-32 are in the metadata, and a changed byte is refused",
          "[nn][checkpoint]") {
    const test::ScratchDir dir("checkpoint");
    const std::string path = dir.file("tiny.safetensors");
    Tiny saved(1);
    nn::save(saved, path, {{"model", "tiny"}});
    const std::string good = read_bytes(path);
    CHECK(good.find(R"("__metadata__":{"data_crc32":")") != std::string::npos);
    CHECK(nn::load_safetensors(path).metadata == std::map<std::string, std::string>{{"model", "tiny"}});

    std::string flipped = good;
    flipped[good.size() - 3] ^= 0x10;  // one bit of the last double: a valid number still
    write_bytes(path, flipped);
    CHECK(load_error(path) ==
          fmt::format("load_safetensors: '{}': checksum mismatch: the data was changed after it was written", path));

    // So is a bit flipped in the metadata, where a model's config is: the
    // metadata's own checksum catches it ("tiny" read as "tinz").
    std::string renamed = good;
    renamed[good.find("\"tiny\"") + 4] ^= 0x03;
    write_bytes(path, renamed);
    CHECK(
        load_error(path) ==
        fmt::format("load_safetensors: '{}': checksum mismatch: the metadata was changed after it was written", path));

    // The checksums are save's to write; a value that is not one is refused.
    CHECK_THROWS_WITH(nn::save(saved, path, {{"data_crc32", "0"}}), Catch::Contains("'data_crc32' is reserved"));
    CHECK_THROWS_WITH(nn::save(saved, path, {{"metadata_crc32", "0"}}),
                      Catch::Contains("'metadata_crc32' is reserved"));
    write_bytes(path, safetensors_file(R"({"__metadata__":{"data_crc32":"xyz"}})", ""));
    CHECK_THAT(load_error(path), Catch::Contains("__metadata__ data_crc32 is \"xyz\", not 8 hex digits"));
}

TEST_CASE("checkpoint: NaN and infinite values are refused at load, naming the tensor and the index",
          "[nn][checkpoint]") {
    const test::ScratchDir dir("checkpoint");
    const std::string path = dir.file("tiny.safetensors");
    for (const double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
        Tiny saved(1);
        saved.bias.data()[2] = bad;  // bias is [2, 2]: index [1,0]
        nn::save(saved, path);       // a diverged run writes a consistent checksum
        INFO("value " << bad);
        CHECK(load_error(path) == fmt::format("load_safetensors: '{}': tensor 'bias' holds {} at [1,0]; a model's "
                                              "parameters are finite numbers",
                                              path, bad));
    }
    // A file without a checksum (written by another program) too.
    write_bytes(path, safetensors_file(R"({"w":{"dtype":"F64","shape":[3],"data_offsets":[0,24]}})",
                                       f64_bytes({1.0, 2.0, std::nan("")})));
    CHECK_THAT(load_error(path), Catch::Contains("tensor 'w' holds nan at [2]"));
}

TEST_CASE("checkpoint: zero-size tensors save and load", "[nn][checkpoint]") {
    const test::ScratchDir dir("checkpoint");
    // By hand, as another writer would lay them out: empty ranges anywhere.
    const std::string path = dir.file("empty.safetensors");
    write_bytes(path, safetensors_file(R"({"e":{"dtype":"F64","shape":[0],"data_offsets":[0,0]},)"
                                       R"("w":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},)"
                                       R"("m":{"dtype":"F64","shape":[3,0],"data_offsets":[8,8]}})",
                                       f64_bytes({4.0})));
    const nn::Checkpoint ckpt = nn::load_safetensors(path);
    REQUIRE(ckpt.tensors.size() == 3);
    CHECK(ckpt.tensors[0].second.shape() == ag::Shape{0});
    CHECK(ckpt.tensors[2].second.shape() == ag::Shape{3, 0});
    CHECK_TENSOR(ckpt.tensors[1].second, {1}, {4.0}, 0.0);

    // And through save and load_into.
    struct WithEmpty : nn::Module {
        WithEmpty() {
            empty = register_parameter("empty", Tensor::zeros({3, 0}));
            w = register_parameter("w", Tensor::from({1}, {7.0}));
        }
        Tensor empty, w;
    };
    WithEmpty source, target;
    target.w.data()[0] = 0.0;
    nn::save(source, path);
    nn::load_into(target, nn::load_safetensors(path));
    CHECK(target.empty.shape() == ag::Shape{3, 0});
    CHECK(target.w.data()[0] == 7.0);
}

// A checkpoint from a config of 1000 layers into a model of 2 used to list
// every missing tensor: 251 kB of message.
TEST_CASE("checkpoint: load_into's error is one line however many tensors are wrong", "[nn][checkpoint]") {
    struct Many : nn::Module {
        explicit Many(int n, const ag::Shape& shape) {
            for (int i = 0; i < n; ++i) register_parameter(fmt::format("p{}", i), Tensor::zeros(shape));
        }
    };
    Many model(1000, {2});
    nn::Checkpoint none;
    CHECK(load_into_error(model, none) == "checkpoint: missing p0, p1, p2, p3, p4, and 995 more (1000 in all)");

    nn::Checkpoint extra;
    for (int i = 0; i < 6; ++i) extra.tensors.emplace_back(fmt::format("q{}", i), Tensor::zeros({2}));
    for (const auto& [name, p] : model.named_parameters()) extra.tensors.emplace_back(name, Tensor::zeros({3}));
    const std::string error = load_into_error(model, extra);
    CHECK(error ==
          "checkpoint: unexpected q0, q1, q2, q3, q4, and 1 more (6 in all); p0 has shape [3], the model has [2]; "
          "p1 has shape [3], the model has [2]; p2 has shape [3], the model has [2]; p3 has shape [3], the model has "
          "[2]; p4 has shape [3], the model has [2]; and 995 more (1000 in all)");
    CHECK(error.find('\n') == std::string::npos);
}

// Two runs saving one file used to share the temporary file path + ".tmp":
// one truncated or renamed away what the other was writing.
TEST_CASE("checkpoint: save writes through a temporary file of its own", "[nn][checkpoint]") {
    const test::ScratchDir dir("checkpoint");
    const std::string path = dir.file("shared.safetensors");
    write_bytes(path + ".tmp", "another writer's half-written file");
    nn::save_safetensors(path, {{"w", Tensor::from({2}, {1.0, 2.0})}});
    CHECK(read_bytes(path + ".tmp") == "another writer's half-written file");
    CHECK(load_error(path).empty());
    fs::remove(path + ".tmp");

    // Threads of one process save the same file at once: each save
    // completes, the file is one of theirs, and no temporary file is left.
    std::vector<std::thread> threads;
    std::vector<std::string> errors(8);
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&, t] {
            try {
                for (int i = 0; i < 20; ++i)
                    nn::save_safetensors(path, {{"w", Tensor::full({64}, static_cast<double>(t))}});
            } catch (const std::exception& e) {
                errors[static_cast<std::size_t>(t)] = e.what();
            }
        });
    for (std::thread& t : threads) t.join();
    CHECK(errors == std::vector<std::string>(8));
    CHECK(load_error(path).empty());
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(dir.path)) left.push_back(entry.path().filename().string());
    CHECK(left == std::vector<std::string>{"shared.safetensors"});
}
