#include "lessons/common/json.h"

#include <cmath>

#include <fmt/format.h>

namespace lessons::json {

std::string string(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                // Other control characters as \u00XX; UTF-8 bytes pass through.
                if (static_cast<unsigned char>(c) < 0x20)
                    out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
                else
                    out += c;
        }
    }
    return out + "\"";
}

std::string number(double x) {
    return std::isfinite(x) ? fmt::format("{:.17g}", x) : "null";
}

std::string integer(long long n) { return fmt::format("{}", n); }

std::string boolean(bool b) { return b ? "true" : "false"; }

std::string array(const std::vector<std::string>& items) {
    return fmt::format("[{}]", fmt::join(items, ", "));
}

std::string object(const std::vector<std::pair<std::string, std::string>>& members) {
    std::vector<std::string> parts;
    parts.reserve(members.size());
    for (const auto& [key, value] : members) parts.push_back(string(key) + ": " + value);
    return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

}  // namespace lessons::json
