#include "lessons/common/report.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include <fmt/ranges.h>

#include "lessons/common/math.h"

namespace lessons {
namespace {

using Json = nlohmann::ordered_json;  // keys in the order they were recorded

std::string pad(const std::string& s, size_t width, bool right) {
    const std::string fill(width - std::min(width, display_width(s)), ' ');
    return right ? fill + s : s + fill;
}

// A cell as its JSON value: text, whole number, real number (NaN and Inf
// as null) or true/false.
Json cell_json(const Cell& cell) {
    return std::visit([](const auto& v) { return Json(v); }, cell.value);
}

Json table_json(const Table& t) {
    Json rows = Json::array();
    for (const auto& row : t.rows) {
        Json cells = Json::array();
        for (const auto& cell : row) cells.push_back(cell_json(cell));
        rows.push_back(std::move(cells));
    }
    return {{"columns", t.columns}, {"rows", std::move(rows)}};
}

Json members_json(const std::vector<std::pair<std::string, Cell>>& cells) {
    Json members = Json::object();
    for (const auto& [key, cell] : cells) members[key] = cell_json(cell);
    return members;
}

// The terminal's width when `out` is one, else $COLUMNS, else 100; kept
// between 40 and 120 so that a paragraph stays readable.
size_t text_width(std::FILE* out) {
    size_t width = 100;
    winsize size{};
    if (out && isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
        width = size.ws_col;
    } else if (const char* columns = std::getenv("COLUMNS")) {
        char* end = nullptr;
        const long n = std::strtol(columns, &end, 10);
        if (end != columns && *end == '\0' && n > 0) width = static_cast<size_t>(n);
    }
    return std::clamp<size_t>(width, 40, 120);
}

// Greedy line filling at spaces; a word longer than the width has a line
// of its own.
std::vector<std::string> wrap(std::string_view text, size_t width) {
    std::vector<std::string> lines;
    std::string line;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find(' ', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view word = text.substr(start, end - start);
        start = end + 1;
        if (word.empty()) continue;
        if (!line.empty() && display_width(line) + 1 + display_width(word) > width) {
            lines.push_back(std::move(line));
            line.clear();
        }
        if (!line.empty()) line += ' ';
        line += word;
    }
    if (!line.empty()) lines.push_back(std::move(line));
    return lines;
}

// The table's lines as the terminal prints them: numbers right-aligned,
// text left-aligned, a header following its column's first row, two
// spaces before every column.
std::vector<std::string> table_lines(const Table& t) {
    const std::vector<std::vector<std::string>> texts = printed_cells(t);
    std::vector<std::string> headers;
    std::vector<size_t> width;
    for (const auto& c : t.columns) {
        headers.push_back(math::plain(c));
        width.push_back(display_width(headers.back()));
    }
    for (const auto& row : texts)
        for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
    std::vector<std::string> lines;
    const auto add_row = [&](const std::vector<std::string>& cells, size_t row_for_alignment) {
        std::string line;
        for (size_t c = 0; c < cells.size(); ++c) {
            const bool right = row_for_alignment < t.rows.size() && t.rows[row_for_alignment][c].is_number();
            line += "  " + pad(cells[c], width[c], right);
        }
        lines.push_back(line.substr(0, line.find_last_not_of(' ') + 1));
    };
    std::vector<std::string> rule;
    for (const size_t w : width) rule.emplace_back(w, '-');
    add_row(headers, 0);
    add_row(rule, 0);
    for (size_t r = 0; r < t.rows.size(); ++r) add_row(texts[r], r);
    return lines;
}

// A table's rows all as wide as its header, its headers' formulas sound.
void check_table(const Table& t) {
    for (const auto& row : t.rows)
        if (row.size() != t.columns.size())
            throw std::logic_error(
                fmt::format("table '{}': a row has {} cells for {} columns", t.name, row.size(), t.columns.size()));
    for (const auto& c : t.columns) math::plain(c);  // a bad formula throws here
}

}  // namespace

size_t display_width(std::string_view s) {
    return static_cast<size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string count_of(int64_t n, const std::string& noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

// ---- Cell ------------------------------------------------------------------

bool Cell::is_number() const {
    return std::holds_alternative<long long>(value) || std::holds_alternative<double>(value);
}

double Cell::number() const {
    if (const auto* n = std::get_if<long long>(&value)) return static_cast<double>(*n);
    if (const auto* x = std::get_if<double>(&value)) return *x;
    throw std::logic_error("cell '" + str() + "' is not a number");
}

// Six significant digits; magnitudes below 1e-4 or from 1e6 on in
// scientific notation, so that 3.2e-11 does not print as 0.
bool Cell::needs_scientific() const {
    const auto* x = std::get_if<double>(&value);
    const double a = x ? std::fabs(*x) : 0.0;
    return a != 0.0 && std::isfinite(a) && (a < 1e-4 || a >= 1e6);
}

std::string Cell::str(bool scientific) const {
    if (const auto* x = std::get_if<double>(&value))
        return (scientific || needs_scientific()) && *x != 0.0 ? fmt::format("{:.2e}", *x)
                                                               : with_separators(fmt::format("{:.6g}", *x));
    if (const auto* n = std::get_if<long long>(&value)) return with_separators(fmt::format("{}", *n));
    if (const auto* b = std::get_if<bool>(&value)) return *b ? "yes" : "no";
    return std::get<std::string>(value);
}

std::string with_separators(std::string number) {
    const size_t start = number.find_first_of("0123456789");
    if (start == std::string::npos) return number;
    size_t end = start;
    while (end < number.size() && std::isdigit(static_cast<unsigned char>(number[end]))) ++end;
    if (end < number.size() && number[end] != '.') return number;  // 1e+06, not a plain number
    for (size_t at = end; at > start + 3; at -= 3) number.insert(at - 3, ",");
    return number;
}

size_t word_count(std::string_view text) {
    const std::string shown = math::plain(text);
    size_t words = 0;
    bool in_word = false;
    for (const char c : shown) {
        const bool space = c == ' ' || c == '\n';
        words += !space && !in_word;
        in_word = !space;
    }
    return words;
}

// ---- records -----------------------------------------------------------------

std::vector<std::vector<std::string>> printed_cells(const Table& t) {
    const size_t columns = t.columns.size();
    std::vector<bool> real(columns, false), scientific(columns, false);
    std::vector<int> decimals(columns, 0);
    for (const auto& row : t.rows)
        for (size_t c = 0; c < row.size() && c < columns; ++c) {
            const auto* x = std::get_if<double>(&row[c].value);
            if (!x) continue;
            real[c] = true;
            if (row[c].needs_scientific()) scientific[c] = true;
            if (*x == 0.0 || !std::isfinite(*x)) continue;
            // Four decimals, or three significant digits below 0.01, but no
            // more than the value's shortest form has (0.78, not 0.7800).
            const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(*x))));
            const std::string shortest = fmt::format("{:.6g}", *x);
            const size_t point = shortest.find('.');
            const int own = point == std::string::npos ? 0 : static_cast<int>(shortest.size() - point - 1);
            decimals[c] = std::max(decimals[c], std::min({own, std::max(4, 2 - magnitude), 6}));
        }
    std::vector<std::vector<std::string>> texts;
    for (const auto& row : t.rows) {
        texts.emplace_back();
        for (size_t c = 0; c < row.size(); ++c) {
            const Cell& cell = row[c];
            std::string text;
            if (c < columns && real[c] && cell.is_number() && !scientific[c] && std::isfinite(cell.number()))
                text = with_separators(fmt::format("{:.{}f}", cell.number(), decimals[c]));
            else
                text = cell.str(c < columns && scientific[c]);
            texts.back().push_back(std::move(text));
        }
    }
    return texts;
}

