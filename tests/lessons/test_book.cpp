// The lesson book (lessons/common/book.h): a report's items in order, its
// claims, the terminal's wrapping, and the HTML pages (structure, escaping,
// figures inline, the course page from the reports in a folder).
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include "catch.h"

#include "lesson_helpers.h"
#include "lessons/common/book.h"
#include "lessons/common/course.h"
#include "lessons/common/math.h"
#include "lessons/common/report.h"
#include "tests/occurrences.h"

using Catch::Contains;
using lessons::Claim;
using lessons::Report;

namespace {

// A report with one of everything; its printed output in `printed`.
struct Recorded {
    std::FILE* printed = std::tmpfile();
    Report report{printed};
    Recorded() {
        report.lesson("02_rope", "RoPE: rotary positions", "§4 回顾", {{"seeds", 1}});
        report.section(1, "§4.6", "Matrix <form> & pairs", "shows \"both\" pairings", {"lessons/rope/rotation.cpp"});
        report.paragraph("Rotations keep norms: |R q| = |q| for every position {}.", 3);
        report.table("norms", {"position", "|Rq| - |q|"}, {{0, 0.0}, {1, 2.2e-16}});
        report.value("worst", 2.2e-16, "the largest change of a norm");
        report.value("data_only", 7.0);
        report.log("loaded from out/models/model-0123456789abcdef.safetensors");
        report.figure("02_angles.svg", "angles < 2π");
        report.claim({"norms_kept", "a rotation keeps the norm", 1.7e-16, 2.2e-16, true, "both at rounding level",
                      lessons::ClaimKind::check, "A rotation keeps the norm to rounding level"});
        report.claim({"gqa_as_good", "GQA 2:1 is as good as MHA", "", 6.48, false, "0.3 worse, 3x the seed spread",
                      lessons::ClaimKind::experiment, "GQA's perplexity is 0.3 above MHA's: not as good, here",
                      lessons::Table{"seeds", {"seed", "GQA"}, {{0, 6.4}, {1, 6.56}}}});
        report.takeaway("RoPE turns pairs & keeps <norms>.");
    }
    ~Recorded() { std::fclose(printed); }
    std::string output() const {
        std::rewind(printed);
        std::string text;
        for (int c; (c = std::fgetc(printed)) != EOF;) text += static_cast<char>(c);
        return text;
    }
};

}  // namespace

