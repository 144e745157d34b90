#include "lessons/common/cli.h"

#include <charconv>
#include <climits>
#include <optional>

#include <fmt/format.h>

namespace lessons {
namespace {

// The whole of `text` as an int, or nothing ("12x", "" and "1e3" are not).
std::optional<int> whole_number(std::string_view text) {
    int value = 0;
    const char* end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(text.data(), end, value);
    if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
    return value;
}

struct NumericFlag {
    const char* name;
    int* target;
    int min, max;
};

}  // namespace

ParsedOptions parse_options(const std::vector<std::string>& args, const CommandLine& cli) {
    ParsedOptions parsed;
    Options& o = parsed.options;
    o.seeds = cli.default_seeds;
    const int n_parts = static_cast<int>(cli.parts.size());
    const NumericFlag numeric[] = {{"--part", &o.part, 1, n_parts},
                                   {"--seeds", &o.seeds, 1, INT_MAX},
                                   {"--threads", &o.threads, 1, INT_MAX}};
    const auto fail = [&](std::string message) {
        parsed.error = std::move(message);
        return parsed;
    };

    for (size_t i = 0; i < args.size(); ++i) {
        // "--flag value" or "--flag=value"
        std::string flag = args[i];
        std::optional<std::string> inline_value;
        if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
            inline_value = flag.substr(eq + 1);
            flag.resize(eq);
        }
        const auto value = [&]() -> std::optional<std::string> {
            if (inline_value) return inline_value;
            if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) return args[++i];
            return std::nullopt;
        };

        if (flag == "--quick" || flag == "--help") {
            if (inline_value) return fail(fmt::format("{} takes no value", flag));
            (flag == "--quick" ? o.quick : o.help) = true;
        } else if (flag == "--json" || flag == "--out") {
            const auto text = value();
            if (!text || text->empty()) return fail(fmt::format("{} needs a value", flag));
            (flag == "--json" ? o.json : o.out) = *text;
        } else {
            const NumericFlag* known = nullptr;
            for (const auto& f : numeric)
                if (flag == f.name) known = &f;
            if (!known) return fail(fmt::format("unknown argument '{}'", args[i]));
            const auto text = value();
            if (!text) return fail(fmt::format("{} needs a value", flag));
            const auto n = whole_number(*text);
            if (!n) return fail(fmt::format("{} wants a whole number, got '{}'", flag, *text));
            if (known->max < known->min)
                return fail(fmt::format("{}: {} has no parts", flag, cli.program));
            if (*n < known->min || *n > known->max)
                return fail(known->max == INT_MAX
                                ? fmt::format("{} must be at least {}, got {}", flag, known->min, *n)
                                : fmt::format("{} must be between {} and {}, got {}", flag,
                                              known->min, known->max, *n));
            *known->target = *n;
        }
    }
    return parsed;
}

std::string usage(const CommandLine& cli) {
    const int n_parts = static_cast<int>(cli.parts.size());
    std::string text = fmt::format(
        "usage: {} [--part N] [--seeds N] [--quick] [--threads N] [--json FILE] [--out DIR] [--help]\n"
        "{}\n\n"
        "  --part N      run only part N{} (default: every part, in order)\n"
        "  --seeds N     run seeds 0 … N-1 (default {})\n"
        "  --quick       tiny settings that finish in seconds (used by the tests)\n"
        "  --threads N   OpenMP threads for the kernels; results do not depend on it\n"
        "  --json FILE   write every reported number to FILE as JSON\n"
        "  --out DIR     figures and cached checkpoints (default out/)\n"
        "  --help        show this help\n",
        cli.program, cli.about, n_parts > 0 ? fmt::format(", 1-{}", n_parts) : "",
        cli.default_seeds);
    if (n_parts > 0) text += "\nparts:\n";
    for (int p = 0; p < n_parts; ++p) text += fmt::format("  {}  {}\n", p + 1, cli.parts[p]);
    return text;
}

std::filesystem::path output_path(const Options& options, std::string_view name) {
    std::filesystem::create_directories(options.out);
    return std::filesystem::path(options.out) / name;
}

}  // namespace lessons
