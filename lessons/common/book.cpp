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

#include "lessons/common/course.h"
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

// "04" of the program "04_sliding_window": the lesson's number.
std::string lesson_number(const std::string& name) { return name.substr(0, name.find('_')); }

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
section.lesson h3 { margin: 1.2rem 0 .2rem; font-size: 1.05rem; } ul.parts { margin: .2rem 0; padding-left: 1.2rem; }
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
        c.reproduced ? "reproduced" : "not-reproduced", escape(c.key), outcome(c.reproduced), math::html(c.verdict),
        fold);
}

std::string part_html(const PartRecord& p, const fs::path& out_dir) {
    std::string html = fmt::format("<section id=\"part-{}\">\n<h2>Part {} · {} · {}</h2>\n<p class=\"shows\">{}</p>\n",
                                   p.number, p.number, escape(p.section), math::html(p.title), math::html(p.shows));
    // Where to go from here: the exercises that practise it, the code that computes it.
    std::vector<std::string> practise, code;
    for (const course::Exercise& e : course::exercises_for(p.section))
        practise.push_back(
            fmt::format("<a href=\"index.html#{}\"><code>{}_{}</code></a>", e.id(), e.id(), escape(e.name)));
    for (const std::string& file : p.sources) code.push_back("<code>" + escape(file) + "</code>");
    if (!practise.empty() || !code.empty())
        html += fmt::format("<p class=\"meta\">{}{}{}</p>\n",
                            practise.empty() ? "" : fmt::format("Exercises: {}", fmt::join(practise, ", ")),
                            !practise.empty() && !code.empty() ? " · " : "",
                            code.empty() ? "" : fmt::format("Code: {}", fmt::join(code, ", ")));
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

namespace {

// The settings a run was made with, for people: "3 seeds · full size ·
// 2 threads · the lecture's farm language · --labels 300".
std::string settings_text(const std::vector<std::pair<std::string, Cell>>& settings) {
    std::vector<std::string> shown;
    for (const auto& [key, cell] : settings) {
        if (key == "seeds" && cell.is_number())
            shown.push_back(count_of(static_cast<int64_t>(cell.number()), "seed"));
        else if (key == "quick")
            shown.push_back(cell.str() == "yes" ? "quick settings (--quick)" : "full size");
        else if (key == "threads" && cell.is_number())
            shown.push_back(count_of(static_cast<int64_t>(cell.number()), "thread"));
        else if (key == "language")
            shown.push_back(cell.str() == "lecture" ? "the lecture's farm language"
                                                    : "the " + cell.str() + " farm language (--language)");
        else
            shown.push_back("--" + key + " " + cell.str());  // a lesson's own flag, as typed
    }
    return fmt::format("{}", fmt::join(shown, " · "));
}

}  // namespace

std::string lesson_page(const Report& report, const fs::path& out_dir) {
    const std::vector<std::string> settings{escape(settings_text(report.settings()))};
    std::string body = "<nav><a href=\"index.html\">← the lesson book</a></nav>\n<header>\n";
    body += fmt::format(
        "<h1>Lesson {}: {}</h1>\n<p class=\"meta\">lecture 4 {} · the program <code>{}</code> · {}{}</p>\n</header>\n",
        escape(lesson_number(report.name())), escape(report.title()), escape(report.lecture_section()),
        escape(report.name()), fmt::join(settings, ", "),
        report.run().started.empty() ? ""
                                     : fmt::format(" · ran {} UTC for {:.1f} s",
                                                   escape(readable_time(report.run().started)), report.run().seconds));
    for (const PartRecord& p : report.parts()) body += part_html(p, out_dir);
    return page(fmt::format("Lesson {}: {}", lesson_number(report.name()), report.title()), body);
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
                LessonEntry::Part entry{std::stoi(number),
                                        part.value("section", ""),
                                        part.value("title", ""),
                                        part.value("sources", std::vector<std::string>{}),
                                        {}};
                for (const char* key : {"title", "shows", "takeaway"}) lesson.words += word_count(part.value(key, ""));
                for (const auto& item : part.value("items", Json::array()))
                    if (item.contains("paragraph")) lesson.words += word_count(item.value("paragraph", ""));
                const Json claims = part.value("claims", Json::object());
                for (const auto& [key, c] : claims.items()) {
                    // a report written before every claim had a verdict shows its statement
                    const std::string statement = c.value("statement", ""), written = c.value("verdict", "");
                    const std::string verdict = written.empty() ? statement : written;
                    lesson.words += word_count(verdict);
                    entry.claims.push_back(
                        {key, statement, cell_from(c.value("lecture", Json(""))), cell_from(c.value("ours", Json(""))),
                         c.value("reproduced", false), c.value("reason", ""),
                         c.value("kind", "check") == "experiment" ? ClaimKind::experiment : ClaimKind::check, verdict});
                }
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

namespace {

// The lesson's part that covers `section` (course::covers), else its
// first part in the same chapter; nullptr when the lesson has not run or
// has no such part.
const LessonEntry::Part* find_part(const std::vector<LessonEntry>& course, const std::string& lesson,
                                   const std::string& section) {
    for (const LessonEntry& l : course) {
        if (l.name != lesson || !l.readable) continue;
        const std::string chapter = section.substr(0, section.find('.'));
        for (const LessonEntry::Part& p : l.parts)
            if (course::covers(p.section, section)) return &p;
        for (const LessonEntry::Part& p : l.parts)
            if (p.section.rfind(chapter, 0) == 0 &&
                (p.section.size() == chapter.size() || p.section[chapter.size()] == '.'))
                return &p;
    }
    return nullptr;
}

// "02_rope.html#part-4" of that part, or "".
std::string part_anchor(const std::vector<LessonEntry>& course, const std::string& lesson, const std::string& section) {
    const LessonEntry::Part* p = find_part(course, lesson, section);
    return p ? fmt::format("{}.html#part-{}", lesson, p->number) : "";
}

// A link when the target exists, else the text alone.
std::string link_or_text(const std::string& href, const std::string& text_html) {
    return href.empty() ? text_html : fmt::format("<a href=\"{}\">{}</a>", escape(href), text_html);
}

// The exercises' results from grade --json, by number ("" when not graded).
std::map<int, std::string> grade_results(const fs::path& out_dir, bool& unreadable) {
    std::map<int, std::string> results;
    const fs::path grade = out_dir / "grade.json";
    unreadable = false;
    if (!fs::exists(grade)) return results;
    try {
        if (!fs::is_regular_file(grade)) throw std::runtime_error("not a regular file");
        const Json g = nn::parse_strict_json(read_file(grade));
        for (const Json& e : g.at("exercises"))
            results[e.value("number", 0)] = fmt::format("{} ({} of {} tests)", e.value("status", ""),
                                                        e.value("tests_passed", 0), e.value("tests_registered", 0));
    } catch (const std::exception&) {
        unreadable = true;
        results.clear();
    }
    return results;
}

// How to work through the book: the first thing a student reads.
constexpr const char* kReadingOrder = R"(<section id="start">
<h2>How to work through this book</h2>
<ol>
<li>Read the lecture's section (named under each lesson below), then run its lesson:
<code>build/release/lessons/02_rope</code> prints as it goes and writes its page here.</li>
<li>Read the lesson's page beside the lecture. Each finding the lecture states is tested: a green
<em>reproduced</em> or an amber <em>not reproduced</em> with the measured reason; open
<em>How this was tested</em> under it for the rule and the seeds.</li>
<li>Do the lesson's exercises: write the body of each function in the file named below, then run
<code>./grade N</code> until it passes (its message says what was expected).</li>
<li>Read the lesson's code in the folder named below: each part is one file, named after the lecture's idea.</li>
</ol>
<p>Under each lesson: its reading time and how long its last run took. Lessons 01 to 05 train small models the first time (minutes each) and keep them in <code>out/models/</code>, so later runs take seconds; <code>--quick</code> trains tiny ones for a run of seconds.</p>
</section>
)";

}  // namespace

std::string course_page(const fs::path& out_dir) {
    const std::vector<LessonEntry> course = read_course(out_dir);
    std::map<std::string, std::string> section_page;  // "§4.6" and "§4" -> "02_rope.html#part-1"
    for (const LessonEntry& lesson : course)
        for (const LessonEntry::Part& part : lesson.parts) {
            const std::string anchor = fmt::format("{}.html#part-{}", lesson.name, part.number);
            section_page.emplace(part.section, anchor);
            section_page.emplace(part.section.substr(0, part.section.find_first_of(".-")), anchor);
        }
    const auto entry_of = [&](const std::string& name) -> const LessonEntry* {
        for (const LessonEntry& l : course)
            if (l.name == name) return &l;
        return nullptr;
    };

    // Every lesson of the course, run or not, with its parts and exercises.
    std::string lessons;
    for (const course::LessonGuide& guide : course::lessons()) {
        const LessonEntry* run = entry_of(guide.name);
        const bool readable = run && run->readable;
        std::string exercises;
        for (const course::Exercise& e : course::exercises())
            if (course::lesson_of(e).name == guide.name)
                exercises += fmt::format("{}<a href=\"#{}\"><code>{}_{}</code></a>", exercises.empty() ? "" : ", ",
                                         e.id(), e.id(), escape(e.name));
        lessons +=
            fmt::format("<section class=\"lesson\" id=\"lesson-{}\">\n<h3>{}{}</h3>\n", escape(guide.name),
                        link_or_text(readable ? guide.name + ".html" : "", "Lesson " + lesson_number(guide.name)),
                        readable ? ": " + math::html(run->title) : "");
        if (readable) {
            lessons += "<ul class=\"parts\">";
            for (const LessonEntry::Part& p : run->parts)
                lessons += fmt::format(
                    "<li><a href=\"{}.html#part-{}\">Part {}</a> · {} · {}{}</li>", escape(guide.name), p.number,
                    p.number, escape(p.section), math::html(p.title),
                    p.sources.empty()
                        ? ""
                        : fmt::format(" · <code>{}</code>", escape(fmt::format("{}", fmt::join(p.sources, ", ")))));
            lessons += "</ul>\n";
        }
        FindingCounts found;
        if (readable)
            for (const LessonEntry::Part& p : run->parts)
                for (const Claim& c : p.claims) found.add(c);
        std::string facts = fmt::format(
            "Lecture {} · the program <code>{}</code> · exercises: {} · code: <code>{}</code>", escape(guide.sections),
            escape(guide.name), exercises.empty() ? "none" : exercises, escape(guide.folder));
        if (!run)
            facts += " · <span class=\"missing\">not run yet</span>";
        else if (!readable)
            facts += " · <span class=\"missing\">its report does not read</span>";
        else
            facts += fmt::format(
                " · reading about {} min · running {:.0f} s (last run {} UTC) · experiments reproduced: {} · checks "
                "holding: {}",
                std::max<size_t>(1, (run->words + 199) / 200), run->seconds, escape(readable_time(run->started)),
                share(found.experiments_reproduced, found.experiments), share(found.checks_holding, found.checks));
        lessons += "<p class=\"meta\">" + facts + "</p>\n</section>\n";
    }
    // Reports in out_dir that the course does not list (an older program's).
    for (const LessonEntry& lesson : course) {
        bool listed = false;
        for (const course::LessonGuide& g : course::lessons()) listed |= g.name == lesson.name;
        if (!listed)
            lessons += fmt::format("<p class=\"missing\">{}: {}</p>\n", escape(lesson.name),
                                   lesson.readable ? "not a lesson of this course" : "the report does not read");
    }

    std::string body =
        "<header><h1>Pre-training, Fine-tuning &amp; Modern Transformers: the lesson book</h1>\n"
        "<p class=\"meta\">One page per lesson, written when the lesson runs; this page lists the latest run of "
        "each.</p></header>\n";
    body += kReadingOrder;
    body += "<h2 id=\"lessons\">Lessons, in reading order</h2>\n" + lessons +
            "<p class=\"meta\">Reading time: the page's words at 200 a minute. Running time: the latest run, as "
            "measured.</p>\n";

    // The lecture's goals, pitfalls and exercises, each where it is shown.
    std::string topics;
    for (const course::Topic& t : course::topics()) {
        const std::string anchor = part_anchor(course, t.lesson, t.section);
        topics += fmt::format(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", escape(t.label), escape(t.text),
            link_or_text(anchor, escape(lesson_number(t.lesson) + " " + t.section)), escape(course::to_string(t.shown)),
            t.exercise == 0 ? std::string("—") : fmt::format("<a href=\"#ex{0:02d}\">ex{0:02d}</a>", t.exercise));
    }
    body +=
        "<h2 id=\"goals\">What the lecture asks you to learn, and where</h2>\n<p>Its learning goals (§0.1), common "
        "pitfalls (§9) and exercises (§10), each linked to the lesson part that shows it.</p>\n"
        "<div class=\"table\"><table><thead><tr><th>topic</th><th>what</th><th>where</th><th>how</th>"
        "<th>practise</th></tr></thead><tbody>\n" +
        topics + "</tbody></table></div>\n";

    // Every exercise, graded or not.
    bool grade_unreadable = false;
    const std::map<int, std::string> results = grade_results(out_dir, grade_unreadable);
    std::string rows;
    for (const course::Exercise& e : course::exercises()) {
        const std::string link = part_for(section_page, e.section);
        const auto result = results.find(e.number);
        rows += fmt::format(
            "<tr class=\"exercise\" id=\"{}\"><td "
            "class=\"num\">{}</td><td><code>{}</code></td><td><code>{}</code></td><td>{}</td>"
            "<td>{}</td></tr>\n",
            e.id(), e.number, escape(e.name), escape(e.file()), link_or_text(link, escape(e.section)),
            result == results.end() ? "not graded yet" : escape(result->second));
    }
    body +=
        "<h2 id=\"exercises\">Exercises</h2>\n<p>Write the body of each function in its file, then run "
        "<code>build/release/tests/exercises/grade N</code> (or <code>grade</code> for all of them; "
        "<code>grade --json out/grade.json</code> puts the results here).</p>\n";
    if (grade_unreadable) body += "<p class=\"missing\">grade.json does not read.</p>\n";
    body +=
        "<div class=\"table\"><table><thead><tr><th>#</th><th>exercise</th><th>your file</th><th>lecture</th>"
        "<th>result</th></tr></thead><tbody>\n" +
        rows + "</tbody></table></div>\n";

    // Every claim across the lessons.
    std::string claims;
    FindingCounts counts;
    for (const LessonEntry& lesson : course)
        for (const LessonEntry::Part& part : lesson.parts) {
            const std::string anchor = fmt::format("{}.html#part-{}", lesson.name, part.number);
            for (const Claim& c : part.claims) {
                counts.add(c);
                claims += fmt::format(
                    "<tr class=\"{}\"><td><a href=\"{}\">{} part {}</a></td><td>{}</td><td>{}</td>"
                    "<td class=\"outcome\">{}</td></tr>\n",
                    c.reproduced ? "reproduced" : "not-reproduced", escape(anchor), escape(lesson_number(lesson.name)),
                    part.number, kind_of(c), math::html(c.verdict), outcome(c.reproduced));
            }
        }
    body +=
        fmt::format("<h2 id=\"findings\">The lecture's findings, tested</h2>\n<p>{}</p>\n", escape(counts.sentence()));
    if (counts.experiments + counts.checks > 0)
        body +=
            "<div class=\"table\"><table><thead><tr><th>where</th><th>kind</th><th>verdict</th><th>outcome</th></tr>"
            "</thead><tbody>\n" +
            claims + "</tbody></table></div>\n";
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
                rows += fmt::format("| {} part {} ({}) | {} | {} | {} | {} | {} | {} |\n", lesson_number(lesson.name),
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

std::string topics_markdown(const std::vector<LessonEntry>& course) {
    std::string table = "| topic | what | where | how | exercise |\n|---|---|---|---|---|\n";
    for (const course::Topic& t : course::topics()) {
        const LessonEntry::Part* p = find_part(course, t.lesson, t.section);
        table += fmt::format(
            "| {} | {} | {} | {} | {} |\n", t.label, markdown_cell(t.text),
            p ? fmt::format("{} part {} ({})", lesson_number(t.lesson), p->number, markdown_cell(p->section))
              : fmt::format("{} (not run)", lesson_number(t.lesson)),
            course::to_string(t.shown), t.exercise == 0 ? std::string("—") : fmt::format("ex{:02d}", t.exercise));
    }
    return table;
}

std::string findings_markdown(const std::vector<LessonEntry>& course) {
    std::string table = count_findings(course).sentence() +
                        "\n\n| where | kind | verdict | lecture | ours | outcome |\n|---|---|---|---|---|---|\n";
    for (const LessonEntry& lesson : course)
        for (const LessonEntry::Part& part : lesson.parts)
            for (const Claim& c : part.claims)
                table += fmt::format("| {} part {} ({}) | {} | {} | {} | {} | {} |\n", lesson_number(lesson.name),
                                     part.number, markdown_cell(part.section), kind_of(c),
                                     markdown_cell(math::plain(c.verdict)),
                                     markdown_cell(c.lecture.str().empty() ? "—" : c.lecture.str()),
                                     markdown_cell(c.ours.str()), outcome(c.reproduced));
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
