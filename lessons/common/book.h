#pragma once
// The lesson book: each lesson's report as a page a student reads beside
// the lecture, and the course page that links them.
//
//   out/NN_<name>.html   the lesson's parts in lecture order: paragraphs,
//                        tables, figures inline, each claim as "lecture /
//                        ours / outcome", the takeaway
//   out/NN_<name>.json   the same report as data (Report::to_json)
//   out/index.html       every lesson with when it last ran and how long it
//                        took, the table of every claim across the lessons,
//                        and the exercise scoreboard when grade --json wrote
//                        out/grade.json
//
// Pages are self-contained (styles inline, figures as data: URLs, no
// network, no script), so they open from file:// and print.
#include <filesystem>
#include <string>

#include "lessons/common/report.h"

namespace lessons::book {

// The lesson's page. Figures are read from out_dir (a missing one is said
// on the page).
std::string lesson_page(const Report& report, const std::filesystem::path& out_dir);

// The course page from every lesson report (NN_<name>.json) in out_dir and
// out_dir/grade.json if it is there. A report that does not parse is
// listed as unreadable, not skipped.
std::string course_page(const std::filesystem::path& out_dir);

// Writes NN_<name>.json and .html for this report into out_dir, then
// index.html anew; each through a temporary file and a rename. Throws
// std::runtime_error naming the file it cannot write.
void write_pages(const Report& report, const std::filesystem::path& out_dir);

}  // namespace lessons::book