TEST_CASE("report: items keep their order, claims keep both figures", "[lessons][report]") {
    const Recorded r;
    const auto& part = r.report.part(1);
    using Kind = lessons::PartRecord::Item::Kind;
    REQUIRE(part.items.size() == 7);
    const Kind kinds[] = {Kind::Paragraph, Kind::Table, Kind::Value, Kind::Value,
                          Kind::Figure,    Kind::Claim, Kind::Claim};
    for (size_t i = 0; i < part.items.size(); ++i) CHECK(part.items[i].kind == kinds[i]);
    CHECK(part.claim("gqa_as_good").ours.number() == 6.48);
    CHECK_FALSE(part.claim("gqa_as_good").reproduced);
    CHECK_THROWS_AS(part.claim("missing"), std::out_of_range);

    const auto j = nlohmann::ordered_json::parse(r.report.to_json());
    const auto& p = j.at("parts").at("1");
    CHECK(p.at("claims").at("norms_kept").at("lecture") == 1.7e-16);
    CHECK(p.at("claims").at("gqa_as_good").at("lecture") == "");
    CHECK(p.at("claims").at("gqa_as_good").at("reason") == "0.3 worse, 3x the seed spread");
    CHECK(p.at("claims").at("gqa_as_good").at("verdict") == "GQA's perplexity is 0.3 above MHA's: not as good, here");
    CHECK(p.at("claims").at("gqa_as_good").at("evidence").at("rows").at(1).at(1) == 6.56);
    CHECK(p.at("labels").at("worst") == "the largest change of a norm");
    CHECK_FALSE(p.at("labels").contains("data_only"));
    CHECK(p.at("values").at("data_only") == 7.0);
    CHECK(p.at("items").at(4).at("figure") == "02_angles.svg");
    CHECK(p.at("items").at(6).at("claim") == "gqa_as_good");
    CHECK(p.at("shows") == "shows \"both\" pairings");

    // A claim that does not reproduce reads as a result, not as a failure:
    // the outcome and the verdict, then the finding, the figures and the rule.
    const std::string out = r.output();
    CHECK_THAT(out, Contains("  not reproduced: GQA's perplexity is 0.3 above MHA's: not as good, here\n"
                             "    the finding: GQA 2:1 is as good as MHA\n"
                             "    lecture gives no number · ours 6.48\n"
                             "    how it was decided: 0.3 worse, 3x the seed spread\n"
                             "    seed   GQA\n"));
    CHECK_THAT(
        out,
        Contains(
            "  reproduced: A rotation keeps the norm to rounding level\n    the finding: a rotation keeps the norm\n"
            "    lecture 1.70e-16 · ours 2.20e-16\n"));
    CHECK_THAT(out, Contains("loaded from out/models/model-0123456789abcdef.safetensors"));
    CHECK_THAT(out, Contains("  the largest change of a norm = 2.20e-16"));
    CHECK(out.find("FAILED") == std::string::npos);

    Report again(r.printed);
    again.section(1, "§0", "t", "s");
    again.claim({"k", "s", "", 1, true, "", lessons::ClaimKind::check, "v"});
    CHECK_THROWS_AS(again.claim({"k", "s", "", 1, true, "", lessons::ClaimKind::check, "v"}),
                    std::logic_error);  // a key twice
    // and a claim without a verdict leaves the page nothing to say
    CHECK_THROWS_WITH(again.claim({"silent", "s", "", 1, true, ""}), Contains("no verdict"));
    // A verdict is one sentence a student reads aloud: 31 words is one too many.
    std::string long_verdict;
    for (int w = 0; w < 31; ++w) long_verdict += (w ? " " : "") + std::string("word");
    CHECK_THROWS_AS(again.claim({"long", "s", "", 1, true, "", lessons::ClaimKind::check, long_verdict}),
                    std::logic_error);
    again.claim({"thirty", "s", "", 1, true, "", lessons::ClaimKind::check, long_verdict.substr(5)});
}

TEST_CASE("report: a paragraph is wrapped to the width, words kept whole", "[lessons][report]") {
    ::setenv("COLUMNS", "40", 1);
    std::FILE* printed = std::tmpfile();
    Report report(printed);
    ::unsetenv("COLUMNS");
    CHECK(report.width() == 40);
    report.section(1, "§0", "t", "s");
    const std::string words =
        "Rotary position embeddings turn each pair of a query's dimensions by an angle "
        "that grows with the position: §4.6's matrix form.";
    report.paragraph(words);
    std::rewind(printed);
    std::string text, line, joined;
    for (int c; (c = std::fgetc(printed)) != EOF;) text += static_cast<char>(c);
    std::fclose(printed);
    const std::string body = text.substr(text.find("Rotary"));
    size_t lines = 0;
    for (size_t start = 0, end; (end = body.find('\n', start)) != std::string::npos && end > start; start = end + 1) {
        line = body.substr(start, end - start);
        CHECK(line.size() <= 41);  // 40 characters; "§" is two bytes
        joined += (joined.empty() ? "" : " ") + line;
        ++lines;
    }
    CHECK(lines == 4);
    CHECK(joined == words);
    CHECK(report.part(1).paragraphs.at(0) == words);  // recorded whole
}

