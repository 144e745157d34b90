#include "lessons/common/svg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "lessons/common/encode.h"
#include "lessons/common/report.h"
#include "nn/atomic_file.h"

namespace lessons::svg {

std::string escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

namespace {

const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
// Guides are grey, each with its own dashes: the legend tells them apart.
const char* const kGuideColour = "#666";
const char* const kGuideDashes[] = {"8 4", "2 3"};

std::string label(double v) { return fmt::format("{:.4g}", v); }

// Characters on screen (report.h's display_width), to size text boxes:
// about 7 px each at 12 px, 8 at 15 px.
double text_chars(const std::string& s) { return static_cast<double>(display_width(s)); }

// Through a temporary file and a rename, as every output: a reader (the
// lesson book, a browser) sees the old figure or the new one, never half.
void save(const std::filesystem::path& path, const std::string& body, double width, double height) {
    const std::string svg = fmt::format(
                                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
                                "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n"
                                "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                                width, height, width, height) +
                            body + "</svg>\n";
    try {
        nn::write_file_atomically(path, {svg});
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot write the figure " + path.string() + ": " + e.what());
    }
}

// An axis from data range [lo, hi] to pixels [p0, p1], linear or log10.
struct Axis {
    double lo, hi, p0, p1;
    bool log;
    double t(double v) const { return log ? std::log10(v) : v; }
    double px(double v) const { return p0 + (t(v) - t(lo)) / (t(hi) - t(lo)) * (p1 - p0); }

    // About five round tick values inside [lo, hi]. On a log axis enough to
    // read a value off: 1, 2, 5 in every decade over up to three decades
    // (1, 2, 3, 5, 7 within one), powers of ten over more.
    std::vector<double> ticks() const {
        std::vector<double> out;
        if (log) {
            const double decades = std::log10(hi) - std::log10(lo);
            const std::vector<double> steps = decades <= 1   ? std::vector<double>{1, 2, 3, 5, 7}
                                              : decades <= 3 ? std::vector<double>{1, 2, 5}
                                                             : std::vector<double>{1};
            for (double e = std::floor(std::log10(lo)); e <= std::ceil(std::log10(hi)); ++e)
                for (const double m : steps) {
                    const double v = m * std::pow(10.0, e);
                    if (v >= lo * (1 - 1e-12) && v <= hi * (1 + 1e-12)) out.push_back(v);
                }
            if (out.size() < 2) out = {lo, hi};
            return out;
        }
        const double raw = (hi - lo) / 5, mag = std::pow(10.0, std::floor(std::log10(raw)));
        const double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
        for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step)
            out.push_back(std::abs(v) < 1e-12 * step ? 0.0 : v);
        return out;
    }
};

// The data range of one coordinate over every series, widened when flat.
std::pair<double, double> range(const LinePlot& plot, bool x, bool log, const std::filesystem::path& path) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const Series& s : plot.series)
        for (double v : x ? s.x : s.y) {
            if (!std::isfinite(v)) continue;
            if (log && v <= 0)
                throw std::runtime_error(fmt::format("figure {}: value {} on a log axis", path.string(), v));
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    if (!(lo <= hi)) return {log ? 0.1 : 0.0, 1.0};
    if (lo == hi) return log ? std::pair{lo / 2, hi * 2} : std::pair{lo - 0.5, hi + 0.5};
    return {lo, hi};
}

}  // namespace

