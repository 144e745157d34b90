#include "nn/json.h"

#include <charconv>
#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace json {

// ---- Value ------------------------------------------------------------------

const char* type_name(Value::Type t) {
    static const char* const names[] = {"null", "bool", "number", "string", "array", "object"};
    return names[static_cast<int>(t)];
}

// "a number", "an array", "null"
static std::string a_type(Value::Type t) {
    if (t == Value::Type::null) return "null";
    return (t == Value::Type::array || t == Value::Type::object ? "an " : "a ") + std::string(type_name(t));
}

// std::get with a JSON error: "json: expected a number, found a string".
// V is the variant, const or not.
template <typename T, typename V>
static auto& get(V& v, Value::Type want) {
    if (auto* p = std::get_if<T>(&v)) return *p;
    throw std::runtime_error(
        fmt::format("json: expected {}, found {}", a_type(want), a_type(static_cast<Value::Type>(v.index()))));
}

bool Value::as_bool() const { return get<bool>(v_, Type::boolean); }
double Value::as_number() const { return get<double>(v_, Type::number); }
const std::string& Value::as_string() const { return get<std::string>(v_, Type::string); }
const Array& Value::as_array() const { return get<Array>(v_, Type::array); }
Array& Value::as_array() { return get<Array>(v_, Type::array); }
const Object& Value::as_object() const { return get<Object>(v_, Type::object); }
Object& Value::as_object() { return get<Object>(v_, Type::object); }

int64_t Value::as_int() const {
    const double x = as_number();
    // 2^63 is exact in double; the range is [-2^63, 2^63).
    if (x != std::floor(x) || !(x >= -0x1p63 && x < 0x1p63))
        throw std::runtime_error(fmt::format("json: expected a whole number, found {}", x));
    return static_cast<int64_t>(x);
}

bool Value::contains(std::string_view key) const {
    for (const auto& [k, _] : as_object())
        if (k == key) return true;
    return false;
}

const Value& Value::at(std::string_view key) const {
    for (const auto& [k, v] : as_object())
        if (k == key) return v;
    throw std::runtime_error(fmt::format("json: missing key '{}'", key));
}

Value& Value::operator[](std::string_view key) {
    if (is_null()) v_ = Object{};
    Object& o = as_object();
    for (auto& [k, v] : o)
        if (k == key) return v;
    return o.emplace_back(std::string(key), Value()).second;
}

const Value& Value::at(std::size_t i) const {
    const Array& a = as_array();
    if (i >= a.size()) throw std::runtime_error(fmt::format("json: index {} out of range (array of {})", i, a.size()));
    return a[i];
}

void Value::push_back(Value v) {
    if (is_null()) v_ = Array{};
    as_array().push_back(std::move(v));
}

std::size_t Value::size() const { return is_object() ? as_object().size() : as_array().size(); }

// ---- parse ------------------------------------------------------------------

namespace {

constexpr int kMaxDepth = 256;

// The two-character escapes \" \\ \b \f \n \r \t and the characters they
// stand for; "\/" is also read (as '/') but never written.
constexpr std::string_view kEscaped = "\"\\bfnrt";
constexpr std::string_view kUnescaped = "\"\\\b\f\n\r\t";

class Parser {
public:
    explicit Parser(std::string_view text) : s_(text) {}

    Value document() {
        Value v = value(0);
        skip_space();
        if (pos_ != s_.size()) fail("expected the end of the input, found trailing characters");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        int line = 1, col = 1;
        for (std::size_t i = 0; i < pos_ && i < s_.size(); ++i) {
            if (s_[i] == '\n') ++line, col = 1;
            else ++col;
        }
        throw std::runtime_error(fmt::format("json: line {} col {}: {}", line, col, what));
    }
    std::string found() const {
        if (pos_ >= s_.size()) return "the end of the input";
        const char c = s_[pos_];
        return c >= 0x20 && c < 0x7f ? fmt::format("'{}'", c) : fmt::format("byte 0x{:02x}", static_cast<unsigned char>(c));
    }
    void skip_space() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
    }
    bool eat(char c) {
        skip_space();
        if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
        return false;
    }
    void expect(char c) {
        if (!eat(c)) fail(fmt::format("expected '{}', found {}", c, found()));
    }
    bool literal(std::string_view word) {
        if (s_.substr(pos_, word.size()) != word) return false;
        pos_ += word.size();
        return true;
    }

    Value value(int depth) {
        skip_space();
        if (pos_ >= s_.size()) fail("expected a value, found the end of the input");
        const char c = s_[pos_];
        if (c == '{' || c == '[') {
            if (depth >= kMaxDepth) fail(fmt::format("nested deeper than {} arrays/objects", kMaxDepth));
            return c == '{' ? object(depth + 1) : array(depth + 1);
        }
        if (c == '"') return string();
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        if (literal("true")) return true;
        if (literal("false")) return false;
        if (literal("null")) return nullptr;
        fail("expected a value, found " + found());
    }

    Value object(int depth) {
        ++pos_;  // '{'
        Object o;
        std::set<std::string> seen;
        if (eat('}')) return o;
        do {
            skip_space();
            if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string key, found " + found());
            const std::size_t key_pos = pos_;
            std::string key = string();
            if (!seen.insert(key).second) {
                pos_ = key_pos;
                fail(fmt::format("duplicate key \"{}\"", key));
            }
            expect(':');
            Value v = value(depth);
            o.emplace_back(std::move(key), std::move(v));
        } while (eat(','));
        if (!eat('}')) fail("expected ',' or '}', found " + found());
        return o;
    }