TEST_CASE("book: a lesson page shows every item, escaped, with figures inline", "[lessons][book]") {
    const Recorded r;
    const auto out = test::scratch_path("book_page");
    std::filesystem::create_directories(out);
    test::write_text(out / "02_angles.svg",
                     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"></svg>");
    const std::string html = lessons::book::lesson_page(r.report, out);
    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK_THAT(html, Contains("<meta charset=\"utf-8\">"));
    CHECK_THAT(html,
               Contains("<h1>Lesson 02: RoPE: rotary positions</h1>") && Contains("the program <code>02_rope</code>"));
    CHECK_THAT(html, Contains("lecture 4 §4 回顾"));  // UTF-8 passes through
    CHECK_THAT(html, Contains("<h2>Part 1 · §4.6 · Matrix &lt;form&gt; &amp; pairs</h2>"));
    CHECK_THAT(html, Contains("shows &quot;both&quot; pairings"));
    // where to go from here: the exercise on §4.6 and the code of the part
    CHECK_THAT(html,
               Contains("<p class=\"meta\">Exercises: <a href=\"index.html#ex11\"><code>ex11_rope_apply</code></a> · "
                        "Code: <code>lessons/rope/rotation.cpp</code></p>"));
    CHECK_THAT(html, Contains("<p>Rotations keep norms: |R q| = |q| for every position 3.</p>"));
    // the table's header and two rows, the labelled value's row, the evidence's header and two rows
    CHECK(test::occurrences(html, "<tr>") == 7);
    CHECK_THAT(html, Contains("<td class=\"num\">2.20e-16</td>"));
    CHECK_THAT(html, Contains("<tr><td>the largest change of a norm</td><td class=\"num\">2.20e-16</td></tr>"));
    // data only and the terminal's status lines stay off the page
    CHECK(html.find("data_only") == std::string::npos);
    CHECK(html.find("safetensors") == std::string::npos);
    // the figure drawn in the page (the page stands alone) and a link to the file
    CHECK_THAT(html, Contains("<figure><svg role=\"img\" aria-label=\"angles &lt; 2π\" xmlns="));
    CHECK_THAT(html, Contains("<a href=\"02_angles.svg\">"));
    CHECK_THAT(html, Contains("<div class=\"claim reproduced\" id=\"claim-norms_kept\">"));
    CHECK_THAT(html, Contains("<div class=\"claim not-reproduced\" id=\"claim-gqa_as_good\">"));
    // the verdict in view, the rest folded
    CHECK_THAT(html, Contains("<p class=\"verdict\"><span class=\"outcome\">not reproduced</span> GQA's "));
    CHECK_THAT(html, Contains("<details><summary>How this was tested</summary>\n<p>The finding: GQA 2:1 is as good "
                              "as MHA</p>\n<p>Lecture: <strong>no number given</strong> · ours: "
                              "<strong>6.48</strong></p>\n<p>How it was decided: 0.3 worse, 3x the seed spread</p>"));
    CHECK_THAT(html, Contains("<td class=\"num\">6.40</td>"));  // one precision down the evidence's column
    CHECK_THAT(html, Contains("<strong>Takeaway:</strong> RoPE turns pairs &amp; keeps &lt;norms&gt;."));
    CHECK(html.find("<script") == std::string::npos);
    CHECK(test::occurrences(html, "http") == 1);  // nothing from the network: the one is the SVG's namespace

    std::filesystem::remove(out / "02_angles.svg");
    CHECK_THAT(lessons::book::lesson_page(r.report, out), Contains("Figure 02_angles.svg was not found"));
    std::filesystem::remove_all(out);
}

