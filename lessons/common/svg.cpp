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

// `text` broken at spaces into lines of at most `chars` characters (a
// longer word keeps a line of its own).
std::vector<std::string> wrap(const std::string& text, double chars) {
    std::vector<std::string> lines{""};
    size_t at = 0;
    while (at < text.size()) {
        const size_t space = std::min(text.find(' ', at), text.size());
        const std::string word = text.substr(at, space - at);
        if (!lines.back().empty() && text_chars(lines.back()) + 1 + text_chars(word) > chars) lines.emplace_back();
        lines.back() += (lines.back().empty() ? "" : " ") + word;
        at = space + 1;
    }
    return lines;
}

// A figure's title at 15 px from y = 24 on, wrapped to the figure's width;
// returns the y its content starts at.
double draw_title(std::string& body, const std::string& title, double width) {
    const std::vector<std::string> lines = wrap(title, (width - 20) / 8);
    for (size_t i = 0; i < lines.size(); ++i)
        body += fmt::format("<text x=\"10\" y=\"{}\" font-size=\"15\">{}</text>\n", 24 + 19 * i, escape(lines[i]));
    return 24 + 19 * static_cast<double>(lines.size() - 1) + 22;
}

// Text drawn over data, with a white halo so that lines under it do not
// cross it out.
const char* const kHalo = " stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\"";

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

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& why) {
    throw std::runtime_error("figure " + path.string() + ": " + why);
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

// The range of one coordinate over every series (their error bars too) and
// the references across it, widened when flat. The y range (and a dodged x
// range) has a margin of 4% at each end, so that no point or bar sits on the
// frame.
std::pair<double, double> range(const LinePlot& plot, bool x, const std::filesystem::path& path) {
    const bool log = x ? plot.log_x : plot.log_y;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    const auto add = [&](double v) {
        if (!std::isfinite(v)) return;
        if (log && v <= 0) refuse(path, fmt::format("value {} on a log axis", v));
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    };
    for (const Series& s : plot.series)
        for (const auto* values : x ? std::vector{&s.x} : std::vector{&s.y, &s.low, &s.high})
            for (double v : *values) add(v);
    for (const Reference& ref : plot.references)
        if (ref.vertical == x) add(ref.value);
    if (x && !plot.x_categories.empty()) return {-0.5, static_cast<double>(plot.x_categories.size()) - 0.5};
    if (!(lo <= hi)) return {log ? 0.1 : 0.0, 1.0};
    if (lo == hi) return log ? std::pair{lo / 2, hi * 2} : std::pair{lo - 0.5, hi + 0.5};
    // x needs the margin only when dodged points sit left and right of it
    if (x && plot.dodge == 0) return {lo, hi};
    if (log) {
        const double margin = std::pow(hi / lo, 0.04);
        return {lo / margin, hi * margin};
    }
    return {lo - 0.04 * (hi - lo), hi + 0.04 * (hi - lo)};
}

void check(const LinePlot& plot, const std::filesystem::path& path) {
    if (!plot.x_categories.empty() && plot.log_x) refuse(path, "categories on a log axis");
    for (const Series& s : plot.series) {
        if (s.x.size() != s.y.size())
            refuse(path, fmt::format("series '{}' has {} x and {} y values", s.name, s.x.size(), s.y.size()));
        if (s.low.size() != s.high.size() || (!s.low.empty() && s.low.size() != s.y.size()))
            refuse(path, fmt::format("series '{}' has {} y values, {} low and {} high error bars", s.name, s.y.size(),
                                     s.low.size(), s.high.size()));
        for (size_t k = 0; k < s.low.size(); ++k)
            if (s.low[k] > s.high[k])
                refuse(path, fmt::format("series '{}': error bar {} runs from {} down to {}", s.name, k, s.low[k],
                                         s.high[k]));
        if (!plot.x_categories.empty())
            for (double v : s.x)
                if (v != std::round(v) || v < 0 || v >= static_cast<double>(plot.x_categories.size()))
                    refuse(path, fmt::format("series '{}': x = {} is none of the {} categories", s.name, v,
                                             plot.x_categories.size()));
    }
}

}  // namespace