    Value array(int depth) {
        ++pos_;  // '['
        Array a;
        if (eat(']')) return a;
        do a.push_back(value(depth));
        while (eat(','));
        if (!eat(']')) fail("expected ',' or ']', found " + found());
        return a;
    }

    // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    Value number() {
        const std::size_t start = pos_;
        auto digits = [&] {
            const std::size_t from = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
            if (pos_ == from) fail("expected a digit, found " + found());
        };
        if (s_[pos_] == '-') ++pos_;
        if (pos_ < s_.size() && s_[pos_] == '0') ++pos_;
        else digits();
        if (pos_ < s_.size() && s_[pos_] == '.') ++pos_, digits();
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            ++pos_;
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
            digits();
        }
        double x = 0.0;
        const auto [end, ec] = std::from_chars(s_.data() + start, s_.data() + pos_, x);
        if (ec != std::errc() || end != s_.data() + pos_) {
            const std::string_view text = s_.substr(start, pos_ - start);
            pos_ = start;
            fail(fmt::format("number {} is out of the range of double", text));
        }
        return x;
    }

    unsigned hex4() {
        unsigned u = 0;
        for (int i = 0; i < 4; ++i, ++pos_) {
            const char c = pos_ < s_.size() ? s_[pos_] : '\0';
            const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) fail("expected 4 hex digits after \\u, found " + found());
            u = u * 16 + static_cast<unsigned>(d);
        }
        return u;
    }

    static void append_utf8(std::string& out, unsigned cp) {
        auto byte = [&](unsigned b) { out += static_cast<char>(b); };
        if (cp < 0x80) byte(cp);
        else if (cp < 0x800) byte(0xC0 | cp >> 6), byte(0x80 | (cp & 0x3F));
        else if (cp < 0x10000) byte(0xE0 | cp >> 12), byte(0x80 | (cp >> 6 & 0x3F)), byte(0x80 | (cp & 0x3F));
        else byte(0xF0 | cp >> 18), byte(0x80 | (cp >> 12 & 0x3F)), byte(0x80 | (cp >> 6 & 0x3F)), byte(0x80 | (cp & 0x3F));
    }

    std::string string() {
        ++pos_;  // '"'
        std::string out;
        while (true) {
            if (pos_ >= s_.size()) fail("unterminated string");
            const char c = s_[pos_];
            if (c == '"') return ++pos_, out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character " + found() + " in a string (escape it)");
            ++pos_;
            if (c != '\\') {
                out += c;
                continue;
            }
            const char e = pos_ < s_.size() ? s_[pos_] : '\0';
            ++pos_;
            if (const std::size_t k = kEscaped.find(e); k != std::string_view::npos) {
                out += kUnescaped[k];
                continue;
            }
            switch (e) {
                case '/': out += '/'; break;
                case 'u': {
                    // Code points above U+FFFF come as a UTF-16 surrogate pair
                    // \uD8xx\uDCxx: cp = 0x10000 + (hi - 0xD800)·0x400 + (lo - 0xDC00).
                    unsigned cp = hex4();
                    if (cp >= 0xDC00 && cp <= 0xDFFF) fail("unpaired low surrogate in \\u escape");
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        if (!literal("\\u")) fail("high surrogate not followed by a \\u low surrogate");
                        const unsigned lo = hex4();
                        if (lo < 0xDC00 || lo > 0xDFFF) fail("high surrogate not followed by a low surrogate");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    }
                    append_utf8(out, cp);
                    break;
                }
                default:
                    --pos_;
                    fail("invalid escape: a backslash followed by " + found());
            }
        }
    }

    std::string_view s_;
    std::size_t pos_ = 0;
};

}  // namespace

Value parse(std::string_view text) { return Parser(text).document(); }

// ---- dump -------------------------------------------------------------------

static void dump_string(std::string& out, const std::string& s) {
    out += '"';
    for (const char c : s) {
        if (const std::size_t k = kUnescaped.find(c); k != std::string_view::npos) out += {'\\', kEscaped[k]};
        else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else out += c;  // UTF-8 passes through
    }
    out += '"';
}

static void dump_value(std::string& out, const Value& v, int indent, int level) {
    // Between items: a newline and the next level's indentation, or nothing.
    auto newline = [&](int lvl) {
        if (indent >= 0) out += '\n' + std::string(static_cast<std::size_t>(indent * lvl), ' ');
    };
    switch (v.type()) {
        case Value::Type::null: out += "null"; break;
        case Value::Type::boolean: out += v.as_bool() ? "true" : "false"; break;
        case Value::Type::number: {
            // fmt's "{}" is the shortest text that reads back as the same
            // double: 3 for 3.0, 0.1 for 0.1, 1e+300 for 1e300.
            const double x = v.as_number();
            out += std::isfinite(x) ? fmt::format("{}", x) : "null";
            break;
        }
        case Value::Type::string: dump_string(out, v.as_string()); break;
        case Value::Type::array: {
            const Array& a = v.as_array();
            out += '[';
            for (std::size_t i = 0; i < a.size(); ++i) {
                if (i) out += ',';
                newline(level + 1);
                dump_value(out, a[i], indent, level + 1);
            }
            if (!a.empty()) newline(level);
            out += ']';
            break;
        }
        case Value::Type::object: {
            const Object& o = v.as_object();
            out += '{';
            for (std::size_t i = 0; i < o.size(); ++i) {
                if (i) out += ',';
                newline(level + 1);
                dump_string(out, o[i].first);
                out += indent >= 0 ? ": " : ":";
                dump_value(out, o[i].second, indent, level + 1);
            }
            if (!o.empty()) newline(level);
            out += '}';
            break;
        }
    }
}

std::string dump(const Value& v, int indent) {
    std::string out;
    dump_value(out, v, indent, 0);
    return out;
}

}  // namespace json