TEST_CASE("book: the course page lists the lessons, every claim and the scoreboard", "[lessons][book]") {
    const auto out = test::scratch_path("book_course");
    std::filesystem::create_directories(out);
    // Before any lesson ran: the way in, every lesson and every exercise already.
    const std::string empty = lessons::book::course_page(out);
    CHECK_THAT(empty, Contains("How to work through this book"));
    CHECK(test::occurrences(empty, "not run yet") == lessons::course::lessons().size());
    CHECK(test::occurrences(empty, "<tr class=\"exercise\"") == lessons::course::exercises().size());
    CHECK(test::occurrences(empty, "not graded yet") == lessons::course::exercises().size());
    CHECK_THAT(empty, Contains("<code>exercises/ex07_wrong_rope.cpp</code>"));

    Recorded r;
    r.report.set_run({"2026-12-01T11:19:10Z", 12.25});
    lessons::book::write_pages(r.report, out);
    for (const char* file : {"02_rope.json", "02_rope.html", "index.html"}) CHECK(std::filesystem::exists(out / file));
    test::write_text(out / "07_broken.json", "{ not json");
    test::write_text(out / "grade.json",
                     R"({"exercises": [{"number": 1, "name": "rope_by_hand", "section": "§4.3", "status": "passed",
                             "tests_passed": 5, "tests_registered": 5},
                            {"number": 16, "name": "rolling_cache", "section": "§5.1, §4.6", "status": "failed",
                             "tests_passed": 1, "tests_registered": 5},
                            {"number": 18, "name": "autoencoder", "section": "§2.4", "status": "not started",
                             "tests_passed": 0, "tests_registered": 9}]})");
    const std::string html = lessons::book::course_page(out);
    CHECK_THAT(html, Contains("<h3><a href=\"02_rope.html\">Lesson 02</a>: RoPE: rotary positions</h3>"));
    CHECK_THAT(html, Contains("<li><a href=\"02_rope.html#part-1\">Part 1</a> · §4.6 · Matrix &lt;form&gt; &amp; "
                              "pairs · <code>lessons/rope/rotation.cpp</code></li>"));
    CHECK_THAT(html, Contains("running 12 s (last run 2026-12-01 11:19 UTC)"));
    // experiments reproduced, checks holding: none of the one experiment, the one check
    CHECK_THAT(html, Contains("experiments reproduced: 0 of 1 · checks holding: 1 of 1"));
    CHECK(test::occurrences(html, "not run yet") == lessons::course::lessons().size() - 1);
    CHECK_THAT(html, Contains("<p class=\"missing\">07_broken: the report does not read</p>"));
    CHECK_THAT(html, Contains("<p>Of the lecture's 1 experiment on trained models, 0 reproduced; of the 1 check "
                              "(identities, arithmetic and this repository's own additions), 1 holds.</p>"));
    CHECK_THAT(html,
               Contains("<a href=\"02_rope.html#part-1\">02 part 1</a></td><td>experiment</td><td>GQA's perplexity "
                        "is 0.3 above MHA's"));
    // Every exercise with its file, its lecture section linked to the part of its chapter (one with no lesson
    // part is plain text), and its result where grade.json has one.
    CHECK_THAT(html,
               Contains("<td><code>rope_by_hand</code></td><td><code>exercises/ex01_rope_by_hand.cpp</code></td><td><a "
                        "href=\"02_rope.html#part-1\">§4.4</a></td><td>passed (5 of 5 tests)</td>"));
    CHECK_THAT(
        html,
        Contains("<td><code>autoencoder</code></td><td><code>exercises/ex18_autoencoder.cpp</code></td><td>§2.4</td>"
                 "<td>not started (0 of 9 tests)</td>"));
    CHECK_THAT(
        html, Contains("<td><code>rope_frequencies</code></td><td><code>exercises/ex02_rope_frequencies.cpp</code></td>"
                       "<td><a href=\"02_rope.html#part-1\">§4.5</a></td><td>not graded yet</td>"));
    // The lecture's goals, pitfalls and exercises: linked where the lesson ran, text where it did not.
    CHECK_THAT(html, Contains("<td>exercise 1</td><td>RoPE by hand"));
    CHECK_THAT(html, Contains("<a href=\"02_rope.html#part-1\">02 §4.4</a></td><td>computed</td>"));
    CHECK_THAT(html, Contains("<td>01 §2.7</td><td>stated</td>"));
    test::write_text(out / "grade.json", "{ not json");
    CHECK_THAT(lessons::book::course_page(out), Contains("grade.json does not read."));
    std::filesystem::remove_all(out);
}

