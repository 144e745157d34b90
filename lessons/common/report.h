#pragma once
// Report: what a lesson part prints, and everything it records for --json.
//
//   r.section(1, "§1", "title", "what it shows")   (run_parts calls it)
//   r.text("any line, {} fmt-style", x);
//   r.table("name", {"col", …}, {{cell, …}, …});   printed aligned, recorded
//   r.value("key", 1.5e-11);                       printed and recorded
//   r.verdict("key", passed);                      printed and recorded
//   r.takeaway("one line to remember");
//
// The JSON written by to_json() (keys keep the order they were recorded in):
//
//   {"lesson": "00_autograd_recap", "title": "…", "section": "§1",
//    "settings": {"seeds": 1, "quick": false, …},
//    "parts": {"1": {"section": "§1", "title": "…",
//                    "values": {"loss": 0.69…, "gradcheck": true},
//                    "tables": {"graph": {"columns": ["#", "op"],
//                                         "rows": [[1, "matmul"], …]}},
//                    "takeaway": "…"}}}
//
// (one line, without the spaces shown here: nlohmann-json's compact form).
// Numbers are written as the shortest text that reads back as the same
// double, whole numbers without a fraction; NaN and Inf as null.
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

namespace lessons {

// One table cell or recorded value: text, a whole number, a real number or
// a yes/no.
struct Cell {
    std::variant<std::string, long long, double, bool> value;

    Cell(std::string text) : value(std::move(text)) {}
    Cell(const char* text) : value(std::string(text)) {}
    Cell(double x) : value(x) {}
    Cell(bool b) : value(b) {}
    template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
    Cell(Int n) : value(static_cast<long long>(n)) {}

    bool is_number() const;
    double number() const;  // a whole or real number as double; throws otherwise
    // As printed: reals to 6 significant digits, in scientific notation
    // below 1e-4, from 1e6 on, or when asked (to match a table column).
    std::string str(bool scientific = false) const;
    bool needs_scientific() const;
};

struct Table {
    std::string name;
    std::vector<std::string> columns;
    std::vector<std::vector<Cell>> rows;
    // The cell in `row` under `column`; throws if there is no such column.
    const Cell& at(size_t row, const std::string& column) const;
};

// What one part recorded.
struct PartRecord {
    int number = 0;
    std::string section, title;
    std::vector<std::pair<std::string, Cell>> values;
    std::vector<Table> tables;
    std::string takeaway;

    const Cell& value(const std::string& key) const;    // throws if absent
    const Table& table(const std::string& name) const;  // throws if absent
};

class Report {
public:
    explicit Report(std::FILE* out = stdout) : out_(out) {}

    // The lesson's header, printed once before its parts, with the settings
    // it runs under (seeds, quick, …), which the JSON records too.
    void lesson(std::string name, std::string title, std::string section,
                std::vector<std::pair<std::string, Cell>> settings);
    // Starts part `number`: its header and one sentence on what it shows.
    void section(int number, std::string section, std::string title, std::string shows);

    void text(std::string_view line);
    template <class... Args>
    void text(fmt::format_string<Args...> format, Args&&... args) {
        text(std::string_view(fmt::format(format, std::forward<Args>(args)...)));
    }
    // Keys and table names are unique within a part (a repeat throws).
    void table(std::string name, std::vector<std::string> columns, std::vector<std::vector<Cell>> rows);
    void value(std::string key, double x);
    void verdict(std::string key, bool passed);
    void takeaway(std::string line);

    const std::vector<PartRecord>& parts() const { return parts_; }
    const PartRecord& part(int number) const;  // throws if it did not run
    std::string to_json() const;

private:
    PartRecord& current();  // throws before the first section()
    void record(std::string key, Cell cell);
    void print(std::string_view line);

    std::FILE* out_;
    std::string name_, title_, section_;
    std::vector<std::pair<std::string, Cell>> settings_;
    std::vector<PartRecord> parts_;
};

}  // namespace lessons
