#pragma once
// The lesson book: each lesson's report as a page a student reads beside
// the lecture, and the course page that links them.
//
//   out/NN_<name>.html   the lesson's parts in lecture order: paragraphs,
//                        tables, figures inline, each claim as "lecture /
//                        ours / outcome", the takeaway
//   out/NN_<name>.json   the same report as data (Report::to_json)
//   out/index.html       the course page: how to work through the book, every
//                        lesson with its parts, exercises, code, reading and
//                        running time, the lecture's goals, pitfalls and
//                        exercises each linked to the part that shows it, the
//                        exercises (with their results when grade --json wrote
//                        out/grade.json) and every claim across the lessons
//
// Pages are self-contained (styles inline, figures as data: URLs, no
// network, no script), so they open from file:// and print.
#include <filesystem>
#include <string>
#include <vector>

#include "lessons/common/report.h"

namespace lessons::book {

// The lesson's page. Figures are read from out_dir (a missing one is said
// on the page).
std::string lesson_page(const Report& report, const std::filesystem::path& out_dir);

// What the course page and the findings tables read: every lesson
// report (NN_<name>.json) in out_dir, in order, with its parts' claims.
struct LessonEntry {
    std::string name, title, section;  // "02_rope", …, "§4 RoPE"
    std::string language;              // the farm language it ran on ("" for a lesson without one)
    std::string started;               // when it last ran (UTC)
    double seconds = 0;
    bool readable = false;           // false: not a regular file, or not a report (strict JSON)
    std::string unreadable_because;  // then why
    struct Part {
        int number = 0;
        std::string section, title;
        std::vector<std::string> sources;
        std::vector<Claim> claims;
    };
    std::vector<Part> parts;
    size_t words = 0;  // the page's prose, what a student reads
};

// The two counts every summary of the findings gives: the lecture's
// experiments on trained models, and the checks (identities, arithmetic,
// this repository's own additions).
struct FindingCounts {
    int experiments = 0, experiments_reproduced = 0;
    int checks = 0, checks_holding = 0;
    void add(const Claim& c);
    // "Of the lecture's 22 experiments on trained models, 14 reproduced; of
    // the 45 checks (…), 45 hold."
    std::string sentence() const;
};
FindingCounts count_findings(const std::vector<LessonEntry>& course);
std::vector<LessonEntry> read_course(const std::filesystem::path& out_dir);

// Every claim across the lessons as a Markdown table (docs/findings.md): the two counts, then where, kind, finding,
// lecture, ours, outcome.
std::string findings_markdown(const std::vector<LessonEntry>& course);

// The lecture's learning goals, pitfalls and exercises (course.h) as a
// Markdown table (docs/lessons.md): each with the lesson part of `course`
// that shows it and how.
std::string topics_markdown(const std::vector<LessonEntry>& course);

// The lecture's experiments on trained models under both farm languages
// (docs/reference_figures.md): one row per experiment claim of `lecture`
// (a run on the lecture's language), beside the same claim in `uniform`.
// std::invalid_argument when a run is not on its language.
std::string languages_markdown(const std::vector<LessonEntry>& lecture, const std::vector<LessonEntry>& uniform);

// `text` with the lines between two markers replaced by `table`; throws
// std::invalid_argument when the markers are missing.
struct Markers {
    const char* begin;
    const char* end;
};
inline constexpr Markers kFindings{
    "<!-- findings: generated from the lessons' reports by tools/findings; edit the lessons, not this table -->",
    "<!-- end of findings -->"};
inline constexpr Markers kLanguages{
    "<!-- languages: generated from two runs' reports by tools/findings --uniform; edit the lessons, not this table "
    "-->",
    "<!-- end of languages -->"};
inline constexpr Markers kTopics{
    "<!-- topics: generated from lessons/common/course.cpp and the lessons' reports by tools/findings; edit those, "
    "not this table -->",
    "<!-- end of topics -->"};
std::string with_generated(const std::string& text, const Markers& markers, const std::string& table);

// The course page from every lesson report (NN_<name>.json) in out_dir and
// out_dir/grade.json if it is there. A report that does not parse is
// listed as unreadable, not skipped.
std::string course_page(const std::filesystem::path& out_dir);

// Writes NN_<name>.json and .html for this report into out_dir, then
// index.html anew; each through a temporary file and a rename. Throws
// std::runtime_error naming the file it cannot write.
void write_pages(const Report& report, const std::filesystem::path& out_dir);

// `text` into `path` through a temporary file of its own and a rename
// (nn::write_file_atomically): a reader sees the old file or the new one,
// never half of one.
void write_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace lessons::book