TEST_CASE("course: a part covers a section of its own, or one in its range", "[lessons][book]") {
    using lessons::course::covers;
    CHECK(covers("§2.3-2.5", "§2.4"));
    CHECK(covers("§2.3-2.5", "§2.5"));
    CHECK_FALSE(covers("§2.3-2.5", "§2.6"));
    CHECK(covers("§3.2, §7.1", "§7.1"));
    CHECK_FALSE(covers("§3.2, §7.1", "§7.2"));
    CHECK(covers("§9", "§9"));
    CHECK_FALSE(covers("§9", "§9.2"));
    CHECK_FALSE(covers("§4.2", "§4"));
    CHECK(covers("§3, §7", "§7"));
    CHECK_FALSE(covers("no section", "§1"));
    // every exercise goes with a lesson that follows its chapter
    for (const auto& e : lessons::course::exercises()) CHECK_NOTHROW(lessons::course::lesson_of(e));
    CHECK(lessons::course::lesson_of(lessons::course::exercises().at(2)).name == "03_gqa");  // §5.3, §6.4
    // a part's exercises: any of an exercise's sections in the part's
    const auto names = [](const std::string& sections) {
        std::string out;
        for (const auto& e : lessons::course::exercises_for(sections)) out += e.id() + " ";
        return out;
    };
    CHECK(names("§6.4") == "ex03 ex16 ");
    CHECK(names("§3.2, §7.1") == "ex08 ex09 ex12 ex13 ");
    CHECK(names("§9") == "");
}

TEST_CASE("book: the findings table is made from the reports' claims", "[lessons][book]") {
    const auto out = test::scratch_path("book_findings");
    std::filesystem::create_directories(out);
    Recorded r;
    lessons::book::write_pages(r.report, out);
    const auto course = lessons::book::read_course(out);
    REQUIRE(course.size() == 1);
    CHECK(course[0].readable);
    REQUIRE(course[0].parts.size() == 1);
    CHECK(course[0].parts[0].claims.size() == 2);
    const std::string table = lessons::book::findings_markdown(course);
    CHECK(table ==
          "Of the lecture's 1 experiment on trained models, 0 reproduced; of the 1 check (identities, arithmetic and "
          "this repository's own additions), 1 holds.\n\n"
          "| where | kind | verdict | lecture | ours | outcome |\n|---|---|---|---|---|---|\n"
          "| 02 part 1 (§4.6) | check | A rotation keeps the norm to rounding level | 1.70e-16 | 2.20e-16 | reproduced "
          "|\n"
          "| 02 part 1 (§4.6) | experiment | GQA's perplexity is 0.3 above MHA's: not as good, here | — | 6.48 | not "
          "reproduced |\n");

    const std::string readme = std::string("# Title\n\ntext\n") + lessons::book::kFindings.begin +
                               "\n| old | table |\n" + lessons::book::kFindings.end + "\nmore\n";
    const std::string updated = lessons::book::with_generated(readme, lessons::book::kFindings, table);
    CHECK(updated == std::string("# Title\n\ntext\n") + lessons::book::kFindings.begin + "\n" + table +
                         lessons::book::kFindings.end + "\nmore\n");
    CHECK(lessons::book::with_generated(updated, lessons::book::kFindings, table) == updated);  // idempotent
    CHECK_THROWS_WITH(lessons::book::with_generated("no markers", lessons::book::kFindings, table),
                      Contains("the markers are missing"));
    std::filesystem::remove_all(out);
}

namespace {

// tools/findings run as a program: its exit status and what it printed.
struct FindingsRun {
    int status = 0;
    std::string out, err;
};
// The topics table goes to `findings` + ".topics", made with its markers
// when it is not there yet.
FindingsRun run_findings(const std::filesystem::path& out, const std::filesystem::path& findings,
                         const std::string& more = "") {
    const auto printed = test::scratch_path("findings_printed");
    std::filesystem::create_directories(printed);
    const std::filesystem::path topics = findings.string() + ".topics";
    if (!std::filesystem::exists(topics))
        test::write_text(topics, std::string("# Lessons\n") + lessons::book::kTopics.begin + "\n" +
                                     lessons::book::kTopics.end + "\n");
    const std::string command =
        fmt::format("{} --out '{}' --findings '{}' --lessons '{}' {} > '{}' 2> '{}'", FINDINGS_PROGRAM, out.string(),
                    findings.string(), topics.string(), more, (printed / "out").string(), (printed / "err").string());
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, test::read_text(printed / "out"),
            test::read_text(printed / "err")};
}

}  // namespace

