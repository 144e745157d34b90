#include "lessons/common/math.h"

#include <cctype>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "lessons/common/report.h"
#include "lessons/common/svg.h"

namespace lessons::math {
namespace {

// A formula as a tree: what TeX's subset reads, before it is written out.
struct Node {
    enum class Kind { Row, Ident, Number, Op, Text, Space, Frac, Sqrt, Hat, Scripts } kind;
    std::string text;                          // Ident, Number, Op, Text; Space: its width in em
    std::vector<std::unique_ptr<Node>> parts;  // Row: its atoms; Frac: over, under; Sqrt, Hat: the argument
    std::unique_ptr<Node> base, sub, sup;      // Scripts: either script may be absent
    bool stretchy = false;                     // Op: a \left( or \right) that grows with its contents
};
using NodePtr = std::unique_ptr<Node>;

NodePtr leaf(Node::Kind kind, std::string text) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->text = std::move(text);
    return n;
}

// Commands that stand for one symbol: letters as identifiers, the rest as
// operators.
const std::map<std::string, std::string>& letters() {
    static const std::map<std::string, std::string> m{
        {"alpha", "α"},   {"beta", "β"},   {"gamma", "γ"}, {"delta", "δ"}, {"epsilon", "ε"}, {"eta", "η"},
        {"theta", "θ"},   {"lambda", "λ"}, {"mu", "μ"},    {"pi", "π"},    {"sigma", "σ"},   {"tau", "τ"},
        {"phi", "φ"},     {"omega", "ω"},  {"Theta", "Θ"}, {"Delta", "Δ"}, {"Sigma", "Σ"},   {"Omega", "Ω"},
        {"ell", "ℓ"},     {"top", "⊤"},    {"infty", "∞"}, {"ldots", "…"}, {"dots", "…"},    {"cdots", "⋯"},
        {"partial", "∂"}, {"nabla", "∇"}};
    return m;
}
const std::map<std::string, std::string>& operators() {
    static const std::map<std::string, std::string> m{{"cdot", "·"},       {"times", "×"},
                                                      {"le", "≤"},         {"leq", "≤"},
                                                      {"ge", "≥"},         {"geq", "≥"},
                                                      {"ne", "≠"},         {"neq", "≠"},
                                                      {"approx", "≈"},     {"to", "→"},
                                                      {"rightarrow", "→"}, {"in", "∈"},
                                                      {"sum", "∑"},        {"prod", "∏"},
                                                      {"odot", "⊙"},       {"otimes", "⊗"},
                                                      {"pm", "±"},         {"mid", "∣"},
                                                      {"propto", "∝"},     {"lVert", "‖"},
                                                      {"rVert", "‖"},      {"|", "‖"},
                                                      {"{", "{"},          {"}", "}"},
                                                      {"$", "$"},          {"lfloor", "⌊"},
                                                      {"rfloor", "⌋"},     {"lceil", "⌈"},
                                                      {"rceil", "⌉"},      {"max", "max"},
                                                      {"min", "min"},      {"exp", "exp"},
                                                      {"log", "log"},      {"softmax", "softmax"}};
    return m;
}

// UTF-8 characters written as themselves that are operators, not letters.
bool is_operator_char(const std::string& c) {
    static const char* const kOps[] = {"≤", "≥", "×", "·", "−", "→", "≈", "≠", "∈", "∑", "∏", "‖",
                                       "±", "∝", "⊙", "…", "⌊", "⌋", "⌈", "⌉", "⟨", "⟩", "∣", "′"};
    for (const char* op : kOps)
        if (c == op) return true;
    return false;
}

// Mathematical bold letters for \mathbf{x}: MathML Core draws only
// mathvariant="normal", so bold is the letters' own code points.
std::string bold(const std::string& s) {
    std::string out;
    for (const char c : s) {
        char32_t cp = 0;
        if (c >= 'A' && c <= 'Z') cp = 0x1D400 + static_cast<char32_t>(c - 'A');
        if (c >= 'a' && c <= 'z') cp = 0x1D41A + static_cast<char32_t>(c - 'a');
        if (cp == 0) {
            out += c;
            continue;
        }
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return out;
}

class Parser {
public:
    Parser(std::string_view tex, std::string_view whole) : s_(tex), whole_(whole) {}

    NodePtr formula() {
        NodePtr row = this->row();
        if (i_ < s_.size()) fail(fmt::format("an unmatched '{}'", s_[i_]));
        return row;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw std::invalid_argument(fmt::format("formula ${}$: {} (in \"{}\")", s_, what, whole_));
    }

    // Atoms up to the end or a closing brace (left for the caller).
    NodePtr row() {
        auto r = std::make_unique<Node>();
        r->kind = Node::Kind::Row;
        while (true) {
            skip_spaces();
            if (i_ >= s_.size() || s_[i_] == '}') break;
            NodePtr a = atom();
            r->parts.push_back(scripts(std::move(a)));
        }
        return r;
    }

    void skip_spaces() {
        while (i_ < s_.size() && s_[i_] == ' ') ++i_;
    }

    // x, x_a, x^b, x_a^b (or x^b_a).
    NodePtr scripts(NodePtr base) {
        NodePtr sub, sup;
        while (true) {
            skip_spaces();
            if (i_ >= s_.size() || (s_[i_] != '_' && s_[i_] != '^')) break;
            NodePtr& slot = s_[i_] == '_' ? sub : sup;
            if (slot) fail(fmt::format("a second '{}' on one base", s_[i_]));
            ++i_;
            skip_spaces();
            if (i_ >= s_.size()) fail("a script with nothing after it");
            slot = atom();
        }
        if (!sub && !sup) return base;
        auto n = std::make_unique<Node>();
        n->kind = Node::Kind::Scripts;
        n->base = std::move(base);
        n->sub = std::move(sub);
        n->sup = std::move(sup);
        return n;
    }

    // The text of a {…} argument, braces nesting, unparsed (\text, \mathrm).
    std::string raw_argument() {
        skip_spaces();
        if (i_ >= s_.size() || s_[i_] != '{') fail("a command needs a {…} argument");
        int depth = 0;
        const size_t start = i_ + 1;
        for (; i_ < s_.size(); ++i_) {
            if (s_[i_] == '{') ++depth;
            if (s_[i_] == '}' && --depth == 0) break;
        }
        if (i_ >= s_.size()) fail("an unclosed '{'");
        return std::string(s_.substr(start, i_++ - start));
    }

    NodePtr group() {  // at '{'
        ++i_;
        NodePtr r = row();
        if (i_ >= s_.size() || s_[i_] != '}') fail("an unclosed '{'");
        ++i_;
        return r;
    }

    NodePtr command() {  // at '\'
        ++i_;
        size_t start = i_;
        while (i_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i_]))) ++i_;
        if (i_ == start && i_ < s_.size()) ++i_;  // \, \{ \$ \|
        const std::string name(s_.substr(start, i_ - start));
        if (name == "frac") {
            auto n = std::make_unique<Node>();
            n->kind = Node::Kind::Frac;
            n->parts.push_back(argument());
            n->parts.push_back(argument());
            return n;
        }
        if (name == "sqrt" || name == "hat") {
            auto n = std::make_unique<Node>();
            n->kind = name == "sqrt" ? Node::Kind::Sqrt : Node::Kind::Hat;
            n->parts.push_back(argument());
            return n;
        }
        if (name == "text") return leaf(Node::Kind::Text, raw_argument());
        if (name == "mathrm" || name == "operatorname") return leaf(Node::Kind::Ident, raw_argument());
        if (name == "mathbf") return leaf(Node::Kind::Ident, bold(raw_argument()));
        if (name == "quad") return leaf(Node::Kind::Space, "1");
        if (name == ",") return leaf(Node::Kind::Space, "0.17");
        if (name == "left" || name == "right") {
            skip_spaces();
            NodePtr delimiter = atom();
            if (delimiter->kind != Node::Kind::Op) fail("\\" + name + " needs a delimiter");
            delimiter->stretchy = true;
            return delimiter;
        }
        if (const auto it = letters().find(name); it != letters().end()) return leaf(Node::Kind::Ident, it->second);
        if (const auto it = operators().find(name); it != operators().end()) return leaf(Node::Kind::Op, it->second);
        fail("an unknown command \\" + name);
    }

    // One atom after ^ or _, or an argument: a group, a command or one character.
    NodePtr argument() {
        skip_spaces();
        if (i_ >= s_.size()) fail("a command with a missing argument");
        return atom();
    }

    NodePtr atom() {
        const char c = s_[i_];
        if (c == '{') return group();
        if (c == '\\') return command();
        if (std::isdigit(static_cast<unsigned char>(c)) ||
            (c == '.' && i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1])))) {
            const size_t start = i_;
            while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) ++i_;
            return leaf(Node::Kind::Number, std::string(s_.substr(start, i_ - start)));
        }
        if (std::isalpha(static_cast<unsigned char>(c))) return leaf(Node::Kind::Ident, std::string(1, s_[i_++]));
        if (c == '}') fail("an unmatched '}'");
        if (static_cast<unsigned char>(c) >= 0x80) {  // one UTF-8 character
            size_t end = i_ + 1;
            while (end < s_.size() && (static_cast<unsigned char>(s_[end]) & 0xC0) == 0x80) ++end;
            const std::string ch(s_.substr(i_, end - i_));
            i_ = end;
            return leaf(is_operator_char(ch) ? Node::Kind::Op : Node::Kind::Ident, ch);
        }
        ++i_;
        if (c == '-') return leaf(Node::Kind::Op, "−");
        if (c == '*') return leaf(Node::Kind::Op, "∗");
        if (c == '\'') return leaf(Node::Kind::Op, "′");
        return leaf(Node::Kind::Op, std::string(1, c));
    }

    std::string_view s_, whole_;
    size_t i_ = 0;
};

