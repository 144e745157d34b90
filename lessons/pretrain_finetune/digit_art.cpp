#include "lessons/pretrain_finetune/digit_art.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace lessons::pretrain_finetune {
namespace {

constexpr size_t kSide = 8;              // pixels per row and column
constexpr size_t kCell = 2 * kSide + 2;  // characters per image, gap included

}  // namespace

char ink(double value) {
    static const std::string ramp = " .:-=+*#%@";
    const double clamped = std::clamp(value, 0.0, 1.0);
    const auto level = static_cast<size_t>(std::lround(clamped * static_cast<double>(ramp.size() - 1)));
    return ramp[level];
}

std::vector<std::string> digit_art(const std::vector<std::string>& titles, const std::vector<ArtRow>& rows) {
    size_t margin = 0;
    for (const ArtRow& row : rows) margin = std::max(margin, row.caption.size() + 2);
    std::vector<std::string> lines;
    std::string header(margin, ' ');
    for (const std::string& title : titles) header += fmt::format("{:<{}}", title, kCell);
    lines.push_back(header);
    for (const ArtRow& row : rows) {
        for (size_t y = 0; y < kSide; ++y) {
            std::string line = fmt::format("{:<{}}", y == 0 ? row.caption : "", margin);
            for (const auto& image : row.images) {
                if (image.size() != kSide * kSide)
                    throw std::invalid_argument(fmt::format("digit_art: an image of {} values", image.size()));
                for (size_t x = 0; x < kSide; ++x) line += std::string(2, ink(image[y * kSide + x]));
                line += "  ";
            }
            lines.push_back(line);
        }
    }
    return lines;
}

}  // namespace lessons::pretrain_finetune
