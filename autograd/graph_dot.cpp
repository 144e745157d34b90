#include "autograd/graph_dot.h"

#include <map>

#include <fmt/format.h>

#include "autograd/engine.h"
#include "autograd/ops.h"

namespace ag {
namespace {

// Text inside a quoted DOT string: " and \ escaped; inside a record's
// label also the characters that shape the record (| { } < >).
std::string dot_escaped(const std::string& s, bool record = false) {
    const std::string special = record ? "\"\\|{}<>" : "\"\\";
    std::string out;
    for (const char c : s) {
        if (special.find(c) != std::string::npos) out += '\\';
        out += c;
    }
    return out;
}

std::string box(const std::string& id, const std::string& name, const Tensor& t) {
    return fmt::format("  {} [shape=record, label=\"{} | {}{}\"];\n", id, dot_escaped(name, true),
                       dot_escaped(shape_str(t.shape()), true), t.requires_grad() ? " | requires grad" : "");
}

}  // namespace

std::string to_dot(const Tensor& root, const std::string& root_name) {
    std::string dot =
        "digraph computation {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=11];\n"
        "  edge [fontname=\"Helvetica\", fontsize=9];\n";
    dot += box("root", root_name, root);
    if (!root.grad_fn()) return dot + "}\n";

    const auto order = topological_order(root);  // inputs first
    std::map<const Node*, size_t> op_id;
    for (size_t i = 0; i < order.size(); ++i) {
        op_id[order[i].get()] = i;
        dot += fmt::format("  op{} [shape=ellipse, label=\"{}\"];\n", i, dot_escaped(order[i]->op));
    }
    std::map<const TensorImpl*, size_t> leaf_id;  // a leaf read twice is one box
    for (size_t i = 0; i < order.size(); ++i)
        for (const Tensor& in : order[i]->inputs) {
            if (!in.defined()) continue;
            std::string from;
            if (in.grad_fn() && op_id.count(in.grad_fn().get())) {
                from = fmt::format("op{}", op_id.at(in.grad_fn().get()));
            } else {
                const auto [it, added] = leaf_id.emplace(in.impl(), leaf_id.size());
                from = fmt::format("leaf{}", it->second);
                if (added) dot += box(from, in.name().empty() ? "(unnamed)" : in.name(), in);
            }
            dot += fmt::format("  {} -> op{} [label=\"{}\"];\n", from, i, dot_escaped(shape_str(in.shape())));
        }
    dot += fmt::format("  op{} -> root [label=\"{}\"];\n", op_id.at(root.grad_fn().get()),
                       dot_escaped(shape_str(root.shape())));
    return dot + "}\n";
}

}  // namespace ag
