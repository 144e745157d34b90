#include "lessons/common/encode.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <zlib.h>

namespace lessons::encode {

std::string base64(std::string_view bytes) {
    static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        const size_t n = std::min<size_t>(3, bytes.size() - i);
        uint32_t word = 0;
        for (size_t j = 0; j < 3; ++j) word = word << 8 | (j < n ? static_cast<unsigned char>(bytes[i + j]) : 0u);
        for (size_t j = 0; j < 4; ++j) out += j <= n ? kDigits[(word >> (18 - 6 * j)) & 63] : '=';
    }
    return out;
}

namespace {

void put32(std::string& s, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((v >> shift) & 0xff);
}

// A PNG chunk: length, type, data, CRC-32 of type and data.
void chunk(std::string& png, const char type[4], const std::string& data) {
    put32(png, static_cast<uint32_t>(data.size()));
    const std::string body = std::string(type, 4) + data;
    png += body;
    put32(png,
          static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()))));
}

}  // namespace

std::string png_rgb(int64_t width, int64_t height, const std::vector<uint8_t>& rgb) {
    if (width < 1 || height < 1 || width > 1 << 14 || height > 1 << 14 ||
        rgb.size() != static_cast<size_t>(width * height * 3))
        throw std::invalid_argument(
            fmt::format("png_rgb: {}x{} pixels (1 … 16384 a side) from {} bytes", width, height, rgb.size()));
    // Each row starts with its filter type, 0 (none).
    std::string raw;
    const auto row = static_cast<size_t>(width * 3);
    for (int64_t y = 0; y < height; ++y) {
        raw += '\0';
        raw.append(reinterpret_cast<const char*>(rgb.data()) + static_cast<size_t>(y) * row, row);
    }
    uLongf size = compressBound(static_cast<uLong>(raw.size()));
    std::string deflated(size, '\0');
    if (compress2(reinterpret_cast<Bytef*>(deflated.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
                  static_cast<uLong>(raw.size()), Z_BEST_COMPRESSION) != Z_OK)
        throw std::runtime_error("png_rgb: zlib could not compress the pixels");
    deflated.resize(size);

    std::string header;
    put32(header, static_cast<uint32_t>(width));
    put32(header, static_cast<uint32_t>(height));
    header += std::string{8, 2, 0, 0, 0};  // 8 bits per sample, RGB, deflate, filter 0, no interlace
    std::string png = "\x89PNG\r\n\x1a\n";
    chunk(png, "IHDR", header);
    chunk(png, "IDAT", deflated);
    chunk(png, "IEND", "");
    return png;
}

}  // namespace lessons::encode
