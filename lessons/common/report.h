#pragma once
// Report: what a lesson part records, as data, and its three renderings:
// the terminal (printed as it is recorded), JSON (--json, and the lesson
// book's data) and an HTML page (book.h).
//
//   r.section(1, "§1", "title", "what it shows")   (run_parts calls it)
//   r.paragraph("one paragraph, {} fmt-style", x);  wrapped when rendered
//   r.table("name", {"col", …}, {{cell, …}, …});    aligned on the terminal
//   r.value("key", 1.5e-11);                        a named number (data: JSON, terminal)
//   r.value("key", 1.5e-11, "largest error");       … also on the page, under its label
//   r.log("loaded from out/models/…");              the terminal only (status, file names)
//   r.figure("03_loss.svg", "caption");              an SVG written to --out
//   r.claim({"key", "the lecture's finding", lecture, ours, reproduced, "the rule",
//            ClaimKind::experiment, "the verdict: one sentence"});
//   r.takeaway("one line to remember");
//
// Prose (paragraphs, a part's summary, claims, captions, takeaways, table
// headers) may hold formulas between dollar signs (math.h): MathML on the
// page, plain text on the terminal.
//
// The JSON written by to_json() (keys keep the order they were recorded in):
//
//   {"lesson": "00_autograd_recap", "title": "…", "section": "§1",
//    "settings": {"seeds": 1, "quick": false, …},
//    "run": {"started": "2026-12-01T11:19:10Z", "seconds": 12.5},
//    "parts": {"1": {"section": "§1", "title": "…", "shows": "…",
//                    "sources": ["lessons/autograd_recap/mlp.cpp"],
//                    "values": {"loss": 0.69…, "gradcheck": true},
//                    "labels": {"loss": "the loss"},
//                    "tables": {"graph": {"columns": ["#", "op"],
//                                         "rows": [[1, "matmul"], …]}},
//                    "claims": {"key": {"statement": "…", "lecture": 1.7e-16,
//                                       "ours": 2.2e-16, "reproduced": true,
//                                       "reason": "…", "kind": "check",
//                                       "verdict": "…", "evidence": {…}}},
//                    "items": [{"paragraph": "…"}, {"table": "graph"},
//                              {"value": "loss"}, {"figure": "00_graph.svg",
//                              "caption": "…"}, {"claim": "key"}],
//                    "takeaway": "…"}}}
//
// (one line, without the spaces shown here: nlohmann-json's compact form).
// Numbers are written as the shortest text that reads back as the same
// double, whole numbers without a fraction; NaN and Inf as null.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

namespace lessons {

// Characters on screen: UTF-8 code points (every byte that does not continue
// a multi-byte character), for padding columns and sizing figures' text.
size_t display_width(std::string_view s);

// (1, "epoch") -> "1 epoch", (5, "epoch") -> "5 epochs": a count and its
// noun, for the pages' prose.
std::string count_of(int64_t n, const std::string& noun);

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
    // below 1e-4, from 1e6 on, or when asked (to match a table column);
    // whole numbers with thousands separators (8,030,261,248).
    std::string str(bool scientific = false) const;
    bool needs_scientific() const;
};

// 8030261248 -> "8,030,261,248"; "-1234.5" -> "-1,234.5" (digits before
// the point grouped by three; other text as it is).
std::string with_separators(std::string number);

struct Table {
    std::string name;
    std::vector<std::string> columns;
    std::vector<std::vector<Cell>> rows;
    // The cell in `row` under `column`; throws if there is no such column.
    const Cell& at(size_t row, const std::string& column) const;
};

// Every cell of `t` as the terminal and the page print it: one format per
// column. A column holding real numbers prints all its numbers (whole ones
// too) with one count of decimals, enough for three significant digits of
// its smallest nonzero value and at most six (0.9993, 1.0000, 0.7800), or
// in scientific notation throughout when one of them needs it; whole
// numbers alone keep no decimals. Thousands are separated (12,345.6).
std::vector<std::vector<std::string>> printed_cells(const Table& t);

// One of the lecture's findings that a part tests: the lecture's figure
// (where it gives one; "" where it does not), ours, and the outcome. A
// finding that does not reproduce says why: it is a result, not an error.
// What a claim tests: one of the lecture's experiments on trained models,
// or a check (an identity, arithmetic, or an addition of this repository's
// own). The course page and the findings table count the two apart.
enum class ClaimKind { check, experiment };

//
// The page shows the verdict, one sentence a student can read aloud (what
// was tested, ours against the lecture's, the outcome), and folds the rest
// under it: the finding as stated, both figures, the rule that decided the
// outcome and the evidence (a table of seeds).
inline constexpr size_t kVerdictWords = 30;

