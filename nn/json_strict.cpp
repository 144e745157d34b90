#include "nn/json_strict.h"

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace nn {

using Json = nlohmann::ordered_json;

Json parse_strict_json(std::string_view text) {
    // The parser calls back on every event; `depth` counts the arrays and
    // objects open around the one that starts (0 at the top).
    std::vector<std::set<std::string>> keys;  // of each open object
    const auto check = [&](int depth, Json::parse_event_t event, Json& parsed) {
        using E = Json::parse_event_t;
        if ((event == E::object_start || event == E::array_start) && depth >= kMaxJsonDepth)
            throw std::invalid_argument(fmt::format("nested deeper than {} arrays/objects", kMaxJsonDepth));
        if (event == E::object_start) keys.emplace_back();
        if (event == E::object_end) keys.pop_back();
        if (event == E::key && !keys.back().insert(parsed.get<std::string>()).second)
            throw std::invalid_argument(fmt::format("duplicate key {}", parsed.dump()));
        if (event == E::key && keys.back().size() > kMaxJsonKeys)
            throw std::invalid_argument(fmt::format("an object with more than {} keys", kMaxJsonKeys));
        return true;
    };
    try {
        return Json::parse(text.begin(), text.end(), check);
    } catch (const Json::exception& e) {  // a syntax error, invalid UTF-8, a number out of range
        std::string what = e.what();      // without nlohmann's "[json.exception.parse_error.101] "
        if (what.rfind("[json.exception.", 0) == 0) what.erase(0, what.find("] ") + 2);
        throw std::invalid_argument(what);
    }
}

}  // namespace nn