void write(const std::filesystem::path& path, const LinePlot& plot) {
    check(plot, path);
    // kWidth wide: the legend in a column right of the plot, as wide as the
    // longest series name, or under it when that column would leave the plot
    // less than 340 px.
    double longest = 0;
    for (const Series& s : plot.series) longest = std::max(longest, text_chars(s.name));
    const double left = 70, legend_column = 46 + 7 * longest;
    const bool legend_right = kWidth - left - legend_column >= 340;
    const double right = legend_right ? legend_column : 20;
    std::string body;
    const double top = draw_title(body, plot.title, kWidth), plot_bottom = top + 300;
    const auto [x0, x1] = range(plot, true, path);
    const auto [y0, y1] = range(plot, false, path);
    const Axis ax{x0, x1, left, kWidth - right, plot.log_x}, ay{y0, y1, plot_bottom, top, plot.log_y};

    // x ticks: round numbers, or the categories' names (wrapped to the space
    // between two of them)
    size_t tick_lines = 1;
    const auto x_tick = [&](double at, const std::string& text) {
        const double space = (ax.p1 - ax.p0) / std::max<double>(1, static_cast<double>(plot.x_categories.size()));
        const std::vector<std::string> lines = plot.x_categories.empty() ? std::vector{text} : wrap(text, space / 7);
        tick_lines = std::max(tick_lines, lines.size());
        body += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#ddd\"/>\n", ax.px(at),
                            top, plot_bottom);
        for (size_t i = 0; i < lines.size(); ++i)
            body += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", ax.px(at),
                                plot_bottom + 16 + 14 * static_cast<double>(i), escape(lines[i]));
    };
    if (plot.x_categories.empty())
        for (double v : ax.ticks()) x_tick(v, label(v));
    else
        for (size_t c = 0; c < plot.x_categories.size(); ++c) x_tick(static_cast<double>(c), plot.x_categories[c]);
    for (double v : ay.ticks())
        body += fmt::format(
            "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
            "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
            left, ax.p1, ay.px(v), left - 6, ay.px(v) + 4, label(v));
    body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", left,
                        top, ax.p1 - left, plot_bottom - top);
    const double x_label_y = plot_bottom + 16 + 14 * static_cast<double>(tick_lines - 1) + 22;
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (left + ax.p1) / 2, x_label_y,
                        escape(plot.x_label));
    body += fmt::format("<text transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                        (top + plot_bottom) / 2, escape(plot.y_label));

    // references: a dark dashed line, its label at one end, over the data
    for (const Reference& ref : plot.references) {
        const std::string line = "stroke=\"#333\" stroke-width=\"1.2\" stroke-dasharray=\"6 3\"";
        if (ref.vertical) {
            const double x = ax.px(ref.value);
            const bool room_right = ax.p1 - x > 7 * text_chars(ref.label) + 8;
            body += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" {3}/>\n", x, top,
                                plot_bottom, line);
            body += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"{}\" fill=\"#333\"{}>{}</text>\n",
                                room_right ? x + 4 : x - 4, plot_bottom - 6, room_right ? "start" : "end", kHalo,
                                escape(ref.label));
        } else {
            const double y = ay.px(ref.value);
            body +=
                fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" {3}/>\n", left, ax.p1, y, line);
            body += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#333\"{}>{}</text>\n",
                                ax.p1 - 4, y > top + 16 ? y - 4 : y + 14, kHalo, escape(ref.label));
        }
    }

    size_t data_series = 0;
    for (const Series& s : plot.series) data_series += s.guide ? 0 : 1;
    const double legend_x = legend_right ? ax.p1 + 10 : left, legend_y = legend_right ? top + 10 : x_label_y + 22;
    size_t data = 0, guides = 0;  // series of each kind so far
    for (size_t i = 0; i < plot.series.size(); ++i) {
        const Series& s = plot.series[i];
        const double shift =
            s.guide ? 0 : (static_cast<double>(data) - (static_cast<double>(data_series) - 1) / 2) * plot.dodge;
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
            const double x = ax.px(s.x[k]) + shift;
            points += fmt::format("{:.1f},{:.1f} ", x, ay.px(s.y[k]));
            if (dots) dot(x, ay.px(s.y[k]), plot.lines ? 3 : 4);
            if (!s.low.empty() && std::isfinite(s.low[k]) && std::isfinite(s.high[k]))
                body += fmt::format(
                    "<path d=\"M{0:.1f} {1:.1f}V{2:.1f}M{3:.1f} {1:.1f}H{4:.1f}M{3:.1f} {2:.1f}H{4:.1f}\" "
                    "stroke=\"{5}\" stroke-width=\"1.5\" fill=\"none\"/>\n",
                    x, ay.px(s.low[k]), ay.px(s.high[k]), x - 4, x + 4, colour);
        }
        if (line)
            body += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"{}/>\n",
                                points, colour, dashes);
        const double ly = legend_y + 18 * static_cast<double>(i);
        if (line)
            body +=
                fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>",
                            legend_x, legend_x + 20, ly, colour, dashes);
        else
            dot(legend_x + 10, ly, 4);
        body += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", legend_x + 26, ly + 4, escape(s.name));
    }
    const double legend_end = legend_right ? 0 : legend_y + 18 * static_cast<double>(plot.series.size());
    save(path, body, kWidth, std::max(x_label_y + 12, legend_end));
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