struct Claim {
    std::string key;        // unique within the part, like a value's
    std::string statement;  // the finding: "a 3:1 GQA model is as good as MHA"
    Cell lecture = "";      // the lecture's figure ("": it gives none)
    Cell ours = "";         // our figure
    bool reproduced = false;
    std::string reason;  // the rule that decided it, with the margin (folded)
    ClaimKind kind = ClaimKind::check;
    std::string verdict = "";  // one sentence, 1 to kVerdictWords words
    Table evidence = {};       // optional (no columns: none): the figures behind it, per seed
};

// Words as a reader counts them: runs of characters between spaces, in
// the text as the terminal prints it (a formula's plain form).
size_t word_count(std::string_view text);

// An SVG figure written to the output folder, shown inline on the page.
struct Figure {
    std::string file;  // its name inside --out: "03_loss.svg"
    std::string caption;
};

// What one part recorded: each kind in its own list, and `items`, the
// order they were recorded in (what a page shows, top to bottom).
struct PartRecord {
    int number = 0;
    std::string section, title, shows;
    std::vector<std::string> sources;  // the files that compute it
    std::vector<std::pair<std::string, Cell>> values;
    std::vector<std::string> value_labels;  // one per value; "": not on the page
    std::vector<Table> tables;
    std::vector<std::string> paragraphs;
    std::vector<Figure> figures;
    std::vector<Claim> claims;
    std::string takeaway;

    struct Item {
        enum class Kind { Paragraph, Table, Value, Figure, Claim } kind;
        size_t index;  // into the list of its kind
    };
    std::vector<Item> items;

    const Cell& value(const std::string& key) const;    // throws if absent
    const Table& table(const std::string& name) const;  // throws if absent
    const Claim& claim(const std::string& key) const;   // throws if absent
};

// When the lesson ran and for how long (the course page shows both).
struct RunInfo {
    std::string started;  // UTC, ISO 8601
    double seconds = 0;
};

class Report {
public:
    explicit Report(std::FILE* out = stdout);

    // The lesson's header, printed once before its parts, with the settings
    // it runs under (seeds, quick, …), which the JSON records too.
    void lesson(std::string name, std::string title, std::string section,
                std::vector<std::pair<std::string, Cell>> settings);
    // Starts part `number`: its header and one sentence on what it shows.
    void section(int number, std::string section, std::string title, std::string shows,
                 std::vector<std::string> sources = {});

    // One paragraph (wrapped to the terminal's width when printed). Without
    // arguments the text is taken as it is: braces need no doubling.
    void paragraph(std::string_view text);
    template <class... Args>
    void paragraph(fmt::format_string<Args...> format, Args&&... args) {
        paragraph(std::string_view(fmt::format(format, std::forward<Args>(args)...)));
    }
    // Keys and table names are unique within a part (a repeat throws).
    void table(std::string name, std::vector<std::string> columns, std::vector<std::vector<Cell>> rows);
    // A value with a label is shown on the page under it; one without is
    // data only (the JSON and the terminal).
    void value(std::string key, double x, std::string label = "");
    // A line for the terminal only: what the run is doing, file names.
    void log(std::string_view line);
    void figure(std::string file, std::string caption);
    // A key already used in the part, or a verdict that is empty or over
    // kVerdictWords words, throws std::logic_error.
    void claim(Claim claim);
    void takeaway(std::string line);

    // Set by run_lesson when the parts are done.
    void set_run(RunInfo run) { run_ = std::move(run); }

    const std::string& name() const { return name_; }
    const std::string& title() const { return title_; }
    const std::string& lecture_section() const { return section_; }
    const RunInfo& run() const { return run_; }
    const std::vector<std::pair<std::string, Cell>>& settings() const { return settings_; }
    const std::vector<PartRecord>& parts() const { return parts_; }
    const PartRecord& part(int number) const;  // throws if it did not run
    std::string to_json() const;

    // The width paragraphs are wrapped to: the terminal's, when out is one
    // (else $COLUMNS, else 100), between 40 and 120.
    size_t width() const { return width_; }

private:
    PartRecord& current();  // throws before the first section()
    void record(std::string key, Cell cell, std::string label);
    void print(std::string_view line);
    void add_item(PartRecord::Item::Kind kind, size_t index);

    std::FILE* out_;
    size_t width_;
    RunInfo run_;
    std::string name_, title_, section_;
    std::vector<std::pair<std::string, Cell>> settings_;
    std::vector<PartRecord> parts_;
};

}  // namespace lessons
