// The shared lesson framework (lessons/common): the command line, the
// report and its JSON, and run_lesson's exit statuses.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <stdexcept>
#include <thread>

#include <zlib.h>
#include <nlohmann/json.hpp>

#include <fmt/ranges.h>
#include "catch.h"

#include "autograd/engine.h"
#include "lesson_helpers.h"
#include "lessons/common/encode.h"
#include "lessons/common/svg.h"
#include "tests/occurrences.h"

using lessons::Cell;
using lessons::Options;
using lessons::Report;

namespace {

const lessons::CommandLine kCli{"prog", "a test program", {"§1  one", "§2  two", "§3  three"}, 2};

lessons::ParsedOptions parse(const std::vector<std::string>& args) { return lessons::parse_options(args, kCli); }

// Part 1 records a value, a claim and a table; part 2 fails.
const lessons::Lesson& toy_lesson() {
    static const lessons::Lesson toy{
        "toy",
        "A toy lesson",
        "§0",
        1,
        {{"§0", "Records", "records what a part can record",
          [](Report& r, const Options& o) {
              r.value("seeds", o.seeds);
              r.claim({"fine", "a toy finding", "", 1, true, "it holds", lessons::ClaimKind::check, "The toy holds"});
              r.table("t", {"name", "x"}, {{"a", 1.5}, {"b\"q", 2}});
              r.takeaway("done");
          }},
         {"§0", "Fails", "throws", [](Report&, const Options&) { throw std::runtime_error("boom"); }}}};
    return toy;
}

// A lesson whose one part finds its flags do not fit the data (as lesson
// 01's --labels beyond the images there are).
const lessons::Lesson& misfit_lesson() {
    static const lessons::Lesson misfit{
        "misfit",
        "A lesson the flags do not fit",
        "§0",
        1,
        {{"§0", "Refuses", "refuses its flags", [](Report&, const Options&) {
              throw lessons::UsageError("--labels 9000: more than the 1000 images there are");
          }}}};
    return misfit;
}

// What `run` printed on file descriptor `fd` (1 or 2), where run_lesson
// writes.
std::string printed_on(int fd, const std::function<void()>& run) {
    std::fflush(nullptr);
    std::FILE* file = std::tmpfile();
    const int saved = ::dup(fd);
    ::dup2(::fileno(file), fd);
    run();
    std::fflush(nullptr);
    ::dup2(saved, fd);
    ::close(saved);
    std::rewind(file);
    std::string text;
    for (int c; (c = std::fgetc(file)) != EOF;) text += static_cast<char>(c);
    std::fclose(file);
    return text;
}

}  // namespace

TEST_CASE("options: defaults and every flag in both spellings", "[lessons][cli]") {
    const auto defaults = parse({});
    REQUIRE(defaults.ok());
    CHECK(defaults.options.part == 0);
    CHECK(defaults.options.seeds == 2);  // the program's own default
    CHECK_FALSE(defaults.options.quick);
    CHECK(defaults.options.threads == 0);
    CHECK(defaults.options.json.empty());
    CHECK(defaults.options.out == "out");
    CHECK_FALSE(defaults.options.help);

    const auto all =
        parse({"--part", "3", "--seeds=5", "--quick", "--threads", "2", "--json", "r.json", "--out=figures", "--help"});
    INFO(all.error);
    REQUIRE(all.ok());
    CHECK(all.options.part == 3);
    CHECK(all.options.seeds == 5);
    CHECK(all.options.quick);
    CHECK(all.options.threads == 2);
    CHECK(all.options.json == "r.json");
    CHECK(all.options.out == "figures");
    CHECK(all.options.help);
}

TEST_CASE("options: a program's own flag has its default, its range and its help", "[lessons][cli]") {
    lessons::CommandLine cli = kCli;
    cli.flags.push_back({"labels", "labelled images per seed", 300, 10, 8000});
    const auto defaults = lessons::parse_options({}, cli);
    REQUIRE(defaults.ok());
    CHECK(defaults.options.flag("labels") == 300);
    CHECK(lessons::parse_options({"--labels", "1000"}, cli).options.flag("labels") == 1000);
    CHECK(lessons::parse_options({"--labels=010"}, cli).options.flag("labels") == 10);
    CHECK(lessons::parse_options({"--labels", "9"}, cli).error == "--labels: Value 9 not in range 10 to 8000");
    CHECK(lessons::parse_options({"--labels", "x"}, cli).error == "--labels: wants a whole number, got 'x'");
    CHECK(lessons::parse_options({"--labels", "-5"}, cli).error == "--labels: wants a whole number, got '-5'");
    CHECK_FALSE(parse({"--labels", "100"}).ok());  // a program that declares no such flag
    CHECK_THAT(lessons::usage(cli),
               Catch::Contains("--labels") && Catch::Contains("labelled images per seed, 10 … 8000 (default 300)"));
    CHECK_THROWS_AS(defaults.options.flag("nope"), std::out_of_range);
}

