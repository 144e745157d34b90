#include "lessons/common/report.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace lessons {
namespace {

using Json = nlohmann::ordered_json;  // keys in the order they were recorded

// Columns are padded by characters on screen: count UTF-8 code points (every
// byte that does not continue a multi-byte character).
size_t display_width(std::string_view s) {
    return static_cast<size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad(const std::string& s, size_t width, bool right) {
    const std::string fill(width - std::min(width, display_width(s)), ' ');
    return right ? fill + s : s + fill;
}

// A cell as its JSON value: text, whole number, real number (NaN and Inf
// as null) or true/false.
Json cell_json(const Cell& cell) {
    return std::visit([](const auto& v) { return Json(v); }, cell.value);
}

Json members_json(const std::vector<std::pair<std::string, Cell>>& cells) {
    Json members = Json::object();
    for (const auto& [key, cell] : cells) members[key] = cell_json(cell);
    return members;
}

}  // namespace

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
        return (scientific || needs_scientific()) && *x != 0.0 ? fmt::format("{:.2e}", *x) : fmt::format("{:.6g}", *x);
    if (const auto* n = std::get_if<long long>(&value)) return fmt::format("{}", *n);
    if (const auto* b = std::get_if<bool>(&value)) return *b ? "yes" : "no";
    return std::get<std::string>(value);
}

// ---- records -----------------------------------------------------------------

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

const Table& PartRecord::table(const std::string& name) const {
    for (const auto& t : tables)
        if (t.name == name) return t;
    throw std::out_of_range(fmt::format("part {} recorded no table '{}'", number, name));
}

// ---- Report ------------------------------------------------------------------

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

void Report::section(int number, std::string section, std::string title, std::string shows) {
    print("");
    print(fmt::format("== Part {} · {} · {} ==", number, section, title));
    print(shows);
    print("");
    parts_.push_back(PartRecord{number, std::move(section), std::move(title), {}, {}, {}});
}

PartRecord& Report::current() {
    if (parts_.empty()) throw std::logic_error("Report: record something only after section()");
    return parts_.back();
}

void Report::record(std::string key, Cell cell) {
    PartRecord& part = current();
    for (const auto& [k, ignored] : part.values)
        if (k == key) throw std::logic_error(fmt::format("part {} recorded '{}' twice", part.number, key));
    part.values.emplace_back(std::move(key), std::move(cell));
}

void Report::text(std::string_view line) { print(line); }

void Report::table(std::string name, std::vector<std::string> columns, std::vector<std::vector<Cell>> rows) {
    PartRecord& part = current();
    for (const auto& t : part.tables)
        if (t.name == name) throw std::logic_error(fmt::format("part {} recorded table '{}' twice", part.number, name));
    // A column of real numbers is scientific throughout if any of them needs it.
    std::vector<bool> scientific(columns.size(), false);
    for (const auto& row : rows) {
        if (row.size() != columns.size())
            throw std::logic_error(
                fmt::format("table '{}': a row has {} cells for {} columns", name, row.size(), columns.size()));
        for (size_t c = 0; c < row.size(); ++c)
            if (row[c].needs_scientific()) scientific[c] = true;
    }
    // The cells as printed, and each column's width.
    std::vector<std::vector<std::string>> texts;
    std::vector<size_t> width;
    for (const auto& c : columns) width.push_back(display_width(c));
    for (const auto& row : rows) {
        texts.emplace_back();
        for (size_t c = 0; c < row.size(); ++c) {
            texts.back().push_back(row[c].str(scientific[c]));
            width[c] = std::max(width[c], display_width(texts.back()[c]));
        }
    }
    // Numbers are right-aligned, text left-aligned; a header follows its
    // column's first row.
    const auto print_row = [&](const std::vector<std::string>& cells, size_t row_for_alignment) {
        std::string line;  // two spaces before every column
        for (size_t c = 0; c < cells.size(); ++c) {
            const bool right = row_for_alignment < rows.size() && rows[row_for_alignment][c].is_number();
            line += "  " + pad(cells[c], width[c], right);
        }
        print(line.substr(0, line.find_last_not_of(' ') + 1));
    };
    std::vector<std::string> rule;
    for (const size_t w : width) rule.emplace_back(w, '-');
    print_row(columns, 0);
    print_row(rule, 0);
    for (size_t r = 0; r < rows.size(); ++r) print_row(texts[r], r);
    part.tables.push_back(Table{std::move(name), std::move(columns), std::move(rows)});
}

void Report::value(std::string key, double x) {
    record(key, x);
    print(fmt::format("  {} = {}", key, Cell(x).str()));
}

void Report::verdict(std::string key, bool passed) {
    record(key, passed);
    print(fmt::format("  {}: {}", key, passed ? "passed" : "FAILED"));
}

void Report::takeaway(std::string line) {
    current().takeaway = line;
    print("");
    print("Takeaway: " + line);
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
        for (const auto& t : p.tables) {
            Json rows = Json::array();
            for (const auto& row : t.rows) {
                Json cells = Json::array();
                for (const auto& cell : row) cells.push_back(cell_json(cell));
                rows.push_back(std::move(cells));
            }
            tables[t.name] = {{"columns", t.columns}, {"rows", std::move(rows)}};
        }
        parts[std::to_string(p.number)] = {{"section", p.section},
                                           {"title", p.title},
                                           {"values", members_json(p.values)},
                                           {"tables", std::move(tables)},
                                           {"takeaway", p.takeaway}};
    }
    const Json report = {{"lesson", name_},
                         {"title", title_},
                         {"section", section_},
                         {"settings", members_json(settings_)},
                         {"parts", std::move(parts)}};
    return report.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace lessons