TEST_CASE("findings: the docs' tables from the reports, or one line, exit 2 and the files untouched",
          "[lessons][book]") {
    const auto out = test::scratch_path("findings_out");
    std::filesystem::create_directories(out);
    const auto readme = test::scratch_path("readme_for_findings");
    const std::string before = std::string("# Title\n") + lessons::book::kFindings.begin + "\n| old |\n" +
                               lessons::book::kFindings.end + "\nmore\n";
    test::write_text(readme, before);
    const auto refused = [&](const std::string& says) {
        const FindingsRun r = run_findings(out, readme);
        INFO("stderr: " << r.err);
        CHECK(r.status == 2);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_THAT(r.err, Contains(says));
        CHECK(test::read_text(readme) == before);
    };
    refused("no lesson report with a claim in");  // no report yet

    Recorded r;
    lessons::book::write_pages(r.report, out);
    test::write_text(out / "03_gqa.json", "{\"title\": ");  // a report cut short
    refused("03_gqa.json is not a lesson report (parse error");

    std::filesystem::remove(out / "03_gqa.json");
    const FindingsRun good = run_findings(out, readme);
    INFO("stderr: " << good.err);
    CHECK(good.status == 0);
    CHECK_THAT(good.out, Contains("2 findings from 1 lessons"));
    CHECK_THAT(
        test::read_text(readme),
        Contains("| 02 part 1 (§4.6) | check | A rotation keeps the norm to rounding level |") && !Contains("| old |"));
    // and the lecture's goals, pitfalls and exercises, each with the part that shows it
    const std::string topics = test::read_text(readme.string() + ".topics");
    CHECK_THAT(topics, Contains("| exercise 1 | RoPE by hand: the score of q at t and k at j depends on t - j | 02 "
                                "part 1 (§4.6) | computed | ex01 |"));
    CHECK_THAT(topics, Contains("| learning goal 2 | the modern LLM pipeline: pre-training → mid-training → "
                                "post-training | 01 (not run) | stated | — |"));
    CHECK(test::occurrences(topics, "\n| ") == lessons::course::topics().size() + 1);  // and the header
}

namespace {

// A one-claim-each lesson report run on `language`: an experiment that
// reproduces there or not, and a check.
void language_report(const std::filesystem::path& out, const std::string& language, double ours, bool reproduced) {
    std::FILE* printed = std::tmpfile();
    Report report{printed};
    report.lesson("05_modern_transformer", "The modern Transformer", "§7", {{"seeds", 3}, {"language", language}});
    report.section(3, "§7.3", "Which position encoding extrapolates", "shows it");
    report.claim({"rope_worst", "RoPE extrapolates worst", "0.000", ours, reproduced, "the reason",
                  lessons::ClaimKind::experiment, "RoPE extrapolates worst here"});
    report.claim({"rows_untouched", "untrained rows stay random", "", 27, true, "by construction",
                  lessons::ClaimKind::check, "The untrained rows stay random"});
    std::filesystem::create_directories(out);
    lessons::book::write_pages(report, out);
    std::fclose(printed);
}

}  // namespace