// ---- MathML -------------------------------------------------------------------

std::string mathml(const Node& n);

// A child of a two-child element (msub, mfrac, …): one element, a row of
// several atoms wrapped.
std::string one(const Node& n) {
    if (n.kind == Node::Kind::Row && n.parts.size() == 1) return mathml(*n.parts[0]);
    return mathml(n);
}

std::string mathml(const Node& n) {
    using K = Node::Kind;
    switch (n.kind) {
        case K::Row: {
            std::string inner;
            for (const auto& p : n.parts) inner += mathml(*p);
            return "<mrow>" + inner + "</mrow>";
        }
        case K::Ident:
            // One letter is italic; a name (max, softmax, RMSNorm) upright.
            return display_width(n.text) > 1 ? "<mi mathvariant=\"normal\">" + svg::escape(n.text) + "</mi>"
                                             : "<mi>" + svg::escape(n.text) + "</mi>";
        case K::Number:
            return "<mn>" + n.text + "</mn>";
        case K::Op:
            return std::string(n.stretchy ? "<mo stretchy=\"true\">" : "<mo>") + svg::escape(n.text) + "</mo>";
        case K::Text:
            return "<mtext>" + svg::escape(n.text) + "</mtext>";
        case K::Space:
            return "<mspace width=\"" + n.text + "em\"></mspace>";
        case K::Frac:
            return "<mfrac>" + one(*n.parts[0]) + one(*n.parts[1]) + "</mfrac>";
        case K::Sqrt:
            return "<msqrt>" + mathml(*n.parts[0]) + "</msqrt>";
        case K::Hat:
            return "<mover accent=\"true\">" + one(*n.parts[0]) + "<mo>^</mo></mover>";
        case K::Scripts:
            if (n.sub && n.sup) return "<msubsup>" + one(*n.base) + one(*n.sub) + one(*n.sup) + "</msubsup>";
            if (n.sub) return "<msub>" + one(*n.base) + one(*n.sub) + "</msub>";
            return "<msup>" + one(*n.base) + one(*n.sup) + "</msup>";
    }
    return {};
}

