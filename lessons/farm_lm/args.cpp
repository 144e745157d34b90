#include "lessons/farm_lm/args.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace lessons::farm_lm {

Args::Args(const std::vector<std::string>& args, const std::set<std::string>& valued,
           const std::set<std::string>& switches) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg.rfind("--", 0) != 0) {
            positional_.push_back(arg);
            continue;
        }
        // "--flag value" or "--flag=value"
        std::string flag = arg, inline_value;
        const auto eq = arg.find('=');
        if (eq != std::string::npos) {
            flag = arg.substr(0, eq);
            inline_value = arg.substr(eq + 1);
        }
        if (values_.count(flag)) throw UsageError(fmt::format("{} is given twice", flag));
        if (switches.count(flag)) {
            if (eq != std::string::npos) throw UsageError(fmt::format("{} takes no value", flag));
            values_[flag] = "";
        } else if (valued.count(flag)) {
            if (eq != std::string::npos) {
                values_[flag] = inline_value;
            } else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
                values_[flag] = args[++i];
            } else {
                throw UsageError(fmt::format("{} needs a value", flag));
            }
            if (values_[flag].empty()) throw UsageError(fmt::format("{} needs a value", flag));
        } else {
            throw UsageError(fmt::format("unknown flag '{}'", flag));
        }
    }
}

std::optional<std::string> Args::value(const std::string& flag) const {
    const auto v = values_.find(flag);
    if (v == values_.end()) return std::nullopt;
    return v->second;
}

std::string Args::text(const std::string& flag, const std::string& fallback) const {
    return value(flag).value_or(fallback);
}

int64_t Args::integer(const std::string& flag, int64_t fallback, int64_t min, int64_t max) const {
    const auto text = value(flag);
    if (!text) return fallback;
    int64_t n = 0;
    const char* end = text->data() + text->size();
    const auto [stop, error] = std::from_chars(text->data(), end, n);
    if (error != std::errc() || stop != end)
        throw UsageError(fmt::format("{} wants a whole number, got '{}'", flag, *text));
    if (n < min || n > max) throw UsageError(fmt::format("{} must be between {} and {}, got {}", flag, min, max, n));
    return n;
}

uint64_t Args::seed(const std::string& flag, uint64_t fallback) const {
    const auto text = value(flag);
    if (!text) return fallback;
    uint64_t n = 0;
    const char* end = text->data() + text->size();
    const auto [stop, error] = std::from_chars(text->data(), end, n);
    if (error != std::errc() || stop != end)
        throw UsageError(fmt::format("{} wants a whole number >= 0, got '{}'", flag, *text));
    return n;
}

double Args::positive(const std::string& flag, double fallback) const {
    const auto text = value(flag);
    if (!text) return fallback;
    double x = 0;
    const char* end = text->data() + text->size();
    const auto [stop, error] = std::from_chars(text->data(), end, x);  // "0.001" or "1e-3", any locale
    if (error != std::errc() || stop != end || !std::isfinite(x) || x <= 0)
        throw UsageError(fmt::format("{} wants a number > 0, got '{}'", flag, *text));
    return x;
}

}  // namespace lessons::farm_lm
