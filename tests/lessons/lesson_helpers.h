#pragma once
// Helpers for the lesson tests: scratch files, running a lesson as its
// program would (argv in, exit status out) or into a Report kept in memory.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "catch.h"
#include "scratch.h"

#include "lessons/common/lesson.h"

namespace test {

inline std::string read_text(const std::filesystem::path& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

// What a stream written through a FILE* holds, from its start.
inline std::string read_stream(std::FILE* f) {
    std::rewind(f);
    std::string text;
    for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
    return text;
}

// The options of a --quick run whose figures and caches go to `out`: every
// part (part 0) or one, with `seeds` seeds.
inline lessons::Options quick_options(const std::filesystem::path& out, int part = 0, int seeds = 1) {
    lessons::Options options;
    options.quick = true;
    options.part = part;
    options.seeds = seeds;
    options.out = out.string();
    return options;
}

// run_lesson as main() would call it: {"--part", "1"} -> exit status. Its
// pages go to a scratch folder unless the arguments name one (--out).
inline int run_program(const lessons::Lesson& lesson, const std::vector<std::string>& args) {
    static const std::string out = scratch_path("run_program_out").string();
    std::vector<const char*> argv{lesson.name.c_str()};
    for (const auto& a : args) argv.push_back(a.c_str());
    if (std::find(args.begin(), args.end(), "--out") == args.end()) {
        argv.push_back("--out");
        argv.push_back(out.c_str());
    }
    return lessons::run_lesson(static_cast<int>(argv.size()), argv.data(), lesson);
}

// The parts' printed output goes to a scratch file; what they recorded is
// kept in `report`.
struct LessonRun {
    std::FILE* printed = std::tmpfile();
    lessons::Report report{printed};

    LessonRun(const lessons::Lesson& lesson, const lessons::Options& options) {
        lessons::run_parts(lesson, options, report);
    }
    ~LessonRun() { std::fclose(printed); }
    LessonRun(const LessonRun&) = delete;
    LessonRun& operator=(const LessonRun&) = delete;

    std::string output() const {
        std::rewind(printed);
        std::string text;
        for (int c; (c = std::fgetc(printed)) != EOF;) text += static_cast<char>(c);
        return text;
    }
};

// What the lesson book asks of every part of a run: at least one of the
// lecture's findings as a claim, each with a statement, our figure and a
// reason; every figure a file name inside `out` with a caption, an SVG
// there; no "FAILED" printed. Returns the figures' names in order.
inline std::vector<std::string> check_claims_and_figures(const LessonRun& run, const std::filesystem::path& out) {
    std::vector<std::string> figures;
    for (const auto& part : run.report.parts()) {
        INFO("part " << part.number);
        CHECK_FALSE(part.claims.empty());
        for (const auto& claim : part.claims) {
            INFO("claim " << claim.key);
            CHECK_FALSE(claim.statement.empty());
            CHECK_FALSE(claim.reason.empty());
            CHECK_FALSE(claim.ours.str().empty());
        }
        for (const auto& figure : part.figures) {
            INFO("figure " << figure.file);
            CHECK(figure.file.find('/') == std::string::npos);
            CHECK_FALSE(figure.caption.empty());
            CHECK_THAT(read_text(out / figure.file), Catch::Contains("<svg"));
            figures.push_back(figure.file);
        }
    }
    // a finding that does not reproduce is a result, never printed as a failure
    CHECK(run.output().find("FAILED") == std::string::npos);
    return figures;
}

// What every page of a run asks of its words: each part naming the files
// that compute it, each claim a verdict, and no internal name (a cached
// model's file, a snake_case key of one of its values, claims or tables)
// in a paragraph or a table's header.
inline void check_prose(const LessonRun& run) {
    std::vector<std::string> keys;
    for (const auto& part : run.report.parts()) {
        for (const auto& [key, value] : part.values) keys.push_back(key);
        for (const auto& claim : part.claims) keys.push_back(claim.key);
        for (const auto& table : part.tables) keys.push_back(table.name);
    }
    keys.erase(std::remove_if(keys.begin(), keys.end(),
                              [](const std::string& key) { return key.find('_') == std::string::npos; }),
               keys.end());
    const auto check_text = [&](const std::string& text) {
        INFO("in: " << text);
        CHECK(text.find(".safetensors") == std::string::npos);
        for (const std::string& key : keys) {
            INFO("key " << key);
            CHECK(text.find(key) == std::string::npos);
        }
    };
    for (const auto& part : run.report.parts()) {
        INFO("part " << part.number);
        CHECK_FALSE(part.sources.empty());
        for (const auto& claim : part.claims) {
            INFO("claim " << claim.key);
            CHECK_FALSE(claim.verdict.empty());
        }
        for (const auto& paragraph : part.paragraphs) check_text(paragraph);
        for (const auto& table : part.tables)
            for (const auto& column : table.columns) check_text(column);
    }
}

}  // namespace test