void write(const std::filesystem::path& path, const LinePlot& plot) {
    for (const Series& s : plot.series)
        if (s.x.size() != s.y.size())
            throw std::runtime_error(fmt::format("figure {}: series '{}' has {} x and {} y values", path.string(),
                                                 s.name, s.x.size(), s.y.size()));
    // The plot area is 440 px wide; the legend's column on its right fits
    // the longest series name, and the figure is as wide as its title.
    double longest = 0;
    for (const Series& s : plot.series) longest = std::max(longest, text_chars(s.name));
    const double height = 420, left = 70, top = 40, bottom = 55, right = std::max(170.0, 46.0 + 7.0 * longest);
    const double width = std::max(left + 440 + right, left + 8.0 * text_chars(plot.title) + 10);
    const auto [x0, x1] = range(plot, true, plot.log_x, path);
    const auto [y0, y1] = range(plot, false, plot.log_y, path);
    const Axis ax{x0, x1, left, width - right, plot.log_x}, ay{y0, y1, height - bottom, top, plot.log_y};

    std::string body = fmt::format("<text x=\"{}\" y=\"24\" font-size=\"15\">{}</text>\n", left, escape(plot.title));
    for (double v : ax.ticks())
        body += fmt::format(
            "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#ddd\"/>"
            "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
            ax.px(v), top, height - bottom, height - bottom + 16, label(v));
    for (double v : ay.ticks())
        body += fmt::format(
            "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
            "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
            left, width - right, ay.px(v), left - 6, ay.px(v) + 4, label(v));
    body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", left,
                        top, width - right - left, height - bottom - top);
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (left + width - right) / 2,
                        height - 15, escape(plot.x_label));
    body += fmt::format("<text transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                        (top + height - bottom) / 2, escape(plot.y_label));

    size_t data = 0, guides = 0;  // series of each kind so far
    for (size_t i = 0; i < plot.series.size(); ++i) {
        const Series& s = plot.series[i];
        const char* colour = s.guide ? kGuideColour : kPalette[data++ % std::size(kPalette)];
        const std::string dashes =
            s.guide ? fmt::format(" stroke-dasharray=\"{}\"", kGuideDashes[guides++ % std::size(kGuideDashes)]) : "";
        const bool line = plot.lines || s.guide, dots = !s.guide && (plot.markers || !plot.lines);
        const auto dot = [&](double x, double y, double radius) {
            body += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"/>\n", x, y, radius, colour);
        };
        std::string points;
        for (size_t k = 0; k < s.x.size(); ++k) {
            if (!std::isfinite(s.x[k]) || !std::isfinite(s.y[k])) continue;
            points += fmt::format("{:.1f},{:.1f} ", ax.px(s.x[k]), ay.px(s.y[k]));
            if (dots) dot(ax.px(s.x[k]), ay.px(s.y[k]), plot.lines ? 3 : 4);
        }
        if (line)
            body += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"{}/>\n",
                                points, colour, dashes);
        const double ly = top + 10 + 18 * static_cast<double>(i);
        if (line)
            body +=
                fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>",
                            width - right + 10, width - right + 30, ly, colour, dashes);
        else
            dot(width - right + 20, ly, 4);
        body += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", width - right + 36, ly + 4, escape(s.name));
    }
    save(path, body, width, height);
}

namespace {

struct Rgb {
    uint8_t r, g, b;
};

// White (lo) to dark blue (hi); a non-finite cell grey.
Rgb cell_colour(double v, double lo, double hi) {
    if (!std::isfinite(v)) return {0xbb, 0xbb, 0xbb};
    const double f = std::clamp((v - lo) / (hi - lo), 0.0, 1.0);
    return {static_cast<uint8_t>(255 - 225 * f), static_cast<uint8_t>(255 - 175 * f),
            static_cast<uint8_t>(255 - 90 * f)};
}

// A map larger than this is drawn as one embedded PNG, not one rectangle per
// cell: a 28x28 digit would be 784 rectangles (about 90 KB of SVG), its PNG
// is about 1 KB.
constexpr size_t kMostRectangles = 400;

template <class Colour>
std::string raster(const std::vector<std::vector<double>>& values, Colour colour, double x, double y, double cell) {
    const size_t rows = values.size(), cols = values[0].size();
    std::vector<uint8_t> rgb;
    rgb.reserve(rows * cols * 3);
    for (const auto& row : values)
        for (double v : row) {
            const Rgb c = colour(v);
            rgb.insert(rgb.end(), {c.r, c.g, c.b});
        }
    const std::string png = encode::png_rgb(static_cast<int64_t>(cols), static_cast<int64_t>(rows), rgb);
    return fmt::format(
        "<image x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.2f}\" preserveAspectRatio=\"none\" "
        "style=\"image-rendering:pixelated\" href=\"data:image/png;base64,{}\"/>\n",
        x, y, cell * static_cast<double>(cols), cell * static_cast<double>(rows), encode::base64(png));
}

}  // namespace

