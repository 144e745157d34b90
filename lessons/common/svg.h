#pragma once
// Figures for --out DIR as standalone SVG files (any browser opens them):
// line plots (loss curves, similarity against distance, time against T) and
// grids of heat maps (attention masks, attention weights, digits and their
// reconstructions). Plain text output, no dependencies.
//
//     svg::LinePlot plot{"Training loss", "step", "loss"};
//     plot.series.push_back({"ModernLM", steps, losses});
//     plot.series.push_back({"∝ T²", lengths, quadratic, true});  // a dashed guide
//     svg::write(output_path(options, "loss.svg"), plot);
//
//     svg::LinePlot scatter{"Accuracy against weight", "weight", "accuracy"};
//     scatter.lines = false;  // one dot per point
//
//     svg::HeatmapGrid masks{"Sliding-window masks", 2};
//     masks.panels.push_back({"W = 3", mask_rows});
//     svg::write(output_path(options, "masks.svg"), masks);
//
// write() throws std::runtime_error (naming the file) when it cannot write,
// or when the data cannot be drawn (a series whose x and y differ in
// length, a ragged heat map, a log axis with a value <= 0).
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lessons::svg {

struct Series {
    std::string name;
    std::vector<double> x, y;  // same length; non-finite points are skipped
    // A reference line, not data (y ∝ T² on a log-log plot): grey, without
    // markers, each guide with its own dashes, named in the legend.
    bool guide = false;
};

struct LinePlot {
    LinePlot(std::string title_ = "", std::string x_label_ = "", std::string y_label_ = "")
        : title(std::move(title_)), x_label(std::move(x_label_)), y_label(std::move(y_label_)) {}
    std::string title, x_label, y_label;
    std::vector<Series> series;
    bool log_x = false, log_y = false;
    bool markers = false;  // draw each point as a dot too
    // false: a scatter plot, each data point a dot and nothing joining
    // them (markers or not), a dot in the legend; guides stay lines.
    bool lines = true;
};

// One heat map: values[row][column], drawn row 0 at the top. Colour runs
// from white (lo) to dark blue (hi); lo == hi means the data's own range.
// A map of more than 400 cells without numbers (a 28x28 digit) is drawn as
// one embedded PNG image, its pixels unsmoothed; smaller ones cell by cell.
struct Heatmap {
    std::string caption;
    std::vector<std::vector<double>> values;
    double lo = 0, hi = 0;
    bool numbers = false;  // print each cell's value in it (small maps)
};

struct HeatmapGrid {
    HeatmapGrid(std::string title_ = "", int columns_ = 4) : title(std::move(title_)), columns(columns_) {}
    std::string title;
    int columns = 4;  // panels per row
    std::vector<Heatmap> panels;
    std::string x_label, y_label;  // shared by every panel ("key j", "query t")
};

// Text for SVG and HTML: & < > " escaped (UTF-8 passes through).
std::string escape(std::string_view text);

void write(const std::filesystem::path& path, const LinePlot& plot);
void write(const std::filesystem::path& path, const HeatmapGrid& grid);

}  // namespace lessons::svg