const Cell& Table::at(size_t row, const std::string& column) const {
    const auto c = std::find(columns.begin(), columns.end(), column);
    if (c == columns.end()) throw std::out_of_range("table '" + name + "' has no column '" + column + "'");
    return rows.at(row).at(static_cast<size_t>(c - columns.begin()));
}

const Cell& PartRecord::value(const std::string& key) const {
    for (const auto& [k, cell] : values)
        if (k == key) return cell;
    throw std::out_of_range(fmt::format("part {} recorded no value '{}'", number, key));
}

const Claim& PartRecord::claim(const std::string& key) const {
    for (const auto& c : claims)
        if (c.key == key) return c;
    throw std::out_of_range(fmt::format("part {} recorded no claim '{}'", number, key));
}

const Table& PartRecord::table(const std::string& name) const {
    for (const auto& t : tables)
        if (t.name == name) return t;
    throw std::out_of_range(fmt::format("part {} recorded no table '{}'", number, name));
}

// ---- Report ------------------------------------------------------------------

Report::Report(std::FILE* out) : out_(out), width_(text_width(out)) {}

void Report::print(std::string_view line) {
    fmt::print(out_, "{}\n", line);
    std::fflush(out_);  // progress shows as it happens, also through a pipe
}

void Report::lesson(std::string name, std::string title, std::string section,
                    std::vector<std::pair<std::string, Cell>> settings) {
    name_ = std::move(name);
    title_ = std::move(title);
    section_ = std::move(section);
    settings_ = std::move(settings);
    std::vector<std::string> shown;
    for (const auto& [key, cell] : settings_) shown.push_back(key + " " + cell.str());
    print(fmt::format("Lesson {}: {}  (lecture 4 {})", name_, title_, section_));
    print(fmt::format("settings: {}", fmt::join(shown, ", ")));
}

