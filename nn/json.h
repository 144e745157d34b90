#pragma once
// A small JSON value: enough for checkpoint headers and model configs.
//
// Objects keep their keys in insertion order (a dumped header reads in the
// order it was written). Numbers are double, as in JavaScript; dump() prints
// the shortest text that parses back to the same double, so 3.0 prints as 3
// and 0.1 as 0.1. Every error is a std::runtime_error starting with "json:",
// and parse errors say where: "json: line 3 col 14: expected ',' or '}'".
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace json {

class Value;
using Array = std::vector<Value>;
using Object = std::vector<std::pair<std::string, Value>>;  // insertion order

class Value {
public:
    enum class Type { null, boolean, number, string, array, object };

    Value() = default;  // null
    Value(std::nullptr_t) {}
    Value(bool b) : v_(b) {}
    template <typename T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
    Value(T x) : v_(static_cast<double>(x)) {}
    Value(const char* s) : v_(std::string(s)) {}
    Value(std::string s) : v_(std::move(s)) {}
    Value(Array a) : v_(std::move(a)) {}
    Value(Object o) : v_(std::move(o)) {}

    Type type() const { return static_cast<Type>(v_.index()); }
    bool is_null() const { return type() == Type::null; }
    bool is_bool() const { return type() == Type::boolean; }
    bool is_number() const { return type() == Type::number; }
    bool is_string() const { return type() == Type::string; }
    bool is_array() const { return type() == Type::array; }
    bool is_object() const { return type() == Type::object; }

    // Each throws "json: expected a number, found a string" on a wrong type.
    bool as_bool() const;
    double as_number() const;
    int64_t as_int() const;  // also throws unless a whole number in int64 range
    const std::string& as_string() const;
    const Array& as_array() const;
    Array& as_array();
    const Object& as_object() const;
    Object& as_object();

    // Objects: lookup by key. at() throws "json: missing key 'k'".
    bool contains(std::string_view key) const;
    const Value& at(std::string_view key) const;
    // Inserts a null under a new key (a null Value becomes an empty object).
    Value& operator[](std::string_view key);
    // Arrays: at(i) throws when i is out of range.
    const Value& at(std::size_t i) const;
    void push_back(Value v);  // a null Value becomes an empty array
    std::size_t size() const;  // elements of an array, keys of an object

    friend bool operator==(const Value& a, const Value& b) { return a.v_ == b.v_; }
    friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }

private:
    // The order matches Type.
    std::variant<std::nullptr_t, bool, double, std::string, Array, Object> v_;
};

const char* type_name(Value::Type t);  // "null", "bool", "number", ...

// Strict RFC 8259 JSON: one value, surrounded only by whitespace, at most
// 256 arrays/objects deep; duplicate keys are refused.
Value parse(std::string_view text);

// indent < 0: compact, no spaces. indent >= 0: one item per line, nested
// items indented by `indent` more spaces. Non-finite numbers print as null.
std::string dump(const Value& v, int indent = -1);

}  // namespace json