TEST_CASE("options: --language only where a lesson uses the farm language", "[lessons][cli]") {
    lessons::CommandLine cli = kCli;
    cli.farm_language = true;
    CHECK(lessons::parse_options({}, cli).options.language == "lecture");
    CHECK(lessons::parse_options({"--language", "uniform"}, cli).options.language == "uniform");
    CHECK(lessons::parse_options({"--language=lecture"}, cli).options.language == "lecture");
    CHECK(lessons::parse_options({"--language", "zipf 2"}, cli).error == "--language: zipf 2 not in {lecture,uniform}");
    CHECK(lessons::parse_options({"--language"}, cli).error == "--language: 1 required L:{lecture,uniform} missing");
    CHECK_THAT(lessons::usage(cli), Catch::Contains("--language") && Catch::Contains("uniform"));
    // A lesson that never reads the farm language has no such flag.
    CHECK_FALSE(parse({"--language", "uniform"}).ok());
    CHECK_THAT(lessons::usage(kCli), !Catch::Contains("--language"));
}

TEST_CASE("options: every bad argument is an error", "[lessons][cli]") {
    const std::vector<std::vector<std::string>> bad{{"--bogus"},
                                                    {"stray"},
                                                    {"--part"},
                                                    {"--part", "x"},
                                                    {"--part", "0"},
                                                    {"--part", "4"},
                                                    {"--part", "2x"},
                                                    {"--part", ""},
                                                    {"--seeds", "0"},
                                                    {"--seeds", "-1"},
                                                    {"--seeds", "1.5"},
                                                    {"--threads", "0"},
                                                    {"--json"},
                                                    {"--json", "--quick"},
                                                    {"--out="},
                                                    {"--quick=yes"},
                                                    {"--seeds", "99999999999"}};
    for (const auto& args : bad) {
        const auto parsed = parse(args);
        INFO("args: " << fmt::format("{}", fmt::join(args, " ")));
        CHECK_FALSE(parsed.ok());
    }
    CHECK(parse({"--part", "9"}).error == "--part: Value 9 not in range 1 to 3");
    CHECK(parse({"--seeds", "x"}).error == "--seeds: wants a whole number, got 'x'");
    CHECK(parse({"--nope"}).error == "The following argument was not expected: --nope");
    CHECK(parse({"--json", "--quick"}).error == "--json: needs a value, got the flag '--quick'");
    CHECK(lessons::parse_options({"--part", "1"}, {"tool", "no parts", {}, 1}).error == "--part: tool has no parts");
}

TEST_CASE("options: numbers are read as the decimals they are written as", "[lessons][cli]") {
    CHECK(parse({"--seeds", "010"}).options.seeds == 10);  // not C's octal 8
    CHECK(parse({"--part=03"}).options.part == 3);
    CHECK(parse({"--threads", "0x2"}).error == "--threads: wants a whole number, got '0x2'");
    CHECK(parse({"--seeds", "+2"}).error == "--seeds: wants a whole number, got '+2'");
    CHECK(parse({"--seeds", "3", "--seeds", "4"}).options.seeds == 4);  // the last one counts
}

TEST_CASE("run_lesson: a bad argument is one line naming it, exit status 2", "[lessons][cli]") {
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Case> cases = {{{"--bogus"}, "not expected: --bogus"},
                                     {{"--part", "3"}, "--part: Value 3 not in range 1 to 2"},  // a range
                                     {{"--seeds", "0"}, "--seeds: Value 0 not in range"},
                                     {{"--threads", "two"}, "--threads: wants a whole number, got 'two'"},
                                     {{"--out"}, "--out"}};
    for (const Case& c : cases) {
        int status = 0;
        const std::string err = printed_on(2, [&] { status = test::run_program(toy_lesson(), c.args); });
        INFO("args: " << fmt::format("{}", fmt::join(c.args, " ")) << "\nstderr: " << err);
        CHECK(status == 2);
        CHECK(std::count(err.begin(), err.end(), '\n') == 1);
        CHECK_THAT(err, Catch::StartsWith("toy: ") && Catch::Contains(c.says) &&
                            Catch::EndsWith("(toy --help shows the usage)\n"));
    }
}

