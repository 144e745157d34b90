// findings: the README's table of the lecture's findings, generated from
// the lessons' reports (out/NN_<name>.json, lessons/common/book.h).
//
//   build/release/tools/findings/findings [--out DIR] [--readme FILE]
//                                         [--uniform DIR [--reference FILE]]
//
// Run it after a full run of the lessons; it rewrites the lines between the
// README's findings markers. With --uniform, the folder of a second full run
// on the uniform language (--language uniform), it also rewrites the table
// of the lecture's experiments under both languages in docs/reference_figures.md.
// No report with a claim in a folder, a report that does not read (its rows
// would vanish from the table), a run on the other language, or no markers:
// one line on stderr, exit status 2, every file untouched.
#include <fstream>
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
    std::string out = "out", readme = "README.md", uniform, reference = "docs/reference_figures.md";
    CLI::App app("The README's findings table from the lessons' reports", "findings");
    app.add_option("--out", out, "the lessons' output folder (default out)")->check(CLI::ExistingDirectory);
    app.add_option("--readme", readme, "the file to update (default README.md)")
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
    std::string new_readme, new_reference;
    try {
        new_readme = lessons::book::with_generated(read_text(readme), lessons::book::kFindings,
                                                   lessons::book::findings_markdown(course));
    } catch (const std::exception& e) {
        fmt::print(stderr, "findings: {}: {}\n", readme, e.what());
        return 2;
    }
    if (!uniform.empty()) try {
            new_reference = lessons::book::with_generated(read_text(reference), lessons::book::kLanguages,
                                                          lessons::book::languages_markdown(course, uniform_course));
        } catch (const std::exception& e) {
            fmt::print(stderr, "findings: {}: {}\n", reference, e.what());
            return 2;
        }
    try {
        lessons::book::write_atomically(readme, new_readme);
        fmt::print("{}: {} findings from {} lessons\n", readme, claims, course.size());
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