void Report::section(int number, std::string section, std::string title, std::string shows,
                     std::vector<std::string> sources) {
    print("");
    print(fmt::format("== Part {} · {} · {} ==", number, section, math::plain(title)));
    for (const std::string& line : wrap(math::plain(shows), width_)) print(line);
    if (!sources.empty()) print(fmt::format("code: {}", fmt::join(sources, ", ")));
    print("");
    PartRecord part;
    part.number = number;
    part.section = std::move(section);
    part.title = std::move(title);
    part.shows = std::move(shows);
    part.sources = std::move(sources);
    parts_.push_back(std::move(part));
}

PartRecord& Report::current() {
    if (parts_.empty()) throw std::logic_error("Report: record something only after section()");
    return parts_.back();
}

void Report::add_item(PartRecord::Item::Kind kind, size_t index) { current().items.push_back({kind, index}); }

void Report::record(std::string key, Cell cell, std::string label) {
    PartRecord& part = current();
    for (const auto& [k, ignored] : part.values)
        if (k == key) throw std::logic_error(fmt::format("part {} recorded '{}' twice", part.number, key));
    part.values.emplace_back(std::move(key), std::move(cell));
    part.value_labels.push_back(std::move(label));
    add_item(PartRecord::Item::Kind::Value, part.values.size() - 1);
}

void Report::paragraph(std::string_view text) {
    PartRecord& part = current();
    part.paragraphs.emplace_back(text);
    add_item(PartRecord::Item::Kind::Paragraph, part.paragraphs.size() - 1);
    for (const std::string& line : wrap(math::plain(text), width_)) print(line);
    print("");
}

void Report::table(std::string name, std::vector<std::string> columns, std::vector<std::vector<Cell>> rows) {
    PartRecord& part = current();
    for (const auto& t : part.tables)
        if (t.name == name) throw std::logic_error(fmt::format("part {} recorded table '{}' twice", part.number, name));
    Table t{std::move(name), std::move(columns), std::move(rows)};
    check_table(t);
    for (const std::string& line : table_lines(t)) print(line);
    part.tables.push_back(std::move(t));
    add_item(PartRecord::Item::Kind::Table, part.tables.size() - 1);
}

void Report::value(std::string key, double x, std::string label) {
    print(fmt::format("  {} = {}", label.empty() ? key : math::plain(label), Cell(x).str()));
    record(std::move(key), x, std::move(label));
}

void Report::log(std::string_view line) { print(line); }

void Report::figure(std::string file, std::string caption) {
    PartRecord& part = current();
    print(fmt::format("  figure: {} ({})", file, math::plain(caption)));
    part.figures.push_back({std::move(file), std::move(caption)});
    add_item(PartRecord::Item::Kind::Figure, part.figures.size() - 1);
}

