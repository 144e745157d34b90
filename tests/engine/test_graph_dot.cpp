// ag::to_dot: the graph behind a loss as Graphviz DOT, one ellipse per op,
// one box per leaf, edges labelled with the shapes that flow along them.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "catch.h"
#include "scratch.h"

#include "autograd/autograd.h"
#include "tests/occurrences.h"

using ag::Tensor;
using Catch::Contains;

TEST_CASE("to_dot draws each op once, each leaf once, and the shapes on the edges", "[engine][dot]") {
    ag::Generator gen(0);
    Tensor x = Tensor::randn({4, 3}, gen).set_name("x");
    Tensor w = Tensor::randn({2, 3}, gen, 0.0, 1.0, true).set_name("W{|}");  // DOT's record characters
    Tensor b = Tensor::zeros({2}, true).set_name("b");
    const Tensor h = ag::tanh(ag::linear(x, w, b));
    const Tensor loss = (h * h).sum();  // h read twice
    const std::string dot = ag::to_dot(loss, "loss");
    INFO(dot);
    CHECK(dot.rfind("digraph computation {\n  rankdir=TB;", 0) == 0);
    CHECK_THAT(dot, Contains("root [shape=record, label=\"loss | [] | requires grad\"];"));
    CHECK_THAT(dot, Contains("[shape=record, label=\"W\\{\\|\\} | [2,3] | requires grad\"];"));
    CHECK_THAT(dot, Contains("[shape=record, label=\"x | [4,3]\"];"));  // no grad, so said nothing
    const auto order = ag::topological_order(loss);
    CHECK(test::occurrences(dot, "[shape=ellipse") == order.size());
    CHECK(test::occurrences(dot, "shape=record") == 4);  // x, W, b and the root: each leaf once
    size_t reads = 0;
    for (const auto& node : order) reads += node->inputs.size();
    CHECK(test::occurrences(dot, " -> ") == reads + 1);  // every input of every op, and the root
    CHECK_THAT(dot, Contains("[label=\"[4,2]\"];"));
    CHECK(dot.back() == '\n');
    CHECK(dot.substr(dot.size() - 2) == "}\n");
}

TEST_CASE("to_dot of a tensor without a graph is its box alone", "[engine][dot]") {
    const Tensor t = Tensor::ones({3});
    CHECK(ag::to_dot(t) ==
          "digraph computation {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=11];\n"
          "  edge [fontname=\"Helvetica\", fontsize=9];\n  root [shape=record, label=\"output | [3]\"];\n}\n");
}

TEST_CASE("Graphviz reads what to_dot writes (when it is installed)", "[engine][dot]") {
    if (std::system("dot -V > /dev/null 2>&1") != 0) {
        WARN("Graphviz's dot is not installed: the DOT text is not rendered here");
        return;
    }
    ag::Generator gen(1);
    const Tensor w = Tensor::randn({3, 3}, gen, 0.0, 1.0, true).set_name("W");
    const std::string dot = ag::to_dot(ag::relu(w.matmul(w)).sum(), "loss");
    const test::ScratchDir dir("dot");
    const auto in = dir.path / "graph.dot", out = dir.path / "graph.svg";
    std::ofstream(in) << dot;
    REQUIRE(std::system(("dot -Tsvg " + in.string() + " -o " + out.string()).c_str()) == 0);
    CHECK(std::filesystem::file_size(out) > 200);
}