TEST_CASE("run_lesson: --help prints CLI11's help on stdout, exit status 0", "[lessons][cli]") {
    for (const char* flag : {"--help", "-h"}) {
        int status = 1;
        std::string err;
        const std::string out =
            printed_on(1, [&] { err = printed_on(2, [&] { status = test::run_program(toy_lesson(), {flag}); }); });
        CHECK(status == 0);
        CHECK(err.empty());
        CHECK_THAT(out, Catch::StartsWith("Lesson toy: A toy lesson") && Catch::Contains("Usage: toy [OPTIONS]") &&
                            Catch::Contains("--part N") && Catch::Contains("1  §0  Records"));
    }
}

TEST_CASE("usage names every flag and every part", "[lessons][cli]") {
    const std::string text = lessons::usage(kCli);
    for (const char* word : {"--part N", "--seeds N", "--quick", "--threads N", "--json FILE", "--out DIR", "--help",
                             "a test program", "§2  two", "1-3"})
        CHECK_THAT(text, Catch::Contains(word));
}

TEST_CASE("output_path creates the output folder", "[lessons][cli]") {
    Options options;
    options.out = (test::scratch_path("out") / "nested").string();
    const auto path = lessons::output_path(options, "figure.svg");
    CHECK(std::filesystem::is_directory(options.out));
    CHECK(path == std::filesystem::path(options.out) / "figure.svg");
}

TEST_CASE("cells print sensibly", "[lessons][report]") {
    CHECK(Cell(0.5).str() == "0.5");
    CHECK(Cell(0.0).str() == "0");
    CHECK(Cell(0.6931471805599453).str() == "0.693147");
    CHECK(Cell(3.2e-11).str() == "3.20e-11");
    CHECK(Cell(0.5).str(/*scientific=*/true) == "5.00e-01");
    CHECK(Cell(2e6).str() == "2.00e+06");
    CHECK(Cell(7).str() == "7");
    CHECK(Cell(true).str() == "yes");
    CHECK(Cell("text").str() == "text");
    CHECK(Cell(7).is_number());
    CHECK_FALSE(Cell("7").is_number());
}

TEST_CASE("report: tables are aligned and recorded", "[lessons][report]") {
    Options options;
    options.part = 1;
    const test::LessonRun run(toy_lesson(), options);
    const std::string out = run.output();
    // header, rule and rows of table "t" have the same width; numbers right-aligned
    CHECK_THAT(out, Catch::Contains("  name    x\n  ----  ---\n  a     1.5\n  b\"q   2.0\n"));
    const auto& part = run.report.part(1);
    CHECK(part.title == "Records");
    CHECK(part.value("seeds").number() == 1);
    CHECK(part.table("t").at(1, "x").number() == 2);
    CHECK(part.takeaway == "done");
    CHECK_THROWS_AS(run.report.part(2), std::out_of_range);
}

TEST_CASE("report: misuse is caught", "[lessons][report]") {
    std::FILE* printed = std::tmpfile();
    Report report(printed);
    CHECK_THROWS_AS(report.value("early", 1.0), std::logic_error);  // before section()
    report.section(1, "§0", "t", "s");
    report.value("x", 1.0);
    CHECK_THROWS_AS(report.value("x", 2.0), std::logic_error);                  // recorded twice
    CHECK_THROWS_AS(report.table("bad", {"a", "b"}, {{1}}), std::logic_error);  // short row
    std::fclose(printed);
}

TEST_CASE("run_lesson: exit statuses", "[lessons][cli]") {
    CHECK(test::run_program(toy_lesson(), {"--bogus"}) == 2);
    CHECK(test::run_program(toy_lesson(), {"--seeds", "zero"}) == 2);
    CHECK(test::run_program(toy_lesson(), {"--part", "3"}) == 2);
    CHECK(test::run_program(toy_lesson(), {"--help"}) == 0);
    CHECK(test::run_program(toy_lesson(), {"--part", "1"}) == 0);
    CHECK(test::run_program(toy_lesson(), {"--part", "2"}) == 1);  // the part throws
    CHECK(test::run_program(toy_lesson(), {}) == 1);
    const auto no_dir = test::scratch_path("missing") / "r.json";
    CHECK(test::run_program(toy_lesson(), {"--part", "1", "--json", no_dir.string()}) == 2);  // a bad --json
}

