// nn::parse_strict_json: nlohmann's parser, less its leniency with repeated
// keys and unbounded nesting, and with plain messages.
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>
#include "catch.h"

#include "nn/json_strict.h"

using nn::parse_strict_json;

TEST_CASE("strict JSON: a key twice in one object is refused, at any depth", "[nn][json]") {
    CHECK_THROWS_AS(parse_strict_json(R"({"vocab": 68, "d_model": 64, "vocab": 999})"), std::invalid_argument);
    CHECK_THROWS_WITH(parse_strict_json(R"({"vocab": 68, "d_model": 64, "vocab": 999})"), "duplicate key \"vocab\"");
    CHECK_THROWS_WITH(parse_strict_json(R"([{"a": {"b": 1, "b": 2}}])"), "duplicate key \"b\"");
    CHECK_THROWS_WITH(parse_strict_json(R"({"a\"b": 1, "a\"b": 2})"), R"(duplicate key "a\"b")");
    // The same key in two objects, or after the object that held it closed, is fine.
    const auto j = parse_strict_json(R"({"z": {"x": 1}, "y": [{"x": 2}, {"x": 3}], "x": 4})");
    CHECK(j.dump() == R"({"z":{"x":1},"y":[{"x":2},{"x":3}],"x":4})");  // the text's order
}

TEST_CASE("strict JSON: an object of 10,000 keys but not 10,001", "[nn][json]") {
    // An ordered object finds each new key by a linear search: a checkpoint
    // header of 300,000 empty tensors took 136 s to read.
    const auto object = [](std::size_t keys) {
        std::string text = "{";
        for (std::size_t i = 0; i < keys; ++i) text += (i ? ",\"" : "\"") + std::to_string(i) + "\":0";
        return text + "}";
    };
    CHECK(parse_strict_json(object(nn::kMaxJsonKeys)).size() == nn::kMaxJsonKeys);
    CHECK_THROWS_WITH(parse_strict_json(object(nn::kMaxJsonKeys + 1)), "an object with more than 10000 keys");
    CHECK_THROWS_WITH(parse_strict_json("[" + object(nn::kMaxJsonKeys + 1) + "]"),
                      "an object with more than 10000 keys");
}

TEST_CASE("strict JSON: 256 levels of nesting but not 257, and nlohmann's errors without its prefix", "[nn][json]") {
    const auto nested = [](int levels) { return std::string(levels, '[') + std::string(levels, ']'); };
    CHECK_NOTHROW(parse_strict_json(nested(nn::kMaxJsonDepth)));
    CHECK_THROWS_WITH(parse_strict_json(nested(nn::kMaxJsonDepth + 1)), "nested deeper than 256 arrays/objects");
    CHECK_THROWS_WITH(parse_strict_json("{\"a\": " + nested(nn::kMaxJsonDepth) + "}"),
                      Catch::Contains("deeper than 256"));
    CHECK_THROWS_WITH(parse_strict_json(R"({"a": )"), Catch::StartsWith("parse error at line 1, column 7"));
    CHECK_THROWS_WITH(parse_strict_json("1e999"), Catch::Contains("number overflow"));
    CHECK_THROWS_AS(parse_strict_json(""), std::invalid_argument);
}