TEST_CASE("findings --uniform: the lecture's experiments under both languages, in one table", "[lessons][book]") {
    const auto lecture = test::scratch_path("languages_lecture"), uniform = test::scratch_path("languages_uniform");
    language_report(lecture, "lecture", 0.367, false);
    language_report(uniform, "uniform", 0.113, true);
    const std::string table =
        lessons::book::languages_markdown(lessons::book::read_course(lecture), lessons::book::read_course(uniform));
    CHECK(table ==
          "The lecture's experiments on trained models: 0 of 1 reproduced on the lecture's language, 1 of 1 on the "
          "uniform one.\n\n"
          "| where | finding | lecture | lecture's language | outcome | uniform language | outcome |\n"
          "|---|---|---|---|---|---|---|\n"
          "| 05 part 3 (§7.3) | RoPE extrapolates worst | 0.000 | 0.367 | not reproduced | 0.113 | reproduced |\n");
    // A run on the other language is refused, and so are both files' changes.
    CHECK_THROWS_WITH(
        lessons::book::languages_markdown(lessons::book::read_course(uniform), lessons::book::read_course(uniform)),
        Contains("05_modern_transformer ran on the uniform language, not the lecture"));
    const auto readme = test::scratch_path("readme_for_languages"), reference = test::scratch_path("reference");
    const std::string readme_before = std::string(lessons::book::kFindings.begin) + "\n" + lessons::book::kFindings.end;
    const std::string reference_before =
        std::string("# R\n") + lessons::book::kLanguages.begin + "\n| old |\n" + lessons::book::kLanguages.end + "\n";
    test::write_text(readme, readme_before);
    test::write_text(reference, reference_before);
    const FindingsRun wrong = run_findings(
        lecture, readme, fmt::format("--uniform '{}' --reference '{}'", lecture.string(), reference.string()));
    CHECK(wrong.status == 2);
    CHECK_THAT(wrong.err, Contains("ran on the lecture language, not the uniform"));
    CHECK(test::read_text(readme) == readme_before);
    CHECK(test::read_text(reference) == reference_before);
    const FindingsRun good = run_findings(
        lecture, readme, fmt::format("--uniform '{}' --reference '{}'", uniform.string(), reference.string()));
    INFO("stderr: " << good.err);
    CHECK(good.status == 0);
    CHECK(test::read_text(reference) ==
          std::string("# R\n") + lessons::book::kLanguages.begin + "\n" + table + lessons::book::kLanguages.end + "\n");
    CHECK_THAT(test::read_text(readme), Contains("| 05 part 3 (§7.3) | experiment | RoPE extrapolates worst here |"));
    // --reference only with --uniform
    CHECK(run_findings(lecture, readme, fmt::format("--reference '{}'", reference.string())).status == 2);
    std::filesystem::remove_all(lecture);
    std::filesystem::remove_all(uniform);
}

TEST_CASE("book: a report that is not a regular file or repeats a key does not read, and says why", "[lessons][book]") {
    // tools/findings refuses to write the findings table then: the
    // lesson's rows would vanish from it. A FIFO is never opened (the read
    // would block); a repeated key would let one claim hide another.
    const auto out = test::scratch_path("book_unreadable");
    std::filesystem::create_directories(out);
    Recorded r;
    lessons::book::write_pages(r.report, out);
    REQUIRE(::mkfifo((out / "03_gqa.json").c_str(), 0600) == 0);
    test::write_text(out / "04_sliding_window.json", R"({"title": "a", "title": "b", "parts": {}})");
    const auto course = lessons::book::read_course(out);
    REQUIRE(course.size() == 3);
    CHECK(course[0].readable);
    CHECK_FALSE(course[1].readable);
    CHECK(course[1].unreadable_because == "not a regular file");
    CHECK_FALSE(course[2].readable);
    CHECK_THAT(course[2].unreadable_because, Contains("duplicate key \"title\""));
}

