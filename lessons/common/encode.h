#pragma once
// Bytes for self-contained pages and figures: base64 (for data: URLs) and a
// minimal PNG writer, so a large heat map (a 28x28 digit, a learned feature)
// is one small embedded image instead of hundreds of SVG rectangles.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lessons::encode {

// RFC 4648 base64 with '=' padding.
std::string base64(std::string_view bytes);

// An 8-bit RGB PNG of width x height pixels; rgb holds 3 bytes per pixel,
// row by row from the top. The pixel rows are deflated with zlib (PNG's
// own compression) and every chunk carries its CRC-32.
std::string png_rgb(int64_t width, int64_t height, const std::vector<uint8_t>& rgb);

}  // namespace lessons::encode