// Every panel is drawn in the same box, as many cells wide and tall as the
// largest panel, with room for the largest panel's ticks.
struct GridLayout {
    size_t rows = 1, cols = 1;              // cells of the largest panel
    double cell = 0, box_w = 0, box_h = 0;  // px
    double tick_w = 0;                      // the row ticks' column, left of a box
    double tick_h = 0;                      // the column ticks' band, under a box
    bool upright = false;                   // column ticks turned to read upwards
    size_t every = 1;                       // ticks on every `every`th row and column only
    double caption_h = 0, under_h = 0, slot_w = 0, slot_h = 0;
};

// Ticks and numbers at 12 px need cells of 13 px at least (one tick per
// line of text): more cells than fit are labelled every other (or every
// fifth …) one.
constexpr double kTickSpacing = 13;

GridLayout layout(const HeatmapGrid& grid, const std::filesystem::path& path) {
    if (grid.columns < 1) refuse(path, "columns must be >= 1");
    if (!grid.row_titles.empty() &&
        grid.row_titles.size() != (grid.panels.size() + static_cast<size_t>(grid.columns) - 1) / grid.columns)
        refuse(path, fmt::format("{} row titles for {} rows of panels", grid.row_titles.size(),
                                 (grid.panels.size() + static_cast<size_t>(grid.columns) - 1) / grid.columns));
    GridLayout g;
    double x_tick_chars = 0, y_tick_chars = 0;
    bool ticks = false, marked_label = false;
    for (const Heatmap& h : grid.panels) {
        const size_t cols = h.values.empty() ? 0 : h.values[0].size();
        g.rows = std::max(g.rows, h.values.size());
        for (const auto& row : h.values) {
            if (row.size() != cols) refuse(path, fmt::format("panel '{}' has rows of different lengths", h.caption));
            g.cols = std::max(g.cols, row.size());
        }
        if (!h.x_ticks.empty() && h.x_ticks.size() != cols)
            refuse(path, fmt::format("panel '{}' has {} columns and {} x ticks", h.caption, cols, h.x_ticks.size()));
        if (!h.y_ticks.empty() && h.y_ticks.size() != h.values.size())
            refuse(path,
                   fmt::format("panel '{}' has {} rows and {} y ticks", h.caption, h.values.size(), h.y_ticks.size()));
        for (const auto& [r, c] : h.marked)
            if (r >= h.values.size() || c >= cols)
                refuse(path, fmt::format("panel '{}': marked cell ({}, {}) is outside its {}x{} cells", h.caption, r, c,
                                         h.values.size(), cols));
        for (const std::string& t : h.x_ticks) x_tick_chars = std::max(x_tick_chars, text_chars(t));
        for (const std::string& t : h.y_ticks) y_tick_chars = std::max(y_tick_chars, text_chars(t));
        ticks = ticks || !h.x_ticks.empty() || !h.y_ticks.empty();
        marked_label = marked_label || !h.marked_label.empty();
    }
    const size_t columns = std::max<size_t>(1, std::min(static_cast<size_t>(grid.columns), grid.panels.size()));
    const double gap = 24, y_label_w = grid.y_label.empty() ? 0 : 16;
    g.tick_w = y_tick_chars > 0 ? 7 * y_tick_chars + 6 : 0;
    // The box's longer side is 220 px, more when ticks want 20 px cells,
    // less when the panels would not fit in kWidth side by side.
    const double widest_box = (kWidth - 10) / static_cast<double>(columns) - gap - y_label_w - g.tick_w;
    const double longer = static_cast<double>(std::max(g.rows, g.cols));
    g.cell = std::min(std::max(220.0, ticks ? 20 * longer : 0.0) / longer, widest_box / static_cast<double>(g.cols));
    g.box_w = g.cell * static_cast<double>(g.cols), g.box_h = g.cell * static_cast<double>(g.rows);
    g.every = static_cast<size_t>(std::ceil(kTickSpacing / g.cell - 1e-9));
    g.upright = 7 * x_tick_chars + 4 > g.cell * static_cast<double>(g.every);
    g.tick_h = x_tick_chars == 0 ? 0 : g.upright ? 7 * x_tick_chars + 8 : 16;
    for (const Heatmap& h : grid.panels)
        if (h.numbers)
            for (const auto& row : h.values)
                for (double v : row)
                    if (g.cell < std::max(16.0, 7 * text_chars(label(v)) + 4))
                        refuse(path, fmt::format("panel '{}': cells of {:.0f} px are too small to print {} in",
                                                 h.caption, g.cell, label(v)));
    // captions wrapped to the box (every panel given as many lines as the
    // longest), then under the box its ticks, the axis label, the marks' label
    size_t caption_lines = 0;
    for (const Heatmap& h : grid.panels)
        if (!h.caption.empty())
            caption_lines = std::max(caption_lines, wrap(h.caption, (g.box_w + g.tick_w + gap) / 7).size());
    g.caption_h = 16 * static_cast<double>(caption_lines) + 4;
    g.under_h = g.tick_h + (grid.x_label.empty() ? 0 : 18) + (marked_label ? 18 : 0);
    g.slot_w = y_label_w + g.tick_w + g.box_w + gap;
    g.slot_h = (grid.row_titles.empty() ? 0 : 22) + g.caption_h + g.box_h + g.under_h + gap;
    return g;
}

