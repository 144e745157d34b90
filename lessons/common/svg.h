#pragma once
// Figures for --out DIR as standalone SVG files (any browser opens them):
// line plots (loss curves, accuracy against distance, time against T), dot
// plots over named categories (test error per method, with the seeds'
// spread) and grids of heat maps (attention masks and weights, digits and
// their reconstructions). Plain text output, no dependencies.
//
//     svg::LinePlot plot{"Training loss", "step", "loss"};
//     plot.series.push_back({"ModernLM", steps, losses});
//     plot.series.push_back({"∝ T²", lengths, quadratic, true});  // a dashed guide
//     plot.references.push_back({floor, "the grammar's floor"});  // a labelled horizontal line
//     svg::write(output_path(options, "loss.svg"), plot);
//
//     svg::LinePlot dots{"Test error over seeds", "method", "test error"};
//     dots.x_categories = {"SGD", "RBM"};  // x = 0, 1 name these
//     dots.lines = false;
//     dots.series.push_back({"mean, min-max", {0, 1}, means, false, lows, highs});  // error bars
//
//     svg::HeatmapGrid masks{"Sliding-window masks", 2};
//     masks.panels.push_back({"W = 3", mask_rows});
//     masks.panels.back().x_ticks = {"the", "cow", …};  // a label per column
//     masks.panels.back().marked = {{5, 1}};            // outline cell (row 5, column 1)
//     svg::write(output_path(options, "masks.svg"), masks);
//
// Every figure is at most kWidth px wide, so that the lesson book (a column
// of 660 px at the narrowest width it is read at) draws its 12 px text at
// 12 px, never scaled below 11.
//
// write() throws std::runtime_error (naming the file) when it cannot write,
// or when the data cannot be drawn (a series whose x, y and error bars
// differ in length, an x outside the categories, a ragged heat map, ticks
// or marks that do not fit its cells, numbers in cells too small to read, a
// log axis with a value <= 0).
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lessons::svg {

constexpr double kWidth = 640;

struct Series {
    std::string name;
    std::vector<double> x, y;  // same length; non-finite points are skipped
    // A reference line, not data (y ∝ T² on a log-log plot): grey, without
    // markers, each guide with its own dashes, named in the legend.
    bool guide = false;
    // Error bars: point k spans low[k] … high[k] (over seeds: their min and
    // max). Empty, or as long as y.
    std::vector<double> low{}, high{};
};

// A labelled straight line across the plot: horizontal at y = value (a
// floor, chance level), or vertical at x = value (where training lengths
// end).
struct Reference {
    double value;
    std::string label;
    bool vertical = false;
};

struct LinePlot {
    LinePlot(std::string title_ = "", std::string x_label_ = "", std::string y_label_ = "")
        : title(std::move(title_)), x_label(std::move(x_label_)), y_label(std::move(y_label_)) {}
    std::string title, x_label, y_label;
    std::vector<Series> series;
    std::vector<Reference> references;
    // Named x ticks: x = 0, 1, … are these categories (methods, models), not
    // numbers.
    std::vector<std::string> x_categories;
    bool log_x = false, log_y = false;
    bool markers = false;  // draw each point as a dot too
    // false: a scatter plot, each data point a dot and nothing joining
    // them (markers or not), a dot in the legend; guides stay lines.
    bool lines = true;
    // Pixels between the data series at one x, so that their dots and error
    // bars do not hide each other (0: drawn on top of each other).
    double dodge = 0;
};

// One heat map: values[row][column], drawn row 0 at the top. Colour runs
// from white (lo) to dark blue (hi); lo == hi means the data's own range.
// A map of more than 400 cells without numbers (a 28x28 digit) is drawn as
// one embedded PNG image, its pixels unsmoothed; smaller ones cell by cell.
struct Heatmap {
    std::string caption;
    std::vector<std::vector<double>> values;
    double lo = 0, hi = 0;
    bool numbers = false;  // print each cell's value in it (cells large enough for 12 px digits)
    // A label per column (under the map) and per row (left of it): token
    // positions, tokens. Empty: none.
    std::vector<std::string> x_ticks{}, y_ticks{};
    // Cells (row, column) outlined in orange, named by marked_label under
    // the map: the receptive field's edge, the subject a query finds.
    std::vector<std::pair<size_t, size_t>> marked{};
    std::string marked_label{};
};

struct HeatmapGrid {
    HeatmapGrid(std::string title_ = "", int columns_ = 4) : title(std::move(title_)), columns(columns_) {}
    std::string title;
    int columns = 4;  // panels per row
    std::vector<Heatmap> panels;
    std::string x_label, y_label;  // shared by every panel ("key j", "query t")
    // A heading above each row of panels ("through 2 layers"); empty: none.
    std::vector<std::string> row_titles;
};

// Text for SVG and HTML: & < > " escaped (UTF-8 passes through).
std::string escape(std::string_view text);

void write(const std::filesystem::path& path, const LinePlot& plot);
void write(const std::filesystem::path& path, const HeatmapGrid& grid);

}  // namespace lessons::svg