TEST_CASE("run_lesson: a part's UsageError is bad input, one line and exit status 2", "[lessons][cli]") {
    int status = 0;
    const std::string err = printed_on(2, [&] { status = test::run_program(misfit_lesson(), {}); });
    CHECK(status == 2);
    CHECK(err == "misfit: --labels 9000: more than the 1000 images there are (misfit --help shows the usage)\n");
}

TEST_CASE("run_lesson: an --out or --json that cannot be written is refused before any part runs", "[lessons][cli]") {
    const auto dir = test::scratch_path("outputs");
    std::filesystem::create_directories(dir);
    const auto plain = dir / "plain.txt", fifo = dir / "fifo";
    std::ofstream(plain) << "kept";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto out_with_cache = test::scratch_path("out_with_cache");
    std::filesystem::create_directories(out_with_cache / "models");
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::string unwritable = test::unwritable_folder();
    const std::vector<Case> cases = {
        {{"--out", plain.string()}, "--out: '" + plain.string() + "' exists and is not a folder"},
        {{"--out", (plain / "figures").string()}, "--out: '" + plain.string() + "' is not a folder"},
        {{"--out", unwritable + "/out"}, "--out: cannot write in the folder '" + unwritable + "'"},
        {{"--json", fifo.string()}, "--json: '" + fifo.string() + "' exists and is not a regular file"},
        {{"--json", dir.string()}, "--json: '" + dir.string() + "' is a folder"},
        {{"--json", (dir / "no" / "r.json").string()},
         "--json: the folder '" + (dir / "no").string() + "' does not exist"},
        {{"--json", unwritable + "/r.json"}, "--json: cannot write in the folder '" + unwritable + "'"},
        // an input of the lesson: its model cache, or a file that is not a report
        {{"--out", out_with_cache.string(), "--json", (out_with_cache / "models" / "gpt.safetensors").string()},
         "--json: '" + (out_with_cache / "models" / "gpt.safetensors").string() + "' is in the lessons' model cache"},
        {{"--json", plain.string()}, "--json: '" + plain.string() + "' exists and does not hold JSON"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args{"--part", "1"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        int status = 0;
        std::string err;
        const std::string out =
            printed_on(1, [&] { err = printed_on(2, [&] { status = test::run_program(toy_lesson(), args); }); });
        INFO("args: " << fmt::format("{}", fmt::join(args, " ")) << "\nstderr: " << err);
        CHECK(status == 2);
        CHECK(out.empty());  // no part ran
        CHECK(std::count(err.begin(), err.end(), '\n') == 1);
        CHECK_THAT(err, Catch::StartsWith("toy: ") && Catch::Contains(c.says));
    }
    CHECK(test::read_text(plain) == "kept");
    CHECK(std::filesystem::is_fifo(fifo));
    // Outputs that can be written: each check made a file there to see, and removed it.
    CHECK(parse({"--json", (dir / "r.json").string(), "--out", (dir / "new" / "figures").string()}).ok());
    CHECK(std::distance(std::filesystem::directory_iterator(dir), {}) == 2);

    // The default, out/ in the working directory, is checked as well.
    const auto cwd = std::filesystem::current_path();
    std::filesystem::current_path(dir);
    std::filesystem::rename(plain, dir / "out");
    const std::string error = parse({}).error;
    std::filesystem::current_path(cwd);
    CHECK(error == "--out: 'out' exists and is not a folder");
    std::filesystem::remove_all(dir);
}

TEST_CASE("options: --threads is capped at 4 × the cores", "[lessons][cli]") {
    const int cap = 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    CHECK(parse({"--threads", std::to_string(cap)}).options.threads == cap);
    CHECK(parse({"--threads", std::to_string(cap + 1)}).error ==
          fmt::format("--threads: Value {} not in range 1 to {}", cap + 1, cap));
    CHECK(parse({"--threads", "2147483647"}).error ==
          fmt::format("--threads: Value 2147483647 not in range 1 to {}", cap));
    CHECK_THAT(lessons::usage(kCli), Catch::Contains(fmt::format("(1 … {}: 4 × the cores)", cap)));
}

TEST_CASE("run_lesson: --json writes every recorded value", "[lessons][json]") {
    const auto path = test::scratch_path("toy.json");
    REQUIRE(test::run_program(toy_lesson(), {"--part", "1", "--seeds", "3", "--json", path.string()}) == 0);
    const std::string text = test::read_text(path);
    auto j = nlohmann::ordered_json::parse(text);
    CHECK(j.at("run").at("seconds").get<double>() >= 0.0);
    CHECK(j.at("run").at("started").get<std::string>().size() == 20);  // 2026-12-01T11:19:10Z
    j.erase("run");
    CHECK(j.dump() ==
          "{\"lesson\":\"toy\",\"title\":\"A toy lesson\",\"section\":\"§0\","
          "\"settings\":{\"seeds\":3,\"quick\":false,\"threads\":" +
              std::to_string(ag::num_threads()) +
              "},\"parts\":{\"1\":{\"section\":\"§0\",\"title\":\"Records\",\"shows\":\"records what a part can "
              "record\",\"sources\":[],\"values\":{\"seeds\":3.0},\"labels\":{},\"tables\":{\"t\":"
              "{\"columns\":[\"name\",\"x\"],\"rows\":[[\"a\",1.5],[\"b\\\"q\",2]]}},\"claims\":{\"fine\":"
              "{\"statement\":\"a toy finding\",\"lecture\":\"\",\"ours\":1,\"reproduced\":true,\"reason\":\"it "
              "holds\",\"kind\":\"check\",\"verdict\":\"The toy "
              "holds\"}},\"items\":[{\"value\":\"seeds\"},{\"claim\":\"fine\"},{"
              "\"table\":\"t\"}],"
              "\"takeaway\":\"done\"}}}");
}

TEST_CASE("report JSON: every number reads back as the same double, non-finite as null", "[lessons][json]") {
    std::FILE* printed = std::tmpfile();
    Report report(printed);
    report.lesson("t", "title", "§0", {{"seeds", 1}});
    report.section(1, "§0", "numbers", "s");
    const std::vector<double> xs = {0.1, 1.0 / 3.0, 3.2e-11, -6.02214076e23, 5e-324, 2.0, 1e300};
    for (size_t i = 0; i < xs.size(); ++i) report.value("x" + std::to_string(i), xs[i]);
    report.value("nan", std::numeric_limits<double>::quiet_NaN());
    report.value("inf", -std::numeric_limits<double>::infinity());
    report.table("cells", {"text", "whole", "yes"}, {{"a\"b\\c\nd\te\x01 §", size_t{3}, false}});
    std::fclose(printed);
    const std::string text = report.to_json();
    CHECK(std::count(text.begin(), text.end(), '\n') == 1);  // one line
    const auto j = nlohmann::ordered_json::parse(text);
    const auto& values = j.at("parts").at("1").at("values");
    for (size_t i = 0; i < xs.size(); ++i) CHECK(values.at("x" + std::to_string(i)).get<double>() == xs[i]);
    CHECK(values.at("nan").is_null());
    CHECK(values.at("inf").is_null());
    const auto& row = j.at("parts").at("1").at("tables").at("cells").at("rows").at(0);
    CHECK(row.at(0) == "a\"b\\c\nd\te\x01 §");
    CHECK(row.at(1).is_number_integer());
    CHECK(row.at(1) == 3);
    CHECK(row.at(2) == false);
}

TEST_CASE("svg: a line plot has one polyline per series and a legend", "[lessons][svg]") {
    const auto path = test::scratch_path("plot.svg");
    lessons::svg::LinePlot plot{"Loss <per step>", "step", "loss"};
    plot.series.push_back({"a & b", {1, 2, 3}, {3, 2, 1}});
    plot.series.push_back({"c", {1, 2, 3}, {1, std::nan(""), 2}});
    lessons::svg::write(path, plot);
    const std::string text = test::read_text(path);
    CHECK(text.rfind("<svg", 0) == 0);
    CHECK(test::occurrences(text, "<polyline") == 2);
    CHECK(text.find("Loss &lt;per step&gt;") != std::string::npos);
    CHECK(text.find("a &amp; b") != std::string::npos);
    CHECK(text.find("nan") == std::string::npos);
    std::filesystem::remove(path);
}

TEST_CASE("svg: guides are grey, without markers, each with its own dashes in the plot and the legend",
          "[lessons][svg]") {
    const auto path = test::scratch_path("guide.svg");
    lessons::svg::LinePlot plot{"t", "T", "ms"};
    plot.markers = true;
    plot.series.push_back({"data", {1, 2, 4}, {1, 3, 17}});
    plot.series.push_back({"∝ T²", {1, 2, 4}, {1, 4, 16}, true});
    plot.series.push_back({"∝ T", {1, 2, 4}, {1, 2, 4}, true});
    lessons::svg::write(path, plot);
    const std::string text = test::read_text(path);
    CHECK(test::occurrences(text, "<circle") == 3);                   // the data's points only
    CHECK(test::occurrences(text, "stroke=\"#1f77b4\"") == 2);        // the data keeps the first colour
    CHECK(test::occurrences(text, "stroke-dasharray=\"8 4\"") == 2);  // the first guide and its legend entry
    CHECK(test::occurrences(text, "stroke-dasharray=\"2 3\"") == 2);  // the second, dashed otherwise
    CHECK(test::occurrences(text, ">∝ T²</text>") == 1);
    std::filesystem::remove(path);
}

TEST_CASE("svg: a scatter plot draws its points as dots, nothing joining them; guides stay lines", "[lessons][svg]") {
    const auto path = test::scratch_path("scatter.svg");
    lessons::svg::LinePlot plot{"t", "weight", "accuracy"};
    plot.lines = false;
    plot.series.push_back({"a", {0.1, 0.5, 0.9}, {0.2, 0.4, 1.0}});
    plot.series.push_back({"b", {0.3, 0.7}, {0.5, std::nan("")}});
    plot.series.push_back({"threshold", {0.6, 0.6}, {0, 1}, true});
    lessons::svg::write(path, plot);
    const std::string text = test::read_text(path);
    CHECK(test::occurrences(text, "<circle") == 3 + 1 + 2);  // the finite points, and a dot in the legend per series
    CHECK(test::occurrences(text, "<polyline") == 1);        // the guide alone
    CHECK(test::occurrences(text, "stroke-dasharray=\"8 4\"") == 2);  // the guide and its legend entry
    CHECK(test::occurrences(text, "stroke=\"#1f77b4\"") == 0);        // no line in the first series' colour
    CHECK(test::occurrences(text, "fill=\"#1f77b4\"") == 3 + 1);
    std::filesystem::remove(path);
}

TEST_CASE("svg: a log axis has enough ticks to read a value off", "[lessons][svg]") {
    const auto path = test::scratch_path("log.svg");
    lessons::svg::LinePlot plot{"t", "T", "ms"};
    plot.series.push_back({"s", {1, 10, 100, 1000, 1e4, 1e5, 1e6}, {0.3, 0.5, 0.8, 1.2, 2.0, 3.1, 4.0}});
    plot.log_x = plot.log_y = true;
    lessons::svg::write(path, plot);
    const std::string text = test::read_text(path);
    // y spans about one decade (0.3 … 4): 1, 2, 5 in each, so 0.5, 1 and 2
    for (const char* y : {">0.5</text>", ">1</text>", ">2</text>"}) CHECK(test::occurrences(text, y) >= 1);
    // x spans six decades: powers of ten only, every one of them
    for (const char* x : {">1</text>", ">10</text>", ">100</text>", ">1000</text>", ">1e+04</text>", ">1e+06</text>"})
        CHECK(test::occurrences(text, x) >= 1);
    CHECK(test::occurrences(text, ">20</text>") == 0);
    std::filesystem::remove(path);
}

TEST_CASE("svg: a heat-map grid draws every cell of every panel", "[lessons][svg]") {
    const auto path = test::scratch_path("grid.svg");
    lessons::svg::HeatmapGrid grid{"masks", 2};
    grid.panels.push_back({"2x3", {{0, 1, 2}, {3, 4, 5}}});
    grid.panels.push_back({"1x1", {{7}}, 0, 0, true});
    lessons::svg::write(path, grid);
    const std::string text = test::read_text(path);
    CHECK(test::occurrences(text, "<rect x=") == 7);  // 6 + 1 cells
    CHECK(text.find(">7</text>") != std::string::npos);
    std::filesystem::remove(path);
}

TEST_CASE("svg: a large map is one embedded PNG with the same colours", "[lessons][svg]") {
    const auto path = test::scratch_path("digit.svg");
    lessons::svg::HeatmapGrid grid{"digits", 2};
    std::vector<std::vector<double>> digit(28, std::vector<double>(28, 0.0));
    digit[3][5] = 1.0;
    grid.panels.push_back({"28x28", digit});
    grid.panels.push_back({"small", {{0, 1}, {2, 3}}});
    lessons::svg::write(path, grid);
    const std::string text = test::read_text(path);
    CHECK(test::occurrences(text, "<image ") == 1);
    CHECK(test::occurrences(text, "href=\"data:image/png;base64,iVBORw0KGgo") == 1);  // the PNG signature
    CHECK(test::occurrences(text, "<rect x=") == 4);                                  // only the small map's cells
    CHECK(text.size() < 4000);
    std::filesystem::remove(path);
}

TEST_CASE("encode: base64 and a PNG whose chunks and pixels read back", "[lessons][svg]") {
    CHECK(lessons::encode::base64("") == "");
    CHECK(lessons::encode::base64("f") == "Zg==");
    CHECK(lessons::encode::base64("fo") == "Zm8=");
    CHECK(lessons::encode::base64("foo") == "Zm9v");
    CHECK(lessons::encode::base64(std::string("\xff\x00\x80", 3)) == "/wCA");

    const std::vector<uint8_t> rgb{255, 0, 0, 0, 255, 0, 0, 0, 255, 1, 2, 3, 4, 5, 6, 7, 8, 9};  // 3 x 2
    const std::string png = lessons::encode::png_rgb(3, 2, rgb);
    REQUIRE(png.substr(0, 8) == "\x89PNG\r\n\x1a\n");
    const auto u32 = [&](size_t at) {
        uint32_t v = 0;
        for (size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(png[at + i]);
        return v;
    };
    // chunks: IHDR (13 bytes: 3 x 2, 8-bit RGB), IDAT, IEND, each with a CRC-32 of type + data
    std::vector<std::string> types;
    std::string idat;
    for (size_t at = 8; at < png.size();) {
        const uint32_t length = u32(at);
        const std::string type = png.substr(at + 4, 4), data = png.substr(at + 8, length);
        types.push_back(type);
        const std::string body = type + data;
        CHECK(u32(at + 8 + length) ==
              crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
        if (type == "IHDR") CHECK(data == std::string("\0\0\0\x03\0\0\0\x02\x08\x02\0\0\0", 13));
        if (type == "IDAT") idat = data;
        at += 12 + length;
    }
    CHECK(types == std::vector<std::string>{"IHDR", "IDAT", "IEND"});
    std::string raw(2 * (1 + 9), '\0');
    uLongf size = raw.size();
    REQUIRE(uncompress(reinterpret_cast<Bytef*>(raw.data()), &size, reinterpret_cast<const Bytef*>(idat.data()),
                       static_cast<uLong>(idat.size())) == Z_OK);
    CHECK(size == raw.size());
    CHECK(raw[0] == '\0');  // filter type none before each row
    CHECK(raw.substr(1, 9) == std::string(reinterpret_cast<const char*>(rgb.data()), 9));
    CHECK(raw.substr(11, 9) == std::string(reinterpret_cast<const char*>(rgb.data()) + 9, 9));
    CHECK_THROWS_WITH(lessons::encode::png_rgb(3, 3, rgb),
                      Catch::Contains("3x3 pixels") && Catch::Contains("18 bytes"));
    CHECK_THROWS_AS(lessons::encode::png_rgb(0, 2, {}), std::invalid_argument);
}

TEST_CASE("svg: data that cannot be drawn is refused with the file's name", "[lessons][svg]") {
    const auto path = test::scratch_path("bad.svg");
    lessons::svg::LinePlot ragged{"t", "x", "y"};
    ragged.series.push_back({"s", {1, 2}, {1}});
    CHECK_THROWS_WITH(lessons::svg::write(path, ragged), Catch::Contains("bad.svg") && Catch::Contains("2 x and 1 y"));
    lessons::svg::LinePlot log_plot{"t", "x", "y"};
    log_plot.log_y = true;
    log_plot.series.push_back({"s", {1, 2}, {1, 0}});
    CHECK_THROWS_WITH(lessons::svg::write(path, log_plot), Catch::Contains("log axis"));
    lessons::svg::HeatmapGrid grid{"g", 1};
    grid.panels.push_back({"ragged", {{1, 2}, {3}}});
    CHECK_THROWS_WITH(lessons::svg::write(path, grid), Catch::Contains("rows of different lengths"));
    CHECK_THROWS_WITH(lessons::svg::write("/nonexistent/dir/x.svg", lessons::svg::LinePlot{}),
                      Catch::Contains("cannot write"));
}

TEST_CASE("svg: every figure fits the book's column, its text at 12 px", "[lessons][svg]") {
    const auto path = test::scratch_path("wide.svg");
    lessons::svg::LinePlot plot{std::string(200, 'x') + " a title longer than the figure is wide", "step", "loss"};
    plot.series.push_back({"a series with a rather long name in the legend", {1, 2}, {1, 2}});
    lessons::svg::write(path, plot);
    const std::string text = test::read_text(path);
    CHECK_THAT(text, Catch::Contains("width=\"640\"") && Catch::Contains("font-size=\"12\""));
    CHECK_THAT(text, Catch::Contains(">a title longer than the figure is wide</text>"));  // wrapped: its own line
    std::filesystem::remove(path);
}

TEST_CASE("svg: error bars, reference lines and named categories", "[lessons][svg]") {
    const auto path = test::scratch_path("dots.svg");
    lessons::svg::LinePlot plot{"test error over seeds", "method", "test error"};
    plot.x_categories = {"SGD", "RBM pre-training"};
    plot.lines = false;
    plot.series.push_back({"mean, min-max", {0, 1}, {0.2, 0.1}, false, {0.15, 0.05}, {0.3, 0.12}});
    plot.references.push_back({0.5, "chance"});
    lessons::svg::write(path, plot);
    const std::string text = test::read_text(path);
    CHECK(test::occurrences(text, "<path d=\"M") == 2);  // one bar per point
    CHECK_THAT(text, Catch::Contains(">SGD</text>") && Catch::Contains(">chance</text>"));
    CHECK_THAT(text, Catch::Contains("stroke-dasharray=\"6 3\""));  // the reference line
    CHECK(text.find("0.5") != std::string::npos);                   // the y axis reaches the reference

    lessons::svg::LinePlot bad = plot;
    bad.series[0].high = {0.3};
    CHECK_THROWS_WITH(lessons::svg::write(path, bad), Catch::Contains("error bars"));
    bad = plot;
    bad.series[0].high = {0.1, 0.12};  // below its low
    CHECK_THROWS_WITH(lessons::svg::write(path, bad), Catch::Contains("runs from"));
    bad = plot;
    bad.series[0].x = {0, 2};
    CHECK_THROWS_WITH(lessons::svg::write(path, bad), Catch::Contains("none of the 2 categories"));
    std::filesystem::remove(path);
}

TEST_CASE("svg: heat-map ticks, marked cells and row headings", "[lessons][svg]") {
    const auto path = test::scratch_path("ticks.svg");
    lessons::svg::HeatmapGrid grid{"attention", 1};
    grid.row_titles = {"short prefix"};
    lessons::svg::Heatmap& map = grid.panels.emplace_back();
    map.values = {{1, 0, 0}, {0.5, 0.5, 0}, {0.2, 0.3, 0.5}};
    map.x_ticks = {"the", "cow", "runs"};
    map.y_ticks = {"the", "cow", "runs"};
    map.marked = {{2, 1}};
    map.marked_label = "the subject";
    lessons::svg::write(path, grid);
    const std::string text = test::read_text(path);
    CHECK(test::occurrences(text, ">cow</text>") == 2);  // under a column and left of a row
    CHECK_THAT(text, Catch::Contains(">short prefix</text>") && Catch::Contains(">the subject</text>"));
    CHECK(test::occurrences(text, "stroke=\"#ff7f0e\"") == 2);  // the marked cell and its legend

    lessons::svg::HeatmapGrid bad = grid;
    bad.panels[0].x_ticks.pop_back();
    CHECK_THROWS_WITH(lessons::svg::write(path, bad), Catch::Contains("3 columns and 2 x ticks"));
    bad = grid;
    bad.panels[0].marked = {{3, 0}};
    CHECK_THROWS_WITH(lessons::svg::write(path, bad), Catch::Contains("outside"));
    bad = grid;
    bad.panels[0].values.assign(40, std::vector<double>(40, 0.5));
    bad.panels[0].x_ticks.clear(), bad.panels[0].y_ticks.clear(), bad.panels[0].marked.clear();
    bad.panels[0].numbers = true;  // 40 cells across leave no room for digits
    CHECK_THROWS_WITH(lessons::svg::write(path, bad), Catch::Contains("too small"));
    std::filesystem::remove(path);
}
