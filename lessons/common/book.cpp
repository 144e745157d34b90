#include "lessons/common/book.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "lessons/common/encode.h"
#include "lessons/common/math.h"
#include "lessons/common/svg.h"
#include "nn/atomic_file.h"
#include "nn/json_strict.h"

namespace lessons::book {
namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;
using svg::escape;

// One style sheet for every page: readable on a laptop and a phone, and on
// paper (no background colours needed to read a claim's outcome).
constexpr const char* kStyle = R"(
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f; margin: 0 auto;
       max-width: 52rem; padding: 1rem 1.25rem 3rem; }
h1 { font-size: 1.6rem; margin: .5rem 0 .25rem; } h2 { font-size: 1.25rem; margin-top: 2.5rem;
       border-bottom: 1px solid #ddd; padding-bottom: .25rem; }
nav a, a { color: #0b5cad; } .meta, .shows, figcaption { color: #555; }
.shows { font-style: italic; }
.table { overflow-x: auto; margin: 1rem 0; }
table { border-collapse: collapse; font-size: .9rem; }
th, td { padding: .2rem .6rem; border-bottom: 1px solid #e3e3e3; text-align: left; vertical-align: top; }
th { border-bottom: 2px solid #bbb; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
caption { text-align: left; font-weight: 600; padding: .2rem 0; }
figure { margin: 1.25rem 0; } figure svg { display: block; box-sizing: border-box; max-width: 100%; height: auto; border: 1px solid #eee; }
details { margin: .2rem 0 .1rem; } summary { cursor: pointer; color: #555; font-size: .9rem; }
details p { margin: .35rem 0; } .verdict { margin: .2rem 0; }
math { font-size: 1.05em; } math[display="block"] { margin: .6rem 0; }
.value code, td code { background: #f4f4f6; padding: 0 .25rem; border-radius: 3px; }
.claim { border-left: 4px solid #999; padding: .4rem .8rem; margin: 1rem 0; background: #fafafa; }
.claim.reproduced { border-color: #2e7d32; } .claim.not-reproduced { border-color: #b26a00; }
.outcome { font-weight: 600; margin-right: .3rem; } .reproduced .outcome { color: #2e7d32; } .not-reproduced .outcome { color: #8a5300; }
.takeaway { border: 1px solid #cfd8e3; background: #f3f7fb; padding: .6rem .9rem; border-radius: 4px; }
.missing { color: #a00; }
@media (max-width: 600px) { body { font-size: 15px; padding: .75rem .75rem 2rem; } h1 { font-size: 1.3rem; }
       h2 { font-size: 1.1rem; } th, td { padding: .15rem .35rem; }
       table { font-size: .8rem; display: block; max-width: 100%; overflow-x: auto; } }
@media print { body { max-width: none; } .claim, .takeaway { break-inside: avoid; } nav { display: none; } }
)";

std::string page(const std::string& title, const std::string& body) {
    return fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
        escape(title), kStyle, body);
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string table_html(const Table& t, const std::string& id) {
    const std::vector<std::vector<std::string>> texts = printed_cells(t);
    std::string html =
        fmt::format("<div class=\"table\"><table{}>\n<thead><tr>", id.empty() ? "" : " id=\"" + escape(id) + "\"");
    for (const auto& c : t.columns) html += "<th>" + math::html(c) + "</th>";
    html += "</tr></thead>\n<tbody>\n";
    for (size_t r = 0; r < t.rows.size(); ++r) {
        html += "<tr>";
        for (size_t c = 0; c < t.rows[r].size(); ++c)
            html += fmt::format("<td{}>{}</td>", t.rows[r][c].is_number() ? " class=\"num\"" : "", escape(texts[r][c]));
        html += "</tr>\n";
    }
    return html + "</tbody></table></div>\n";
}

// The figure drawn in the page itself (its text is text, which the browser
// test can measure), with a link to the file.
std::string figure_html(const Figure& f, const fs::path& out_dir) {
    std::string svg = read_file(out_dir / f.file);
    const size_t start = svg.find("<svg");
    if (start == std::string::npos)
        return fmt::format("<p class=\"missing\">Figure {} was not found in {}.</p>\n", escape(f.file),
                           escape(out_dir.string()));
    svg.erase(0, start);  // an XML prolog has no place inside HTML
    svg.insert(4, fmt::format(" role=\"img\" aria-label=\"{}\"", escape(math::plain(f.caption))));
    return fmt::format("<figure>{}<figcaption>{} <a href=\"{}\">({})</a></figcaption></figure>\n", svg,
                       math::html(f.caption), escape(f.file), escape(f.file));
}

// The lesson part that covers an exercise's sections ("§6.4, §4.7"): the
// first of them that is a part's own section, else the first part of the
// first one's chapter that has parts (§6).
std::string part_for(const std::map<std::string, std::string>& section_page, const std::string& sections) {
    std::vector<std::string> list;
    for (size_t start = 0; start < sections.size();) {
        const size_t comma = std::min(sections.find(',', start), sections.size());
        list.push_back(sections.substr(start, comma - start));
        start = sections.find_first_not_of(' ', comma + 1);
        if (start == std::string::npos) break;
    }
    for (const bool chapter : {false, true})
        for (const std::string& s : list)
            if (const auto it = section_page.find(chapter ? s.substr(0, s.find_first_of(".-")) : s);
                it != section_page.end())
                return it->second;
    return {};
}

// "2026-12-01T11:19:10Z" as "2026-12-01 11:19" (the column says UTC).
std::string readable_time(std::string iso) {
    if (iso.size() >= 16 && iso[10] == 'T') return iso.substr(0, 10) + " " + iso.substr(11, 5);
    return iso;
}

std::string outcome(bool reproduced) { return reproduced ? "reproduced" : "not reproduced"; }

// The verdict in view; the finding as stated, both figures, the rule and
// the evidence folded under it (<details>: no script needed).
std::string claim_html(const Claim& c) {
    const std::string lecture = c.lecture.str();
    std::string fold = "<p>The finding: " + math::html(c.statement) + "</p>\n";
    fold += fmt::format("<p>Lecture: <strong>{}</strong> · ours: <strong>{}</strong></p>\n",
                        lecture.empty() ? "no number given" : escape(lecture), escape(c.ours.str()));
    if (!c.reason.empty()) fold += "<p>How it was decided: " + math::html(c.reason) + "</p>\n";
    if (!c.evidence.columns.empty()) fold += table_html(c.evidence, "");
    return fmt::format(
        "<div class=\"claim {}\" id=\"claim-{}\"><p class=\"verdict\"><span class=\"outcome\">{}</span> {}</p>\n"
        "<details><summary>How this was tested</summary>\n{}</details></div>\n",
        c.reproduced ? "reproduced" : "not-reproduced", escape(c.key), outcome(c.reproduced),
        math::html(c.verdict.empty() ? c.statement : c.verdict), fold);
}

std::string part_html(const PartRecord& p, const fs::path& out_dir) {
    std::string html = fmt::format("<section id=\"part-{}\">\n<h2>Part {} · {} · {}</h2>\n<p class=\"shows\">{}</p>\n",
                                   p.number, p.number, escape(p.section), math::html(p.title), math::html(p.shows));
    using Kind = PartRecord::Item::Kind;
    for (size_t i = 0; i < p.items.size();) {
        const PartRecord::Item& item = p.items[i];
        if (item.kind == Kind::Value) {  // a run of labelled values reads as one small table
            std::string rows;
            for (; i < p.items.size() && p.items[i].kind == Kind::Value; ++i) {
                const size_t v = p.items[i].index;
                if (p.value_labels[v].empty()) continue;  // data only
                rows += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td></tr>\n", math::html(p.value_labels[v]),
                                    escape(p.values[v].second.str()));
            }
            if (!rows.empty())
                html += "<div class=\"table\"><table class=\"values\"><tbody>\n" + rows + "</tbody></table></div>\n";
            continue;
        }
        switch (item.kind) {
            case Kind::Paragraph:
                html += "<p>" + math::html(p.paragraphs[item.index]) + "</p>\n";
                break;
            case Kind::Table:
                html += table_html(p.tables[item.index], "table-" + p.tables[item.index].name);
                break;
            case Kind::Figure:
                html += figure_html(p.figures[item.index], out_dir);
                break;
            case Kind::Claim:
                html += claim_html(p.claims[item.index]);
                break;
            case Kind::Value:
                break;  // above
        }
        ++i;
    }
    if (!p.takeaway.empty())
        html += "<p class=\"takeaway\"><strong>Takeaway:</strong> " + math::html(p.takeaway) + "</p>\n";
    return html + "</section>\n";
}

// A recorded cell as the report's JSON holds it (null: a non-finite number).
Cell cell_from(const Json& v) {
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_integer()) return v.get<long long>();
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) return v.get<std::string>();
    return "—";
}

}  // namespace

std::string lesson_page(const Report& report, const fs::path& out_dir) {
    std::vector<std::string> settings;
    for (const auto& [key, cell] : report.settings()) settings.push_back(escape(key + " " + cell.str()));
    std::string body = "<nav><a href=\"index.html\">← the lesson book</a></nav>\n<header>\n";
    body += fmt::format(
        "<h1>Lesson {}: {}</h1>\n<p class=\"meta\">lecture 4 {} · {}{}</p>\n</header>\n", escape(report.name()),
        escape(report.title()), escape(report.lecture_section()), fmt::join(settings, ", "),
        report.run().started.empty()
            ? ""
            : fmt::format(" · ran {} for {:.1f} s", escape(report.run().started), report.run().seconds));
    for (const PartRecord& p : report.parts()) body += part_html(p, out_dir);
    return page(fmt::format("Lesson {}: {}", report.name(), report.title()), body);
}

std::vector<LessonEntry> read_course(const fs::path& out_dir) {
    static const std::regex kReport(R"(\d\d_[a-z0-9_]+\.json)");
    std::vector<fs::path> files;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(out_dir, error))
        if (std::regex_match(entry.path().filename().string(), kReport)) files.push_back(entry.path());
    std::sort(files.begin(), files.end());

    std::vector<LessonEntry> course;
    for (const fs::path& file : files) {
        LessonEntry lesson;
        lesson.name = file.stem().string();
        try {
            // Never opened unless a regular file: a FIFO would block the read.
            if (!fs::is_regular_file(file)) throw std::runtime_error("not a regular file");
            const Json j = nn::parse_strict_json(read_file(file));
            lesson.title = j.value("title", "");
            lesson.section = j.value("section", "");
            lesson.language = j.value("settings", Json::object()).value("language", "");
            const Json run = j.value("run", Json::object());
            lesson.started = run.value("started", "");
            lesson.seconds = run.value("seconds", 0.0);
            const Json parts = j.value("parts", Json::object());  // items() must not outlive what it walks
            for (const auto& [number, part] : parts.items()) {
                LessonEntry::Part entry{std::stoi(number), part.value("section", ""), {}};
                const Json claims = part.value("claims", Json::object());
                for (const auto& [key, c] : claims.items())
                    entry.claims.push_back(
                        {key, c.value("statement", ""), cell_from(c.value("lecture", Json(""))),
                         cell_from(c.value("ours", Json(""))), c.value("reproduced", false), c.value("reason", ""),
                         c.value("kind", "check") == "experiment" ? ClaimKind::experiment : ClaimKind::check,
                         c.value("verdict", "")});
                lesson.parts.push_back(std::move(entry));
            }
            lesson.readable = true;
        } catch (const std::exception& e) {
            lesson.parts.clear();
            lesson.unreadable_because = e.what();
        }
        course.push_back(std::move(lesson));
    }
    return course;
}

void FindingCounts::add(const Claim& c) {
    if (c.kind == ClaimKind::experiment)
        ++experiments, experiments_reproduced += c.reproduced;
    else
        ++checks, checks_holding += c.reproduced;
}

std::string FindingCounts::sentence() const {
    return fmt::format(
        "Of the lecture's {} on trained models, {} reproduced; of the {} (identities, arithmetic and this "
        "repository's own additions), {} {}.",
        count_of(experiments, "experiment"), experiments_reproduced, count_of(checks, "check"), checks_holding,
        checks_holding == 1 ? "holds" : "hold");
}

FindingCounts count_findings(const std::vector<LessonEntry>& course) {
    FindingCounts counts;
    for (const LessonEntry& lesson : course)
        for (const LessonEntry::Part& part : lesson.parts)
            for (const Claim& c : part.claims) counts.add(c);
    return counts;
}

namespace {

// "experiment" or "check", as the tables show a claim's kind.
std::string kind_of(const Claim& c) { return c.kind == ClaimKind::experiment ? "experiment" : "check"; }

// "3 of 8" (none: "—").
std::string share(int of, int total) { return total == 0 ? "—" : fmt::format("{} of {}", of, total); }

}  // namespace

std::string course_page(const fs::path& out_dir) {
    const std::vector<LessonEntry> course = read_course(out_dir);
    std::string lessons, claims;
    std::map<std::string, std::string> section_page;  // "§4.6" and "§4" -> "02_rope.html#part-1"
    FindingCounts counts;
    for (const LessonEntry& lesson : course) {
        if (!lesson.readable) {
            lessons +=
                fmt::format("<tr><td>{}</td><td colspan=\"6\" class=\"missing\">the report does not read</td></tr>\n",
                            escape(lesson.name));
            continue;
        }
        FindingCounts lesson_counts;
        for (const LessonEntry::Part& part : lesson.parts) {
            const std::string anchor = fmt::format("{}.html#part-{}", lesson.name, part.number);
            section_page.emplace(part.section, anchor);
            section_page.emplace(part.section.substr(0, part.section.find_first_of(".-")), anchor);
            for (const Claim& c : part.claims) {
                lesson_counts.add(c), counts.add(c);
                claims += fmt::format(
                    "<tr class=\"{}\"><td><a href=\"{}\">{} part {}</a></td><td>{}</td><td>{}</td><td>{}</td>"
                    "<td>{}</td><td class=\"outcome\">{}</td></tr>\n",
                    c.reproduced ? "reproduced" : "not-reproduced", escape(anchor), escape(lesson.name.substr(0, 2)),
                    part.number, kind_of(c), math::html(c.verdict.empty() ? c.statement : c.verdict),
                    escape(c.lecture.str().empty() ? "—" : c.lecture.str()), escape(c.ours.str()),
                    outcome(c.reproduced));
            }
        }
        lessons += fmt::format(
            "<tr><td><a href=\"{}.html\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.1f} s</td>"
            "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
            escape(lesson.name), escape(lesson.name), escape(lesson.title), escape(lesson.section),
            escape(readable_time(lesson.started)), lesson.seconds,
            share(lesson_counts.experiments_reproduced, lesson_counts.experiments),
            share(lesson_counts.checks_holding, lesson_counts.checks));
    }
    const int total = counts.experiments + counts.checks;
    std::string body =
        "<header><h1>Pre-training, Fine-tuning &amp; Modern Transformers: the lesson book</h1>\n"
        "<p class=\"meta\">Each lesson writes its page when it runs; this page lists the latest run of each.</p>"
        "</header>\n";
    body += "<h2 id=\"lessons\">Lessons</h2>\n";
    body += course.empty()
                ? "<p>No lesson has run with this output folder yet.</p>\n"
                : "<div class=\"table\"><table><thead><tr><th>lesson</th><th>title</th><th>lecture</th>"
                  "<th>last run (UTC)</th><th>time</th><th>experiments reproduced</th><th>checks holding</th></tr>"
                  "</thead><tbody>\n" +
                      lessons + "</tbody></table></div>\n";
    body +=
        fmt::format("<h2 id=\"findings\">The lecture's findings, tested</h2>\n<p>{}</p>\n", escape(counts.sentence()));
    if (total > 0)
        body +=
            "<div class=\"table\"><table><thead><tr><th>where</th><th>kind</th><th>finding</th><th>lecture</th>"
            "<th>ours</th><th>outcome</th></tr></thead><tbody>\n" +
            claims + "</tbody></table></div>\n";

    const fs::path grade = out_dir / "grade.json";
    if (fs::exists(grade)) {
        body += "<h2 id=\"exercises\">Exercises</h2>\n";
        try {
            const Json g = Json::parse(read_file(grade));
            std::string rows;
            for (const Json& e : g.at("exercises")) {
                const std::string section = e.value("section", "");
                const std::string link = part_for(section_page, section);
                rows += fmt::format(
                    "<tr class=\"exercise\"><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td "
                    "class=\"num\">{} / "
                    "{}</td></tr>\n",
                    e.value("number", 0), escape(e.value("name", "")),
                    link.empty() ? escape(section)
                                 : fmt::format("<a href=\"{}\">{}</a>", escape(link), escape(section)),
                    escape(e.value("status", "")), e.value("tests_passed", 0), e.value("tests_registered", 0));
            }
            body +=
                "<div class=\"table\"><table><thead><tr><th>#</th><th>exercise</th><th>lecture</th><th>result</th>"
                "<th>tests</th></tr></thead><tbody>\n" +
                rows + "</tbody></table></div>\n";
        } catch (const std::exception&) {
            body += "<p class=\"missing\">grade.json does not read.</p>\n";
        }
    }
    return page("The lesson book", body);
}

// A cell of a Markdown table: no line breaks, | escaped.
static std::string markdown_cell(std::string text) {
    std::string out;
    for (const char c : text) out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
    return out;
}

std::string languages_markdown(const std::vector<LessonEntry>& lecture, const std::vector<LessonEntry>& uniform) {
    const auto check = [](const std::vector<LessonEntry>& course, const std::string& language) {
        for (const LessonEntry& lesson : course)
            if (!lesson.language.empty() && lesson.language != language)
                throw std::invalid_argument(
                    fmt::format("{} ran on the {} language, not the {}", lesson.name, lesson.language, language));
    };
    check(lecture, "lecture");
    check(uniform, "uniform");
    std::map<std::pair<std::string, std::string>, const Claim*> other;  // (lesson, key)
    for (const LessonEntry& lesson : uniform)
        for (const LessonEntry::Part& part : lesson.parts)
            for (const Claim& c : part.claims) other[{lesson.name, c.key}] = &c;
    FindingCounts in_lecture, in_uniform;
    std::string rows;
    for (const LessonEntry& lesson : lecture)
        for (const LessonEntry::Part& part : lesson.parts)
            for (const Claim& c : part.claims) {
                if (c.kind != ClaimKind::experiment) continue;
                in_lecture.add(c);
                const auto found = other.find({lesson.name, c.key});
                const Claim* u = found == other.end() ? nullptr : found->second;
                if (u) in_uniform.add(*u);
                rows += fmt::format("| {} part {} ({}) | {} | {} | {} | {} | {} | {} |\n", lesson.name.substr(0, 2),
                                    part.number, markdown_cell(part.section), markdown_cell(c.statement),
                                    markdown_cell(c.lecture.str().empty() ? "—" : c.lecture.str()),
                                    markdown_cell(c.ours.str()), outcome(c.reproduced),
                                    u ? markdown_cell(u->ours.str()) : "(not run)", u ? outcome(u->reproduced) : "—");
            }
    return fmt::format(
               "The lecture's experiments on trained models: {} of {} reproduced on the lecture's language, {} of {} "
               "on the uniform one.\n\n",
               in_lecture.experiments_reproduced, in_lecture.experiments, in_uniform.experiments_reproduced,
               in_uniform.experiments) +
           "| where | finding | lecture | lecture's language | outcome | uniform language | outcome |\n"
           "|---|---|---|---|---|---|---|\n" +
           rows;
}

std::string findings_markdown(const std::vector<LessonEntry>& course) {
    std::string table = count_findings(course).sentence() +
                        "\n\n| where | kind | finding | lecture | ours | outcome |\n|---|---|---|---|---|---|\n";
    for (const LessonEntry& lesson : course)
        for (const LessonEntry::Part& part : lesson.parts)
            for (const Claim& c : part.claims)
                table += fmt::format("| {} part {} ({}) | {} | {} | {} | {} | {}{} |\n", lesson.name.substr(0, 2),
                                     part.number, markdown_cell(part.section), kind_of(c), markdown_cell(c.statement),
                                     markdown_cell(c.lecture.str().empty() ? "—" : c.lecture.str()),
                                     markdown_cell(c.ours.str()), outcome(c.reproduced),
                                     c.reason.empty() ? "" : ": " + markdown_cell(c.reason));
    return table;
}

void write_atomically(const fs::path& path, const std::string& text) { nn::write_file_atomically(path, {text}); }

std::string with_generated(const std::string& text, const Markers& markers, const std::string& table) {
    const size_t begin = text.find(markers.begin), end = text.find(markers.end);
    if (begin == std::string::npos || end == std::string::npos || end < begin)
        throw std::invalid_argument(fmt::format("the markers are missing: {} … {}", markers.begin, markers.end));
    const size_t after_begin = begin + std::string_view(markers.begin).size();
    return text.substr(0, after_begin) + "\n" + table + text.substr(end);
}

void write_pages(const Report& report, const fs::path& out_dir) {
    write_atomically(out_dir / (report.name() + ".json"), report.to_json());
    write_atomically(out_dir / (report.name() + ".html"), lesson_page(report, out_dir));
    write_atomically(out_dir / "index.html", course_page(out_dir));
}

}  // namespace lessons::book
