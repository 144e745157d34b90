// json: parse and dump round trips, escapes, accessors and the errors for
// malformed input.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include "nn/json.h"

using json::Value;

// The message of the std::runtime_error that f throws, or "" when it throws
// nothing.
template <typename F>
static std::string error_of(F f) {
    try {
        f();
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

static std::string parse_error(const std::string& text) {
    return error_of([&] { json::parse(text); });
}

TEST_CASE("json parses every kind of value", "[nn][json]") {
    const Value v = json::parse(R"( {"n": null, "t": true, "f": false, "i": -12, "x": 2.5e-3,
                                     "s": "hi", "a": [1, [2, {}], []], "o": {"k": "v"}} )");
    REQUIRE(v.is_object());
    CHECK(v.size() == 8);
    CHECK(v.at("n").is_null());
    CHECK(v.at("t").as_bool() == true);
    CHECK(v.at("f").as_bool() == false);
    CHECK(v.at("i").as_int() == -12);
    CHECK(v.at("x").as_number() == 2.5e-3);
    CHECK(v.at("s").as_string() == "hi");
    CHECK(v.at("a").size() == 3);
    CHECK(v.at("a").at(1).at(0).as_number() == 2);
    CHECK(v.at("a").at(1).at(1).is_object());
    CHECK(v.at("a").at(2).size() == 0);
    CHECK(v.at("o").at("k").as_string() == "v");
    CHECK(v.contains("o"));
    CHECK_FALSE(v.contains("missing"));
}

TEST_CASE("json objects keep insertion order through parse and dump", "[nn][json]") {
    const std::string text = R"({"zeta":1,"alpha":2,"mid":[true,null,"x"]})";
    const Value v = json::parse(text);
    REQUIRE(v.as_object().size() == 3);
    CHECK(v.as_object()[0].first == "zeta");
    CHECK(v.as_object()[1].first == "alpha");
    CHECK(v.as_object()[2].first == "mid");
    CHECK(json::dump(v) == text);

    Value built;
    built["b"] = 1;
    built["a"] = "two";
    built["c"].push_back(3.5);
    built["b"] = 4;  // an existing key is overwritten in place
    CHECK(json::dump(built) == R"({"b":4,"a":"two","c":[3.5]})");
}

TEST_CASE("json numbers print short, integers as integers, and round-trip", "[nn][json]") {
    CHECK(json::dump(3.0) == "3");
    CHECK(json::dump(-17) == "-17");
    CHECK(json::dump(int64_t{34816}) == "34816");
    CHECK(json::dump(0.1) == "0.1");
    CHECK(json::dump(1e-300) == "1e-300");
    CHECK(json::dump(std::numeric_limits<double>::quiet_NaN()) == "null");
    CHECK(json::dump(std::numeric_limits<double>::infinity()) == "null");

    // Every one of these reads back as the same double, bit for bit.
    for (const double x : {0.1, 1.0 / 3.0, 2.0 / 3.0 * 1e-10, 6.02214076e23, 5e-324, 1.7976931348623157e308,
                           -123456.789, 9007199254740993.0, 1e16, 0.0}) {
        const std::string text = json::dump(x);
        INFO("x = " << x << ", dumped as " << text);
        CHECK(json::parse(text).as_number() == x);
    }
    CHECK(json::parse("-0").as_number() == 0.0);
    CHECK(std::signbit(json::parse("-0").as_number()));
    CHECK(json::parse("1E+2").as_number() == 100.0);
}

TEST_CASE("json strings escape on output and unescape on input", "[nn][json]") {
    const std::string raw = std::string("quote\" backslash\\ slash/ \b\f\n\r\t bell\x07 nul") + '\0' + "!";
    const std::string dumped = json::dump(raw);
    CHECK(dumped == R"("quote\" backslash\\ slash/ \b\f\n\r\t bell\u0007 nul\u0000!")");
    CHECK(json::parse(dumped).as_string() == raw);

    CHECK(json::parse(R"("a\/b")").as_string() == "a/b");
    CHECK(json::parse(R"("\u0041\u00e9\u20AC")").as_string() == "A\u00e9\u20ac");  // 1, 2 and 3 UTF-8 bytes
    // U+1F600 is the UTF-16 surrogate pair D83D DE00, F0 9F 98 80 in UTF-8.
    CHECK(json::parse(R"("\ud83d\ude00")").as_string() == "\xF0\x9F\x98\x80");
    // UTF-8 passes through both ways unchanged.
    CHECK(json::dump("caf\u00e9 \xF0\x9F\x98\x80") == "\"caf\u00e9 \xF0\x9F\x98\x80\"");
}

TEST_CASE("json dump with an indent puts one item per line", "[nn][json]") {
    const Value v = json::parse(R"({"a":[1,2],"b":{},"c":[],"d":{"e":null}})");
    CHECK(json::dump(v, 2) == "{\n"
                              "  \"a\": [\n"
                              "    1,\n"
                              "    2\n"
                              "  ],\n"
                              "  \"b\": {},\n"
                              "  \"c\": [],\n"
                              "  \"d\": {\n"
                              "    \"e\": null\n"
                              "  }\n"
                              "}");
    CHECK(json::parse(json::dump(v, 4)) == v);
    CHECK(json::parse(json::dump(v)) == v);
}

TEST_CASE("json accessors name the expected and the found type", "[nn][json]") {
    const Value v = json::parse(R"({"s": "text", "x": 1.5, "big": 1e300, "a": [1]})");
    CHECK(error_of([&] { v.at("s").as_number(); }) == "json: expected a number, found a string");
    CHECK(error_of([&] { v.at("x").as_string(); }) == "json: expected a string, found a number");
    CHECK(error_of([&] { v.at("x").as_array(); }) == "json: expected an array, found a number");
    CHECK(error_of([&] { v.at("a").at("k"); }) == "json: expected an object, found an array");
    CHECK(error_of([&] { v.at("nope"); }) == "json: missing key 'nope'");
    CHECK(error_of([&] { v.at("a").at(1); }) == "json: index 1 out of range (array of 1)");
    CHECK(error_of([&] { v.at("x").as_int(); }) == "json: expected a whole number, found 1.5");
    CHECK(error_of([&] { v.at("big").as_int(); }) == "json: expected a whole number, found 1e+300");
    CHECK(error_of([&] { v.at("s").as_bool(); }) == "json: expected a bool, found a string");
}

TEST_CASE("json refuses malformed input and says where", "[nn][json]") {
    struct Case {
        const char* text;
        const char* error;
    };
    const Case cases[] = {
        {"", "json: line 1 col 1: expected a value, found the end of the input"},
        {"   ", "json: line 1 col 4: expected a value, found the end of the input"},
        {"{\"a\": 1,}", "json: line 1 col 9: expected a string key, found '}'"},
        {"[1, 2", "json: line 1 col 6: expected ',' or ']', found the end of the input"},
        {"[1 2]", "json: line 1 col 4: expected ',' or ']', found '2'"},
        {"{\"a\" 1}", "json: line 1 col 6: expected ':', found '1'"},
        {"{\n  \"a\": 1\n  \"b\": 2\n}", "json: line 3 col 3: expected ',' or '}', found '\"'"},
        {"{\"a\": 1} x", "json: line 1 col 10: expected the end of the input, found trailing characters"},
        {"[1] [2]", "json: line 1 col 5: expected the end of the input, found trailing characters"},
        {"{\"a\": 1, \"a\": 2}", "json: line 1 col 10: duplicate key \"a\""},
        {"tru", "json: line 1 col 1: expected a value, found 't'"},
        {"nan", "json: line 1 col 1: expected a value, found 'n'"},
        {"01", "json: line 1 col 2: expected the end of the input, found trailing characters"},
        {"1.", "json: line 1 col 3: expected a digit, found the end of the input"},
        {"-", "json: line 1 col 2: expected a digit, found the end of the input"},
        {"1e", "json: line 1 col 3: expected a digit, found the end of the input"},
        {"+1", "json: line 1 col 1: expected a value, found '+'"},
        {"1e400", "json: line 1 col 1: number 1e400 is out of the range of double"},
        {"\"abc", "json: line 1 col 5: unterminated string"},
        {"\"a\tb\"", "json: line 1 col 3: control character byte 0x09 in a string (escape it)"},
        {"\"\\x\"", "json: line 1 col 3: invalid escape: a backslash followed by 'x'"},
        {"\"\\u12G4\"", "json: line 1 col 6: expected 4 hex digits after \\u, found 'G'"},
        {"\"\\ud83d\"", "json: line 1 col 8: high surrogate not followed by a \\u low surrogate"},
        {"\"\\ud83d\\u0041\"", "json: line 1 col 14: high surrogate not followed by a low surrogate"},
        {"\"\\ude00\"", "json: line 1 col 8: unpaired low surrogate in \\u escape"},
        {"'single'", "json: line 1 col 1: expected a value, found '''"},
    };
    for (const Case& c : cases) {
        INFO("input: " << c.text);
        CHECK(parse_error(c.text) == c.error);
    }
}

TEST_CASE("json refuses nesting deeper than 256", "[nn][json]") {
    const std::string ok = std::string(256, '[') + std::string(256, ']');
    CHECK(parse_error(ok).empty());
    const std::string deep = std::string(257, '[') + std::string(257, ']');
    CHECK(parse_error(deep) == "json: line 1 col 257: nested deeper than 256 arrays/objects");
    // A hostile depth fails cleanly instead of overflowing the stack.
    CHECK_FALSE(parse_error(std::string(1'000'000, '[')).empty());
}