// The outcome and the verdict, and under them what the page folds: the
// finding, both figures, the rule and the evidence.
void Report::claim(Claim claim) {
    PartRecord& part = current();
    for (const auto& c : part.claims)
        if (c.key == claim.key)
            throw std::logic_error(fmt::format("part {} recorded claim '{}' twice", part.number, claim.key));
    if (claim.verdict.empty())
        throw std::logic_error(
            fmt::format("claim '{}' has no verdict: say in a sentence what was tested and how "
                        "it came out",
                        claim.key));
    if (word_count(claim.verdict) > kVerdictWords)
        throw std::logic_error(fmt::format("claim '{}': its verdict has {} words, more than {}: {}", claim.key,
                                           word_count(claim.verdict), kVerdictWords, claim.verdict));
    if (!claim.evidence.columns.empty()) check_table(claim.evidence);
    const auto indented = [&](const std::string& text, const char* first, const char* rest) {
        const auto lines = wrap(math::plain(text), width_ - 4);
        for (size_t i = 0; i < lines.size(); ++i) print((i == 0 ? first : rest) + lines[i]);
    };
    const std::string outcome = claim.reproduced ? "reproduced" : "not reproduced";
    indented(outcome + ": " + claim.verdict, "  ", "    ");
    indented("the finding: " + claim.statement, "    ", "      ");
    const std::string lecture = claim.lecture.str();
    indented(fmt::format("lecture {} · ours {}", lecture.empty() ? "gives no number" : lecture, claim.ours.str()),
             "    ", "      ");
    if (!claim.reason.empty()) indented("how it was decided: " + claim.reason, "    ", "      ");
    if (!claim.evidence.columns.empty())
        for (const std::string& line : table_lines(claim.evidence)) print("  " + line);
    part.claims.push_back(std::move(claim));
    add_item(PartRecord::Item::Kind::Claim, part.claims.size() - 1);
}

void Report::takeaway(std::string line) {
    current().takeaway = line;
    print("");
    print("Takeaway: " + math::plain(line));
}

const PartRecord& Report::part(int number) const {
    for (const auto& p : parts_)
        if (p.number == number) return p;
    throw std::out_of_range(fmt::format("part {} did not run", number));
}

std::string Report::to_json() const {
    Json parts = Json::object();
    for (const auto& p : parts_) {
        Json tables = Json::object();
        for (const auto& t : p.tables) tables[t.name] = table_json(t);
        Json claims = Json::object();
        for (const auto& c : p.claims) {
            claims[c.key] = {
                {"statement", c.statement},  {"lecture", cell_json(c.lecture)},
                {"ours", cell_json(c.ours)}, {"reproduced", c.reproduced},
                {"reason", c.reason},        {"kind", c.kind == ClaimKind::experiment ? "experiment" : "check"},
                {"verdict", c.verdict}};
            if (!c.evidence.columns.empty()) claims[c.key]["evidence"] = table_json(c.evidence);
        }
        Json labels = Json::object();
        for (size_t v = 0; v < p.values.size(); ++v)
            if (!p.value_labels[v].empty()) labels[p.values[v].first] = p.value_labels[v];
        Json items = Json::array();
        for (const auto& item : p.items) {
            using Kind = PartRecord::Item::Kind;
            switch (item.kind) {
                case Kind::Paragraph:
                    items.push_back({{"paragraph", p.paragraphs[item.index]}});
                    break;
                case Kind::Table:
                    items.push_back({{"table", p.tables[item.index].name}});
                    break;
                case Kind::Value:
                    items.push_back({{"value", p.values[item.index].first}});
                    break;
                case Kind::Figure:
                    items.push_back(
                        {{"figure", p.figures[item.index].file}, {"caption", p.figures[item.index].caption}});
                    break;
                case Kind::Claim:
                    items.push_back({{"claim", p.claims[item.index].key}});
                    break;
            }
        }
        parts[std::to_string(p.number)] = {{"section", p.section},
                                           {"title", p.title},
                                           {"shows", p.shows},
                                           {"sources", p.sources},
                                           {"values", members_json(p.values)},
                                           {"labels", std::move(labels)},
                                           {"tables", std::move(tables)},
                                           {"claims", std::move(claims)},
                                           {"items", std::move(items)},
                                           {"takeaway", p.takeaway}};
    }
    const Json report = {{"lesson", name_},
                         {"title", title_},
                         {"section", section_},
                         {"settings", members_json(settings_)},
                         {"run", {{"started", run_.started}, {"seconds", run_.seconds}}},
                         {"parts", std::move(parts)}};
    return report.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace lessons