void write(const std::filesystem::path& path, const HeatmapGrid& grid) {
    if (grid.columns < 1) throw std::runtime_error("figure " + path.string() + ": columns must be >= 1");
    // Every panel is drawn in the same box, as many cells wide and tall as
    // the largest panel; its cells are square, the box's longer side 220 px.
    size_t max_rows = 1, max_cols = 1;
    for (const Heatmap& h : grid.panels) {
        max_rows = std::max(max_rows, h.values.size());
        for (const auto& row : h.values) {
            if (row.size() != h.values[0].size())
                throw std::runtime_error(
                    fmt::format("figure {}: panel '{}' has rows of different lengths", path.string(), h.caption));
            max_cols = std::max(max_cols, row.size());
        }
    }
    const double cell = 220 / static_cast<double>(std::max(max_rows, max_cols));
    const double box_w = cell * static_cast<double>(max_cols), box_h = cell * static_cast<double>(max_rows);
    const double pad = 40, top = 50;
    const size_t columns = static_cast<size_t>(grid.columns);
    const size_t rows_of_panels = (grid.panels.size() + columns - 1) / columns;
    const double width = std::max(pad + static_cast<double>(std::min(columns, grid.panels.size())) * (box_w + pad),
                                  pad + 8.0 * text_chars(grid.title) + 10);
    const double height = top + static_cast<double>(rows_of_panels) * (box_h + pad + 20);

    std::string body = fmt::format("<text x=\"{}\" y=\"24\" font-size=\"15\">{}</text>\n", pad, escape(grid.title));
    for (size_t p = 0; p < grid.panels.size(); ++p) {
        const Heatmap& h = grid.panels[p];
        const double ox = pad + static_cast<double>(p % columns) * (box_w + pad);
        const double oy = top + static_cast<double>(p / columns) * (box_h + pad + 20);
        double lo = h.lo, hi = h.hi;
        if (lo == hi) {
            lo = std::numeric_limits<double>::infinity(), hi = -lo;
            for (const auto& row : h.values)
                for (double v : row)
                    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
            if (!(lo < hi)) hi = lo + 1;
        }
        body += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", ox, oy - 6, escape(h.caption));
        const auto colour = [&](double v) { return cell_colour(v, lo, hi); };
        if (!h.numbers && !h.values.empty() && h.values.size() * h.values[0].size() > kMostRectangles) {
            body += raster(h.values, colour, ox, oy, cell);
        } else {
            for (size_t r = 0; r < h.values.size(); ++r)
                for (size_t c = 0; c < h.values[r].size(); ++c) {
                    const double v = h.values[r][c];
                    const Rgb rgb = colour(v);
                    const double f = std::isfinite(v) ? std::clamp((v - lo) / (hi - lo), 0.0, 1.0) : 0.0;
                    const double x = ox + static_cast<double>(c) * cell, y = oy + static_cast<double>(r) * cell;
                    body += fmt::format(
                        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"rgb({},{},{})\" "
                        "stroke=\"#eee\" stroke-width=\"0.5\"/>\n",
                        x, y, cell, cell, rgb.r, rgb.g, rgb.b);
                    if (h.numbers)
                        body += fmt::format(
                            "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{:.0f}\" text-anchor=\"middle\" "
                            "fill=\"{}\">{}</text>\n",
                            x + cell / 2, y + cell * 0.65, std::min(12.0, cell * 0.4), f > 0.6 ? "white" : "black",
                            label(v));
                }
        }
        if (!grid.x_label.empty())
            body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\">{}</text>\n",
                                ox + box_w / 2, oy + box_h + 14, escape(grid.x_label));
        if (!grid.y_label.empty())
            body += fmt::format(
                "<text transform=\"translate({} {}) rotate(-90)\" text-anchor=\"middle\" "
                "font-size=\"10\">{}</text>\n",
                ox - 6, oy + box_h / 2, escape(grid.y_label));
    }
    save(path, body, width, height);
}

}  // namespace lessons::svg