// ---- plain text ----------------------------------------------------------------

std::string plain(const Node& n);

// Unicode's super- and subscript forms, where every character has one.
std::string scripted(const std::string& s, bool super) {
    static const std::map<std::string, std::string> sup{
        {"0", "⁰"}, {"1", "¹"}, {"2", "²"}, {"3", "³"}, {"4", "⁴"}, {"5", "⁵"}, {"6", "⁶"}, {"7", "⁷"},
        {"8", "⁸"}, {"9", "⁹"}, {"+", "⁺"}, {"−", "⁻"}, {"⊤", "ᵀ"}, {"n", "ⁿ"}, {"i", "ⁱ"}, {"T", "ᵀ"}};
    static const std::map<std::string, std::string> sub{
        {"0", "₀"}, {"1", "₁"}, {"2", "₂"}, {"3", "₃"}, {"4", "₄"}, {"5", "₅"}, {"6", "₆"}, {"7", "₇"}, {"8", "₈"},
        {"9", "₉"}, {"+", "₊"}, {"−", "₋"}, {"i", "ᵢ"}, {"j", "ⱼ"}, {"k", "ₖ"}, {"t", "ₜ"}, {"m", "ₘ"}, {"n", "ₙ"}};
    const auto& table = super ? sup : sub;
    std::string out;
    for (size_t i = 0; i < s.size();) {
        size_t end = i + 1;
        while (end < s.size() && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) ++end;
        const auto it = table.find(s.substr(i, end - i));
        if (it == table.end()) return {};
        out += it->second;
        i = end;
    }
    return out;
}

