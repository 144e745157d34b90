#include "lessons/common/lesson.h"

#include <chrono>
#include <exception>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "autograd/engine.h"
#include "lessons/common/book.h"

namespace lessons {

CommandLine command_line(const Lesson& lesson) {
    CommandLine cli{
        lesson.name,  fmt::format("Lesson {}: {} (lecture 4 {})", lesson.name, lesson.title, lesson.section),
        {},           lesson.default_seeds,
        lesson.flags, lesson.farm_language == FarmLanguage::used};
    for (const auto& part : lesson.parts) cli.parts.push_back(part.section + "  " + part.title);
    return cli;
}

void run_parts(const Lesson& lesson, const Options& given, Report& report) {
    Options options = given;  // with every flag of the lesson, also when the options were built in code
    for (const ProgramFlag& flag : lesson.flags) options.flags.try_emplace(flag.name, flag.value);
    std::vector<std::pair<std::string, Cell>> settings{
        {"seeds", options.seeds}, {"quick", options.quick}, {"threads", ag::num_threads()}};
    if (lesson.farm_language == FarmLanguage::used) settings.emplace_back("language", options.language);
    for (const auto& [name, value] : options.flags) settings.emplace_back(name, value);
    report.lesson(lesson.name, lesson.title, lesson.section, std::move(settings));
    for (int n = 1; n <= static_cast<int>(lesson.parts.size()); ++n) {
        if (options.part != 0 && options.part != n) continue;
        const Part& part = lesson.parts[static_cast<size_t>(n - 1)];
        report.section(n, part.section, part.title, part.shows, part.sources);
        part.run(report, options);
    }
}

int run_lesson(int argc, const char* const* argv, const Lesson& lesson) {
    const CommandLine cli = command_line(lesson);
    const ParsedOptions parsed = parse_options(std::vector<std::string>(argv + 1, argv + argc), cli);
    if (!parsed.ok()) {
        fmt::print(stderr, "{}\n", usage_error(lesson.name, parsed.error));
        return 2;
    }
    const Options& options = parsed.options;
    if (options.help) {
        fmt::print("{}", usage(cli));
        return 0;
    }
    if (options.threads > 0) ag::set_num_threads(options.threads);

    Report report;
    const auto started = std::chrono::system_clock::now();
    const auto start = std::chrono::steady_clock::now();
    try {
        run_parts(lesson, options, report);
    } catch (const UsageError& e) {
        fmt::print(stderr, "{}\n", usage_error(lesson.name, e.what()));
        return 2;
    } catch (const std::exception& e) {
        const PartRecord* part = report.parts().empty() ? nullptr : &report.parts().back();
        fmt::print(stderr, "{}: error{}: {}\n", lesson.name,
                   part ? fmt::format(" in part {} ({})", part->number, part->title) : "", e.what());
        return 1;
    }
    report.set_run({fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::to_time_t(started))),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
    try {
        output_path(options, "");  // creates the folder
        book::write_pages(report, options.out);
        if (!options.json.empty()) book::write_atomically(options.json, report.to_json());
    } catch (const std::exception& e) {
        fmt::print(stderr, "{}: error: {}\n", lesson.name, e.what());
        return 1;
    }
    return 0;
}

}  // namespace lessons
