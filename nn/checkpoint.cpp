#include "nn/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zlib.h>
#include <nlohmann/json.hpp>

#include "nn/atomic_file.h"
#include "nn/json_strict.h"

namespace nn {

using Json = nlohmann::ordered_json;  // objects keep the file's order

// The data section is little-endian doubles; so is memory on every machine
// this builds on (x86-64, arm64), which lets a tensor be copied as bytes.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");

// The reference implementation refuses headers above 100 MB; a real header
// is a few kB per hundred tensors.
constexpr uint64_t kMaxHeader = 100'000'000;

// The metadata key of the data section's checksum: CRC-32 (zlib's, the
// one of gzip and PNG) as 8 lowercase hex digits. CRC-32 catches every
// error burst of up to 32 bits, so every bit flip, which an FNV-style hash
// does not promise; zlib computes it at several GB/s; and Python checks it
// with its standard library: zlib.crc32(data) == int(meta["data_crc32"], 16).
// A checksum, not a signature: it finds damage, not a deliberate edit.
constexpr const char* kChecksumKey = "data_crc32";
// The same for the rest of the metadata (a model's config among it: a flipped
// bit there can make another valid model, "window":0 read as 8): the CRC-32
// of every other entry in key order, each as key NUL value NUL. In Python:
// zlib.crc32(b"".join(k.encode() + b"\0" + v.encode() + b"\0" for k, v in
// sorted(meta.items()) if k not in ("data_crc32", "metadata_crc32"))).
constexpr const char* kMetadataChecksumKey = "metadata_crc32";

namespace {

// The CRC-32 of the pieces one after the other. An empty piece is skipped:
// zlib reads a null pointer as "return the initial value", and an empty
// tensor's data may be null.
uint32_t crc32_of(const std::vector<std::string_view>& pieces) {
    uLong crc = crc32_z(0, nullptr, 0);
    for (const std::string_view piece : pieces)
        if (!piece.empty()) crc = crc32_z(crc, reinterpret_cast<const Bytef*>(piece.data()), piece.size());
    return static_cast<uint32_t>(crc);
}

// The checksum of the metadata's entries other than the two checksums.
uint32_t metadata_crc32(const std::map<std::string, std::string>& metadata) {
    std::vector<std::string_view> pieces;
    static const std::string nul(1, '\0');
    for (const auto& [key, value] : metadata)
        if (key != kChecksumKey && key != kMetadataChecksumKey) pieces.insert(pieces.end(), {key, nul, value, nul});
    return crc32_of(pieces);
}

std::string_view bytes_of(const Tensor& t) {
    return {reinterpret_cast<const char*>(t.data()), static_cast<std::size_t>(t.numel()) * sizeof(double)};
}

}  // namespace

// ---- save -------------------------------------------------------------------

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata) {
    for (const char* reserved : {kChecksumKey, kMetadataChecksumKey})
        if (metadata.count(reserved))
            throw std::invalid_argument(
                fmt::format("save_safetensors: metadata key '{}' is reserved: save writes a checksum there", reserved));
    Json header = {{"__metadata__", nullptr}};  // first, filled in once the checksum is known
    std::set<std::string> names;
    std::vector<Tensor> data;  // contiguous, in file order
    uint64_t offset = 0;
    ag::NoGradGuard no_grad;
    for (const auto& [name, t] : tensors) {
        if (name.empty() || name == "__metadata__" || !names.insert(name).second)
            throw std::invalid_argument(
                fmt::format("save_safetensors: bad tensor name '{}' (empty, reserved or repeated)", name));
        if (!t.defined()) throw std::invalid_argument(fmt::format("save_safetensors: tensor '{}' is undefined", name));
        const uint64_t bytes = static_cast<uint64_t>(t.numel()) * sizeof(double);
        header[name] = {{"dtype", "F64"}, {"shape", t.shape()}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
        data.push_back(t.contiguous());
    }
    std::vector<std::string_view> data_bytes;
    for (const Tensor& t : data) data_bytes.push_back(bytes_of(t));
    std::map<std::string, std::string> with_checksum = metadata;
    with_checksum[kChecksumKey] = fmt::format("{:08x}", crc32_of(data_bytes));
    with_checksum[kMetadataChecksumKey] = fmt::format("{:08x}", metadata_crc32(metadata));
    header["__metadata__"] = with_checksum;
    std::string text;
    try {
        text = header.dump();
    } catch (const Json::type_error&) {  // JSON text is UTF-8
        throw std::invalid_argument("save_safetensors: a tensor name or metadata string is not valid UTF-8");
    }
    text.resize((text.size() + 7) / 8 * 8, ' ');  // the data starts 8-byte aligned

    char length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<char>(text.size() >> (8 * i));
    std::vector<std::string_view> pieces = {std::string_view(length, 8), text};
    pieces.insert(pieces.end(), data_bytes.begin(), data_bytes.end());
    try {
        write_file_atomically(path, pieces, Sync::Yes);  // a trained model took long to make
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(fmt::format("save_safetensors: {}", e.what()));
    }
}

void save(const Module& m, const std::string& path, const std::map<std::string, std::string>& metadata) {
    save_safetensors(path, m.named_parameters(), metadata);
}

// ---- load -------------------------------------------------------------------

namespace {

// One tensor entry of the header, checked against itself; the offsets are
// relative to the data section.
struct Entry {
    std::string name;
    Shape shape;
    uint64_t begin, end;
};

class Loader {
public:
    explicit Loader(std::string path) : path_(std::move(path)) {}

    [[noreturn]] void fail(const std::string& problem) const {
        throw std::runtime_error(fmt::format("load_safetensors: '{}': {}", path_, problem));
    }

    Checkpoint load() {
        read_file();
        if (bytes_.size() < 8)
            fail(fmt::format("the file has {} bytes, fewer than the 8 of the header length", bytes_.size()));
        uint64_t n = 0;
        for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<unsigned char>(bytes_[static_cast<std::size_t>(i)]);
        if (n > kMaxHeader) fail(fmt::format("header length {} is absurd (more than {} bytes)", n, kMaxHeader));
        if (n > bytes_.size() - 8)
            fail(fmt::format("header length {} runs past the end of the file ({} bytes)", n, bytes_.size()));
        data_begin_ = 8 + n;
        data_size_ = bytes_.size() - data_begin_;

        Json header;
        try {  // a key repeated in one object (two entries for one tensor) is refused too
            header = parse_strict_json(std::string_view(bytes_).substr(8, n));
        } catch (const std::invalid_argument& e) {
            fail(fmt::format("the header is not valid JSON ({})", e.what()));
        }
        if (!header.is_object()) fail(fmt::format("the header is a JSON {}, not an object", header.type_name()));

        Checkpoint ckpt;
        std::vector<Entry> entries;
        for (const auto& [key, value] : header.items()) {
            if (key == "__metadata__")
                ckpt.metadata = metadata(value);
            else
                entries.push_back(entry(key, value));
        }
        check_layout(entries);
        check_checksum(ckpt.metadata);
        for (const Entry& e : entries) {
            Tensor t = ag::empty(e.shape);
            if (e.end > e.begin)  // an empty tensor may have no storage: no memcpy from or to null
                std::memcpy(t.data(), bytes_.data() + data_begin_ + e.begin, e.end - e.begin);
            check_finite(e, t);
            ckpt.tensors.emplace_back(e.name, t);
        }
        return ckpt;
    }

private:
    void read_file() {
        namespace fs = std::filesystem;
        std::error_code ec;
        if (!fs::exists(path_, ec)) fail("no such file");
        if (!fs::is_regular_file(path_, ec)) fail("not a regular file");
        std::ifstream in(path_, std::ios::binary);
        if (!in) fail("cannot open the file");
        in.seekg(0, std::ios::end);
        const std::streamoff size = in.tellg();
        if (size < 0) fail("cannot read the file");
        bytes_.resize(static_cast<std::size_t>(size));
        in.seekg(0);
        in.read(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
        if (!in) fail("cannot read the file");
    }

    std::map<std::string, std::string> metadata(const Json& v) const {
        if (!v.is_object()) fail(fmt::format("__metadata__ is a JSON {}, not an object", v.type_name()));
        std::map<std::string, std::string> out;
        for (const auto& [k, s] : v.items()) {
            if (!s.is_string()) fail(fmt::format("__metadata__ value '{}' is a {}, not a string", k, s.type_name()));
            out[k] = s.get<std::string>();
        }
        return out;
    }

    // A whole number >= 0 (below 2^63) from a JSON value, or a failure
    // naming `what`.
    uint64_t count(const Json& v, const std::string& what) const {
        if (v.is_number_unsigned() && v.get<uint64_t>() < uint64_t{1} << 63) return v.get<uint64_t>();
        if (v.is_number_float()) {  // 1e+17: a whole number all the same
            const double x = v.get<double>();
            if (x >= 0.0 && x < 0x1p63 && x == std::floor(x)) return static_cast<uint64_t>(x);
        }
        fail(fmt::format("{} is {}, not a whole number >= 0", what, v.dump()));
    }

    Entry entry(const std::string& name, const Json& v) const {
        const std::string tensor = fmt::format("tensor '{}'", name);
        if (!v.is_object()) fail(fmt::format("{} is a JSON {}, not an object", tensor, v.type_name()));
        for (const char* field : {"dtype", "shape", "data_offsets"})
            if (!v.contains(field)) fail(fmt::format("{} has no \"{}\"", tensor, field));
        const Json &dtype = v.at("dtype"), &shape = v.at("shape"), &offsets = v.at("data_offsets");
        if (!dtype.is_string()) fail(fmt::format("{} has dtype {}, not a string", tensor, dtype.dump()));
        if (dtype.get<std::string>() != "F64")
            fail(fmt::format("{} has dtype {}; only F64 is supported (save in float64)", tensor,
                             dtype.get<std::string>()));
        if (!shape.is_array()) fail(fmt::format("{} has shape {}, not an array", tensor, shape.dump()));
        if (!offsets.is_array() || offsets.size() != 2)
            fail(fmt::format("{} has data_offsets {}, not [begin, end]", tensor, offsets.dump()));

        Entry e{name, {}, count(offsets.at(0), tensor + " begin"), count(offsets.at(1), tensor + " end")};
        // numel, saturating above the data section's size: no overflow, and
        // a shape too big for the file still fails the check below.
        const uint64_t cap = data_size_ / 8 + 1;
        uint64_t numel = 1;
        for (const Json& d : shape) {
            const uint64_t size = count(d, tensor + " shape entry");
            e.shape.push_back(static_cast<int64_t>(size));
            numel = size == 0 ? 0 : std::min(cap, numel > cap / size ? cap : numel * size);
        }
        if (e.end < e.begin)
            fail(fmt::format("{} has data_offsets [{}, {}] that end before they begin", tensor, e.begin, e.end));
        if (e.end - e.begin != numel * 8)
            fail(fmt::format("{} has data_offsets [{}, {}] holding {} bytes, but its shape {} of F64 needs {}", tensor,
                             e.begin, e.end, e.end - e.begin, ag::shape_str(e.shape),
                             numel == cap ? "more than the file holds" : fmt::format("{} bytes", numel * 8)));
        if (e.end > data_size_)
            fail(fmt::format("{} has data_offsets [{}, {}] past the end of the data ({} bytes): the file is truncated",
                             tensor, e.begin, e.end, data_size_));
        return e;
    }

    // Verifies the data section and the metadata against the checksums save
    // wrote, each when there is one (a file from another writer has none,
    // one from before the metadata's checksum has only the data's), and
    // takes them out of the metadata: Checkpoint::metadata is what save was
    // given.
    void check_checksum(std::map<std::string, std::string>& metadata) const {
        const auto recorded = [&](const char* key) -> std::optional<std::string> {
            const auto found = metadata.find(key);
            if (found == metadata.end()) return std::nullopt;
            const std::string value = found->second;
            if (value.size() != 8 || value.find_first_not_of("0123456789abcdef") != std::string::npos)
                fail(fmt::format("__metadata__ {} is {}, not 8 hex digits", key, Json(value).dump()));
            return value;
        };
        const std::optional<std::string> data = recorded(kChecksumKey), rest = recorded(kMetadataChecksumKey);
        if (rest && fmt::format("{:08x}", metadata_crc32(metadata)) != *rest)
            fail("checksum mismatch: the metadata was changed after it was written");
        if (data && fmt::format("{:08x}", crc32_of({std::string_view(bytes_).substr(data_begin_)})) != *data)
            fail("checksum mismatch: the data was changed after it was written");
        metadata.erase(kChecksumKey);
        metadata.erase(kMetadataChecksumKey);
    }

    // A NaN or an infinity is no trained weight: it turns every output it
    // reaches into NaN, and `farm_lm eval` printed -nan as a perplexity.
    void check_finite(const Entry& e, const Tensor& t) const {
        const double* values = t.data();
        const int64_t n = t.numel();
        for (int64_t i = 0; i < n; ++i)
            if (!std::isfinite(values[i])) {
                ag::Shape index(e.shape.size());  // row-major: the last dimension varies fastest
                for (std::size_t d = e.shape.size(), rest = static_cast<std::size_t>(i); d-- > 0;) {
                    index[d] = static_cast<int64_t>(rest % static_cast<std::size_t>(e.shape[d]));
                    rest /= static_cast<std::size_t>(e.shape[d]);
                }
                fail(fmt::format("tensor '{}' holds {} at {}; a model's parameters are finite numbers", e.name,
                                 values[i], ag::shape_str(index)));
            }
    }

    // Sorted by offset, the tensors must tile the data section exactly.
    void check_layout(std::vector<Entry> entries) const {
        std::sort(entries.begin(), entries.end(),
                  [](const Entry& a, const Entry& b) { return std::pair(a.begin, a.end) < std::pair(b.begin, b.end); });
        uint64_t pos = 0;
        const std::string* previous = nullptr;
        for (const Entry& e : entries) {
            if (e.begin < pos)
                fail(fmt::format("tensors '{}' and '{}' overlap in the data (bytes [{}, {}))", *previous, e.name,
                                 e.begin, pos));
            if (e.begin > pos) fail(fmt::format("data bytes [{}, {}) belong to no tensor", pos, e.begin));
            pos = e.end;
            previous = &e.name;
        }
        if (pos != data_size_) fail(fmt::format("data bytes [{}, {}) at the end belong to no tensor", pos, data_size_));
    }

    std::string path_;
    std::string bytes_;
    uint64_t data_begin_ = 0, data_size_ = 0;
};

}  // namespace

Checkpoint load_safetensors(const std::string& path) { return Loader(path).load(); }

// ---- into a module ----------------------------------------------------------

namespace {

// The first few items, then how many more: an error stays one line however
// many tensors are wrong (a config of 1000 layers against a file of 2 used
// to list all 7,992 missing ones, 251 kB).
std::string first_few(const std::vector<std::string>& items, const char* separator) {
    constexpr std::size_t kShown = 5;
    if (items.size() <= kShown) return fmt::format("{}", fmt::join(items, separator));
    return fmt::format("{}{}and {} more ({} in all)",
                       fmt::join(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(kShown), separator),
                       separator, items.size() - kShown, items.size());
}

}  // namespace

void load_into(Module& m, const Checkpoint& ckpt) {
    const auto params = m.named_parameters();
    std::map<std::string, Tensor> stored;
    std::vector<std::string> unexpected, repeated;
    for (const auto& [name, t] : ckpt.tensors)
        if (!stored.emplace(name, t).second) repeated.push_back(name);

    std::vector<std::string> missing, misshaped;
    std::set<std::string> model_names;
    for (const auto& [name, p] : params) {
        if (!p.is_contiguous()) throw std::logic_error(fmt::format("load_into: parameter {} is not contiguous", name));
        model_names.insert(name);
        const auto it = stored.find(name);
        if (it == stored.end())
            missing.push_back(name);
        else if (it->second.shape() != p.shape())
            misshaped.push_back(fmt::format("{} has shape {}, the model has {}", name,
                                            ag::shape_str(it->second.shape()), ag::shape_str(p.shape())));
    }
    for (const auto& [name, t] : ckpt.tensors)
        if (!model_names.count(name)) unexpected.push_back(name);

    std::vector<std::string> problems;
    if (!missing.empty()) problems.push_back("missing " + first_few(missing, ", "));
    if (!unexpected.empty()) problems.push_back("unexpected " + first_few(unexpected, ", "));
    if (!repeated.empty()) problems.push_back("repeated " + first_few(repeated, ", "));
    if (!misshaped.empty()) problems.push_back(first_few(misshaped, "; "));
    if (!problems.empty()) throw std::runtime_error(fmt::format("checkpoint: {}", fmt::join(problems, "; ")));

    // Everything matches: copy, writing through the module's own tensors.
    ag::NoGradGuard no_grad;
    for (auto [name, p] : params) {
        const Tensor src = stored.at(name).contiguous();
        if (p.numel() > 0) std::memcpy(p.data(), src.data(), static_cast<std::size_t>(p.numel()) * sizeof(double));
    }
}

}  // namespace nn