// A script or a fraction's part: as it is when one atom, else in brackets.
std::string bracketed(const Node& n) {
    const std::string text = plain(n);
    const bool single = n.kind != Node::Kind::Row || n.parts.size() <= 1;
    return single ? text : "(" + text + ")";
}

std::string plain(const Node& n) {
    using K = Node::Kind;
    switch (n.kind) {
        case K::Row: {
            std::string out;
            for (const auto& p : n.parts) {
                const std::string text = plain(*p);
                // Relations read with a space on each side: "a = b", "t ≤ T".
                static const char* const kSpaced[] = {"=", "≤", "≥", "≈", "≠", "→", "<", ">", "∈", "∝"};
                bool spaced = false;
                for (const char* op : kSpaced) spaced |= p->kind == K::Op && text == op;
                out += spaced ? " " + text + " " : text;
            }
            return out;
        }
        case K::Ident:
        case K::Number:
        case K::Op:
        case K::Text:
            return n.text;
        case K::Space:
            return " ";
        case K::Frac:
            return bracketed(*n.parts[0]) + "/" + bracketed(*n.parts[1]);
        case K::Sqrt:
            return "√" + bracketed(*n.parts[0]);
        case K::Hat:
            return plain(*n.parts[0]) + "\u0302";
        case K::Scripts: {
            std::string out = plain(*n.base);
            for (const auto& [script, super] : {std::pair{n.sub.get(), false}, std::pair{n.sup.get(), true}}) {
                if (!script) continue;
                const std::string compact = scripted(plain(*script), super);
                out += !compact.empty() ? compact : std::string(super ? "^" : "_") + bracketed(*script);
            }
            return out;
        }
    }
    return {};
}

// Walks `text`, handing each piece of prose, each `code` span and each
// formula (and whether it is displayed) to the three callbacks.
template <class Prose, class Code, class Formula>
void split(std::string_view text, Prose prose, Code code, Formula formula) {
    std::string buffer;
    for (size_t i = 0; i < text.size();) {
        if (text.substr(i, 2) == "\\$") {
            buffer += '$';
            i += 2;
            continue;
        }
        if (text[i] == '`') {
            const size_t end = text.find('`', i + 1);
            if (end == std::string_view::npos)
                throw std::invalid_argument(fmt::format("an unclosed ` in \"{}\"", text));
            prose(buffer);
            buffer.clear();
            code(std::string(text.substr(i + 1, end - i - 1)));
            i = end + 1;
            continue;
        }
        if (text[i] != '$') {
            buffer += text[i++];
            continue;
        }
        const bool display = text.substr(i, 2) == "$$";
        const std::string_view close = display ? "$$" : "$";
        const size_t start = i + close.size();
        size_t end = start;
        while (end < text.size() && (text.substr(end, close.size()) != close || text[end - 1] == '\\')) ++end;
        if (end >= text.size()) throw std::invalid_argument(fmt::format("an unclosed {} in \"{}\"", close, text));
        prose(buffer);
        buffer.clear();
        formula(Parser(text.substr(start, end - start), text).formula(), display);
        i = end + close.size();
    }
    prose(buffer);
}

}  // namespace

std::string html(std::string_view text) {
    std::string out;
    split(
        text, [&](const std::string& prose) { out += svg::escape(prose); },
        [&](const std::string& code) { out += "<code>" + svg::escape(code) + "</code>"; },
        [&](const NodePtr& f, bool display) {
            out += display ? "<math display=\"block\">" : "<math>";
            out += mathml(*f) + "</math>";
        });
    return out;
}

std::string plain(std::string_view text) {
    std::string out;
    split(
        text, [&](const std::string& prose) { out += prose; }, [&](const std::string& code) { out += code; },
        [&](const NodePtr& f, bool) { out += plain(*f); });
    return out;
}

}  // namespace lessons::math
