// findings: the tables the docs draw from the lessons' reports
// (out/NN_<name>.json, lessons/common/book.h): the lecture's findings
// (docs/findings.md) and its learning goals, pitfalls and exercises with
// the part that shows each (docs/lessons.md).
//
//   build/release/tools/findings/findings [--out DIR] [--findings FILE] [--lessons FILE]
//                                         [--uniform DIR [--reference FILE]]
//
// Run it after a full run of the lessons; it rewrites the lines between each
// file's markers. With --uniform, the folder of a second full run
// on the uniform language (--language uniform), it also rewrites the table
// of the lecture's experiments under both languages in docs/reference_figures.md.
// No report with a claim in a folder, a report that does not read (its rows
// would vanish from the table), a run on the other language, or no markers:
// one line on stderr, exit status 2, every file untouched.
#include <fstream>
#include <functional>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "lessons/common/book.h"
#include "lessons/common/cli.h"

namespace {

// The reports in `out` and their claims' count, or 0 after one line on
// stderr saying why they cannot be used.
size_t read_reports(const std::string& out, std::vector<lessons::book::LessonEntry>& course) {
    course = lessons::book::read_course(out);
    for (const auto& lesson : course)
        if (!lesson.readable) {
            fmt::print(stderr, "findings: {}/{}.json is not a lesson report ({}): run lesson {} again\n", out,
                       lesson.name, lesson.unreadable_because, lesson.name.substr(0, 2));
            return 0;
        }
    size_t claims = 0;
    for (const auto& lesson : course)
        for (const auto& part : lesson.parts) claims += part.claims.size();
    if (claims == 0) fmt::print(stderr, "findings: no lesson report with a claim in {} (run the lessons first)\n", out);
    return claims;
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

int main(int argc, char** argv) {
    std::string out = "out", findings = "docs/findings.md", topics = "docs/lessons.md", uniform,
                reference = "docs/reference_figures.md";
    CLI::App app("The docs' tables of findings and topics from the lessons' reports", "findings");
    app.add_option("--out", out, "the lessons' output folder (default out)")->check(CLI::ExistingDirectory);
    app.add_option("--findings", findings, "the findings table's file (default docs/findings.md)")
        ->check(CLI::ExistingFile & lessons::output_file());
    app.add_option("--lessons", topics, "the topics table's file (default docs/lessons.md)")
        ->check(CLI::ExistingFile & lessons::output_file());
    CLI::Option* uniform_option =
        app.add_option("--uniform", uniform,
                       "the output folder of a full run with --language uniform: also write the table of the "
                       "lecture's experiments under both languages")
            ->check(CLI::ExistingDirectory);
    app.add_option("--reference", reference, "that table's file (default docs/reference_figures.md)")
        ->check(CLI::ExistingFile & lessons::output_file())
        ->needs(uniform_option);
    if (const auto status = lessons::parse_command_line(app, argc, argv, "findings")) return *status;

    std::vector<lessons::book::LessonEntry> course, uniform_course;
    const size_t claims = read_reports(out, course);
    if (claims == 0 || (!uniform.empty() && read_reports(uniform, uniform_course) == 0)) return 2;
    // Every table is made before any file is written: a run on the wrong
    // language leaves both files as they were.
    // `file` with its table between `markers` made anew, or "" after one
    // line on stderr (no markers, a run on the other language).
    const auto generated = [](const std::string& file, const lessons::book::Markers& markers,
                              const std::function<std::string()>& table) {
        try {
            return lessons::book::with_generated(read_text(file), markers, table());
        } catch (const std::exception& e) {
            fmt::print(stderr, "findings: {}: {}\n", file, e.what());
            return std::string();
        }
    };
    const std::string new_findings =
        generated(findings, lessons::book::kFindings, [&] { return lessons::book::findings_markdown(course); });
    if (new_findings.empty()) return 2;
    const std::string new_topics =
        generated(topics, lessons::book::kTopics, [&] { return lessons::book::topics_markdown(course); });
    if (new_topics.empty()) return 2;
    std::string new_reference;
    if (!uniform.empty()) {
        new_reference = generated(reference, lessons::book::kLanguages,
                                  [&] { return lessons::book::languages_markdown(course, uniform_course); });
        if (new_reference.empty()) return 2;
    }
    try {
        lessons::book::write_atomically(findings, new_findings);
        fmt::print("{}: {} findings from {} lessons\n", findings, claims, course.size());
        lessons::book::write_atomically(topics, new_topics);
        fmt::print("{}: the lecture's goals, pitfalls and exercises\n", topics);
        if (!uniform.empty()) {
            lessons::book::write_atomically(reference, new_reference);
            fmt::print("{}: the lecture's experiments under both languages\n", reference);
        }
    } catch (const std::exception& e) {
        fmt::print(stderr, "findings: {}\n", e.what());
        return 1;
    }
    return 0;
}