TEST_CASE("math: a formula is MathML on the page and plain text on the terminal", "[lessons][book]") {
    namespace math = lessons::math;
    const std::string theta = "each pair turns by $\\theta_i = 10000^{-2(i-1)/d}$, for i < d";
    CHECK(math::html(theta) ==
          "each pair turns by <math><mrow><msub><mi>θ</mi><mi>i</mi></msub><mo>=</mo><msup><mn>10000</mn>"
          "<mrow><mo>−</mo><mn>2</mn><mo>(</mo><mi>i</mi><mo>−</mo><mn>1</mn><mo>)</mo><mo>/</mo><mi>d</mi></mrow>"
          "</msup></mrow></math>, for i &lt; d");
    CHECK(math::plain(theta) == "each pair turns by θᵢ = 10000^(−2(i−1)/d), for i < d");
    CHECK(math::plain("$R_j^\\top R_t = R_{t-j}$") == "RⱼᵀRₜ = Rₜ₋ⱼ");
    CHECK(math::plain("$W_{kv}$") == "W_(kv)");
    CHECK(math::plain("$\\frac{a+b}{2}$ and $\\sqrt{x}$") == "(a+b)/2 and √x");
    CHECK(math::html("$$x^2$$") == "<math display=\"block\"><mrow><msup><mi>x</mi><mn>2</mn></msup></mrow></math>");
    CHECK(math::html("$\\mathrm{RMSNorm}(x)$") ==
          "<math><mrow><mi mathvariant=\"normal\">RMSNorm</mi><mo>(</mo><mi>x</mi><mo>)</mo></mrow></math>");
    CHECK(math::plain("costs \\$5") == "costs $5");
    CHECK(math::plain("$\\left(x\\right) \\rightarrow y$") == "(x) → y");
    CHECK_THAT(math::html("$\\left(x\\right)$"), Contains("<mo stretchy=\"true\">)</mo>"));
    CHECK(math::plain("no formula") == "no formula");
    // a name from the code: <code> on the page, the bare name on the terminal
    CHECK(math::html("calls `ag::rope<float>` once") == "calls <code>ag::rope&lt;float&gt;</code> once");
    CHECK(math::plain("calls `ag::rope` once") == "calls ag::rope once");
    CHECK_THROWS_WITH(math::html("an unclosed `name"), Contains("unclosed `"));
    // A typo fails the lesson that wrote it, naming the command.
    CHECK_THROWS_WITH(math::html("$\\thetta$"), Contains("\\thetta"));
    CHECK_THROWS_AS(math::html("an unclosed $x"), std::invalid_argument);
    CHECK_THROWS_AS(math::html("$x^{2$"), std::invalid_argument);
    CHECK_THROWS_AS(math::html("$x}$"), std::invalid_argument);
    CHECK_THROWS_AS(math::html("$x^$"), std::invalid_argument);
    // and so does a report that records one
    std::FILE* printed = std::tmpfile();
    Report report(printed);
    report.section(1, "§0", "t", "s");
    CHECK_THROWS_AS(report.paragraph("$\\nope$"), std::invalid_argument);
    std::fclose(printed);
}

TEST_CASE("report: one precision per column, thousands separated", "[lessons][report]") {
    const lessons::Table t{
        "t",
        {"accuracy", "parameters", "perplexity", "tiny"},
        {{0.999333, 8030261248LL, 2.5261, 3.2e-11}, {1.0, 99648, 0.00116, 1.5e-9}, {0.78, 4096, 2.52, 0.0}}};
    const auto cells = lessons::printed_cells(t);
    CHECK(cells[0][0] == "0.9993");
    CHECK(cells[1][0] == "1.0000");
    CHECK(cells[2][0] == "0.7800");
    CHECK(cells[0][1] == "8,030,261,248");
    CHECK(cells[1][1] == "99,648");
    CHECK(cells[2][1] == "4,096");
    CHECK(cells[0][2] == "2.52610");  // five decimals: 0.00116 needs them for three digits
    CHECK(cells[1][2] == "0.00116");
    CHECK(cells[0][3] == "3.20e-11");  // scientific throughout
    CHECK(cells[2][3] == "0");
    CHECK(lessons::with_separators("-1234.5") == "-1,234.5");
    CHECK(lessons::with_separators("1e+06") == "1e+06");
    CHECK(lessons::with_separators("999") == "999");
    CHECK(lessons::Cell(12345678).str() == "12,345,678");
    CHECK(lessons::word_count("GQA is $h_q/h_{kv}$ times smaller") == 5);
}
