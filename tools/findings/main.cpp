// findings: the README's table of the lecture's findings, generated from
// the lessons' reports (out/NN_<name>.json, lessons/common/book.h).
//
//   build/release/tools/findings/findings [--out DIR] [--readme FILE]
//
// Run it after a full run of the lessons; it rewrites the lines between the
// README's findings markers. No report with a claim in DIR, a report that
// does not read (its rows would vanish from the table), or no markers: one
// line on stderr, exit status 2, the README untouched.
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "lessons/common/book.h"
#include "lessons/common/cli.h"

int main(int argc, char** argv) {
    std::string out = "out", readme = "README.md";
    CLI::App app("The README's findings table from the lessons' reports", "findings");
    app.add_option("--out", out, "the lessons' output folder (default out)")->check(CLI::ExistingDirectory);
    app.add_option("--readme", readme, "the file to update (default README.md)")
        ->check(CLI::ExistingFile & lessons::output_file());
    if (const auto status = lessons::parse_command_line(app, argc, argv, "findings")) return *status;
    const auto course = lessons::book::read_course(out);
    for (const auto& lesson : course)
        if (!lesson.readable) {
            fmt::print(stderr, "findings: {}/{}.json is not a lesson report ({}): run lesson {} again\n", out,
                       lesson.name, lesson.unreadable_because, lesson.name.substr(0, 2));
            return 2;
        }
    size_t claims = 0;
    for (const auto& lesson : course)
        for (const auto& part : lesson.parts) claims += part.claims.size();
    if (claims == 0) {
        fmt::print(stderr, "findings: no lesson report with a claim in {} (run the lessons first)\n", out);
        return 2;
    }
    std::ifstream in(readme);
    std::stringstream text;
    text << in.rdbuf();
    try {
        lessons::book::write_atomically(
            readme, lessons::book::with_findings(text.str(), lessons::book::findings_markdown(course)));
    } catch (const std::exception& e) {
        fmt::print(stderr, "findings: {}: {}\n", readme, e.what());
        return 2;
    }
    fmt::print("{}: {} findings from {} lessons\n", readme, claims, course.size());
    return 0;
}