const char* const kMarkColour = "#ff7f0e";

}  // namespace

void write(const std::filesystem::path& path, const HeatmapGrid& grid) {
    const GridLayout g = layout(grid, path);
    const size_t columns = static_cast<size_t>(grid.columns);
    const size_t rows_of_panels = (grid.panels.size() + columns - 1) / columns;
    // as wide as its panels, or as its title up to kWidth (wrapped there)
    const double width = std::max(10 + static_cast<double>(std::min(columns, grid.panels.size())) * g.slot_w,
                                  std::min(kWidth, 8 * text_chars(grid.title) + 20));
    std::string body;
    const double top = draw_title(body, grid.title, width) - 10;
    const double height = top + static_cast<double>(rows_of_panels) * g.slot_h;
    const double cell = g.cell;

    for (size_t p = 0; p < grid.panels.size(); ++p) {
        const Heatmap& h = grid.panels[p];
        const double slot_x = 10 + static_cast<double>(p % columns) * g.slot_w;
        double y = top + static_cast<double>(p / columns) * g.slot_h;
        if (!grid.row_titles.empty()) {
            if (p % columns == 0)
                body += fmt::format("<text x=\"10\" y=\"{}\" font-size=\"13\" font-weight=\"bold\">{}</text>\n", y + 16,
                                    escape(grid.row_titles[p / columns]));
            y += 22;
        }
        const double ox = slot_x + (grid.y_label.empty() ? 0 : 16) + g.tick_w;
        const std::vector<std::string> caption = wrap(h.caption, (g.box_w + g.tick_w + 24) / 7);
        for (size_t i = 0; i < caption.size(); ++i)
            body += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", slot_x, y + 12 + 16 * static_cast<double>(i),
                                escape(caption[i]));
        const double oy = y + g.caption_h;
        double lo = h.lo, hi = h.hi;
        if (lo == hi) {
            lo = std::numeric_limits<double>::infinity(), hi = -lo;
            for (const auto& row : h.values)
                for (double v : row)
                    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
            if (!(lo < hi)) hi = lo + 1;
        }
        const auto colour = [&](double v) { return cell_colour(v, lo, hi); };
        if (!h.numbers && !h.values.empty() && h.values.size() * h.values[0].size() > kMostRectangles) {
            body += raster(h.values, colour, ox, oy, cell);
        } else {
            for (size_t r = 0; r < h.values.size(); ++r)
                for (size_t c = 0; c < h.values[r].size(); ++c) {
                    const double v = h.values[r][c];
                    const Rgb rgb = colour(v);
                    const double f = std::isfinite(v) ? std::clamp((v - lo) / (hi - lo), 0.0, 1.0) : 0.0;
                    const double x = ox + static_cast<double>(c) * cell, cy = oy + static_cast<double>(r) * cell;
                    body += fmt::format(
                        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"rgb({},{},{})\" "
                        "stroke=\"#eee\" stroke-width=\"0.5\"/>\n",
                        x, cy, cell, cell, rgb.r, rgb.g, rgb.b);
                    if (h.numbers)
                        body += fmt::format(
                            "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"{}\">{}</text>\n",
                            x + cell / 2, cy + cell / 2 + 4, f > 0.6 ? "white" : "black", label(v));
                }
        }
        for (const auto& [r, c] : h.marked)
            body += fmt::format(
                "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"none\" stroke=\"{}\" "
                "stroke-width=\"2.5\"/>\n",
                ox + static_cast<double>(c) * cell + 1, oy + static_cast<double>(r) * cell + 1, cell - 2, cell - 2,
                kMarkColour);
        const double bottom = oy + g.box_h;
        for (size_t c = 0; c < h.x_ticks.size(); c += g.every) {
            const double x = ox + (static_cast<double>(c) + 0.5) * cell;
            body += g.upright ? fmt::format(
                                    "<text transform=\"translate({:.1f} {:.1f}) rotate(-90)\" text-anchor=\"end\">{}"
                                    "</text>\n",
                                    x + 4, bottom + 4, escape(h.x_ticks[c]))
                              : fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x,
                                            bottom + 13, escape(h.x_ticks[c]));
        }
        for (size_t r = 0; r < h.y_ticks.size(); r += g.every)
            body += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", ox - 4,
                                oy + (static_cast<double>(r) + 0.5) * cell + 4, escape(h.y_ticks[r]));
        double under = bottom + g.tick_h;
        if (!grid.x_label.empty()) {
            body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", ox + g.box_w / 2,
                                under + 14, escape(grid.x_label));
            under += 18;
        }
        if (!h.marked_label.empty())
            body += fmt::format(
                "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"none\" stroke=\"{}\" stroke-width=\"2.5\"/>"
                "<text x=\"{}\" y=\"{}\">{}</text>\n",
                ox, under + 4, kMarkColour, ox + 16, under + 13, escape(h.marked_label));
        if (!grid.y_label.empty())
            body += fmt::format("<text transform=\"translate({} {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                                slot_x + 10, oy + g.box_h / 2, escape(grid.y_label));
    }
    save(path, body, width, height);
}

}  // namespace lessons::svg
