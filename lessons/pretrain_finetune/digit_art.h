#pragma once
// 8x8 digits as terminal art: each pixel two characters, darker ink for a
// larger value, so a digit and its reconstruction can be compared by eye.
#include <string>
#include <vector>

namespace lessons::pretrain_finetune {

// One row of the picture: a caption and its images, each 64 values in
// [0, 1], row by row.
struct ArtRow {
    std::string caption;
    std::vector<std::vector<double>> images;
};

// The ramp from blank (0) to full ink (1): " .:-=+*#%@".
char ink(double value);

// The rows one under another, their images side by side under the column
// titles; the captions in a left margin. Returns the lines.
std::vector<std::string> digit_art(const std::vector<std::string>& titles, const std::vector<ArtRow>& rows);

}  // namespace lessons::pretrain_finetune
