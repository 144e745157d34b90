#include "lessons/autograd_recap/parts.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/ranges.h>

#include "autograd/autograd.h"
#include "lessons/autograd_recap/graph_picture.h"
#include "lessons/autograd_recap/hand_modules.h"
#include "lessons/autograd_recap/mlp.h"

namespace lessons::autograd_recap {
namespace {

// Part 3's ag::gradcheck: its step and the tolerance it passes within
// (|error| <= atol + rtol·|numeric|), stated on the page.
constexpr struct { double h = 1e-6, atol = 1e-5, rtol = 1e-4; } kCheck;

std::string shape_of(const ag::Tensor& t) { return ag::shape_str(t.shape()); }

// ---- part 1 ------------------------------------------------------------------

void part1_modules(Report& r, const Options&) {
    const Mlp mlp = Mlp::make(0);
    HandMlp net(mlp);
    std::vector<Step> trace;
    const double loss = net.forward(mlp.x, mlp.targets, &trace);
    net.backward(&trace);

    r.paragraph(
        "An MLP {}→{}→{} on a batch of {} examples (seed 0). Forward runs the modules in order; backward runs them "
        "in reverse, each turning dL/d(output) into dL/d(input):",
        Mlp::inputs, Mlp::hidden, Mlp::classes, Mlp::batch);
    std::vector<std::vector<Cell>> rows;
    for (const Step& s : trace) rows.push_back({s.pass, s.module, s.reads, s.returns, s.stores});
    r.table("passes", {"pass", "module", "reads", "returns", "stores"}, rows);
    r.value("loss", loss, "the batch's cross-entropy loss");

    // §1: autodiff is built from modules; backward visits forward's modules
    // in reverse and ends with dL/dx, the gradient of forward's input.
    std::vector<std::string> forward, backward;
    for (const Step& s : trace) (s.pass == "forward" ? forward : backward).push_back(s.module);
    const bool reversed = std::equal(forward.rbegin(), forward.rend(), backward.begin(), backward.end());
    const std::string& last_return = trace.back().returns;
    r.claim({"backward_reverses_forward",
             "Autodiff is built from modules: backward() calls forward()'s modules in reverse order, each "
             "turning dL/d(output) into dL/d(input)",
             "", fmt::format("{}", fmt::join(backward, " → ")), reversed && last_return == "dL/dx " + shape_of(mlp.x),
             fmt::format("the {} backward steps visit the {} forward modules in reverse; the last returns {}, "
                         "the shape of x",
                         backward.size(), forward.size(), last_return),
             ClaimKind::check,
             reversed ? fmt::format("Tested the order of backward's {} steps: they run the {} forward modules in "
                                    "reverse, ending at dL/dx, as the lecture describes: reproduced.",
                                    backward.size(), forward.size())
                      : fmt::format("Tested the order of backward's {} steps: they do not run the {} forward "
                                    "modules in reverse, unlike the lecture: not reproduced.",
                                    backward.size(), forward.size())});

    r.paragraph("The gradients the backward pass accumulated in the modules:");
    rows.clear();
    const auto params = mlp.parameters();
    const auto grads = net.parameter_grads();
    for (size_t i = 0; i < params.size(); ++i)
        rows.push_back({params[i].name() + ".grad", shape_of(grads[i]), ag::max_abs(grads[i])});
    r.table("hand_gradients", {"gradient", "shape", "max |entry|"}, rows);
    r.takeaway(
        "each backward() needs only its module's cache and dL/d(output); "
        "calling them in reverse order is the chain rule.");
}

// ---- part 2 ------------------------------------------------------------------

// What an op of the graph computes, in the lecture's notation (blank for an
// op this lesson does not use).
std::string computes(const std::string& op) {
    static const std::map<std::string, std::string> meaning{
        {"permute", "Wᵀ as a view: the same numbers, dims swapped"},
        {"transpose", "Wᵀ as a view: the same numbers, dims swapped"},
        {"clone", "a contiguous copy (the kernel reads rows)"},
        {"matmul", "a b (matrix product)"},
        {"add", "a + b, b broadcast over the rows"},
        {"tanh", "tanh(a), element by element"},
        {"cross_entropy", "mean over n of -log softmax(z_n)[t_n]"}};
    const auto m = meaning.find(op);
    return m == meaning.end() ? "" : m->second;
}

// "x [4,3], targets [4]"
std::string leaf_list(const std::vector<ag::Tensor>& leaves) {
    std::vector<std::string> items;
    for (const auto& t : leaves) items.push_back(t.name() + " " + shape_of(t));
    return fmt::format("{}", fmt::join(items, ", "));
}

void part2_graph(Report& r, const Options& options) {
    const Mlp mlp = Mlp::make(0);
    const ag::Tensor loss = mlp.loss();
    const auto order = ag::topological_order(loss);

    // Number the nodes; a node's output shape is the shape its users read
    // (a Node keeps its inputs, not its output), and the root's is the loss's.
    std::map<const ag::Node*, size_t> number;
    std::map<const ag::Node*, ag::Shape> output;
    output[loss.grad_fn().get()] = loss.shape();
    for (size_t i = 0; i < order.size(); ++i) {
        number[order[i].get()] = i + 1;
        for (const auto& in : order[i]->inputs)
            if (in.grad_fn()) output[in.grad_fn().get()] = in.shape();
    }
    std::vector<std::vector<Cell>> rows;
    for (size_t i = 0; i < order.size(); ++i) {
        std::vector<std::string> reads;
        for (const auto& in : order[i]->inputs)
            reads.push_back(in.grad_fn() ? fmt::format("#{}", number.at(in.grad_fn().get())) : in.name());
        rows.push_back({i + 1, order[i]->op, ag::shape_str(output.at(order[i].get())),
                        fmt::format("{}", fmt::join(reads, ", ")), computes(order[i]->op)});
    }

    r.paragraph(
        "`loss = cross_entropy(tanh(x W1ᵀ + b1) W2ᵀ + b2, targets)`, the MLP of part 1 written with engine ops. "
        "Leaves (made by no op): {} need no gradient; {} require grad. The nodes, inputs first (#k reads node k's "
        "output):",
        leaf_list({mlp.x, mlp.targets}), leaf_list(mlp.parameters()));
    r.table("graph", {"#", "op", "output", "reads", "computes"}, rows);
    // The same graph drawn (before backward() frees it), as micrograd's draw_dot does.
    const std::filesystem::path dot = output_path(options, "00_graph.dot");
    if (draw_graph(ag::to_dot(loss, "loss"), dot, output_path(options, "00_graph.svg")))
        r.figure("00_graph.svg",
                 "The graph as a picture: leaves in boxes (shape; whether they require grad), ops in ellipses, "
                 "the shape that flows along each edge (`ag::to_dot`, drawn by Graphviz).");
    else
        r.paragraph(
            "Graphviz is not installed, so the graph is not drawn: its DOT text is in {} (apt-get install graphviz, "
            "then run this part again, or paste the file into any Graphviz viewer).",
            dot.string());
    r.value("nodes", static_cast<double>(order.size()));
    r.value("loss", loss.item());
    HandMlp net(mlp);
    const double loss_difference = loss.item() - net.forward(mlp.x, mlp.targets);
    r.value("loss_minus_part1_loss", loss_difference);
    r.claim({"graph_computes_the_modules_loss",
             "A computational graph is another way to write the function: the graph of engine ops computes the "
             "loss the modules of part 1 compute",
             "", loss_difference, std::fabs(loss_difference) < 1e-14,
             fmt::format("graph loss - modules' loss = {} ({} 1e-14: {})", Cell(loss_difference).str(),
                         std::fabs(loss_difference) < 1e-14 ? "below" : "not below",
                         std::fabs(loss_difference) < 1e-14 ? "the same function, to rounding" : "they differ"),
             ClaimKind::check,
             fmt::format("Tested the engine graph's loss against part 1's modules: they differ by {}, {} the 1e-14 "
                         "rounding level: {}.",
                         Cell(loss_difference).str(), std::fabs(loss_difference) < 1e-14 ? "below" : "above",
                         std::fabs(loss_difference) < 1e-14 ? "the same function, reproduced" : "not reproduced")});

    loss.backward();
    std::vector<std::string> filled;
    for (const auto& p : mlp.parameters()) filled.push_back(p.name() + ".grad " + shape_of(p.grad()));
    r.paragraph(
        "loss.backward() ran the nodes from #{} back to #1 and filled {}; x.grad() is {} (x does not require "
        "grad).",
        order.size(), fmt::join(filled, ", "), mlp.x.grad().defined() ? "defined" : "undefined");
    r.takeaway(
        "a computational graph (计算图) is another way to write the function; backward() "
        "visits it in reverse topological order, so every node's dL/d(output) is complete "
        "before it is used.");
}

// ---- part 3 ------------------------------------------------------------------

// §1 The definition of the derivative, one number at a time:
//   dL/dθ_i ≈ (L(θ + h e_i) - L(θ - h e_i)) / 2h.
// Error: O(h²) from truncating the Taylor series plus O(ε/h) from rounding
// L (ε ≈ 1e-16). Perturbs param's numbers in place and restores them.
ag::Tensor central_differences(const std::function<double()>& loss, ag::Tensor& param, double h) {
    ag::NoGradGuard no_graph;
    ag::Tensor grad = ag::Tensor::zeros(param.shape());
    double* theta = param.data();
    for (int64_t i = 0; i < param.numel(); ++i) {
        const double saved = theta[i];
        theta[i] = saved + h;
        const double up = loss();
        theta[i] = saved - h;
        const double down = loss();
        theta[i] = saved;
        grad.data()[i] = (up - down) / (2.0 * h);
    }
    return grad;
}

// Per parameter, max |engine - central differences with step h|.
std::vector<double> finite_difference_errors(const Mlp& mlp, const std::vector<ag::Tensor>& engine, double h) {
    const auto loss = [&] { return mlp.loss().item(); };
    auto params = mlp.parameters();
    std::vector<double> errors;
    for (size_t i = 0; i < params.size(); ++i)
        errors.push_back(ag::max_abs_diff(engine[i], central_differences(loss, params[i], h)));
    return errors;
}

std::vector<ag::Tensor> engine_gradients(const Mlp& mlp) {
    for (auto p : mlp.parameters()) p.zero_grad();
    mlp.loss().backward();
    std::vector<ag::Tensor> grads;
    for (const auto& p : mlp.parameters()) grads.push_back(p.grad().clone());
    return grads;
}

std::vector<ag::Tensor> hand_gradients(const Mlp& mlp) {
    HandMlp net(mlp);
    net.forward(mlp.x, mlp.targets);
    net.backward();
    return net.parameter_grads();
}

void part3_gradients(Report& r, const Options& options) {
    constexpr double h = 1e-5;
    std::vector<std::vector<Cell>> rows;
    double worst_fd = 0.0, worst_hand = 0.0, worst_gradcheck = 0.0;
    bool gradcheck_passed = true;
    for (int seed = 0; seed < options.seeds; ++seed) {
        const Mlp mlp = Mlp::make(static_cast<uint64_t>(seed));
        const auto engine = engine_gradients(mlp);
        const auto hand = hand_gradients(mlp);
        const auto vs_fd = finite_difference_errors(mlp, engine, h);
        const auto params = mlp.parameters();
        for (size_t i = 0; i < params.size(); ++i) {
            const double vs_hand = ag::max_abs_diff(engine[i], hand[i]);
            worst_fd = std::max(worst_fd, vs_fd[i]);
            worst_hand = std::max(worst_hand, vs_hand);
            rows.push_back({seed, params[i].name(), shape_of(params[i]), ag::max_abs(engine[i]), vs_fd[i], vs_hand});
        }
        const ag::GradcheckResult check =
            ag::gradcheck([&](const std::vector<ag::Tensor>& p) { return mlp.with_parameters(p).loss(); },
                          mlp.parameters(), kCheck.h, kCheck.atol, kCheck.rtol);
        gradcheck_passed = gradcheck_passed && check.ok;
        worst_gradcheck = std::max(worst_gradcheck, check.max_abs_error);
        if (!check.ok) r.paragraph("seed {}: gradcheck failed: {}", seed, check.message);
    }

    r.paragraph(
        "Max |difference| per parameter: the engine's loss.backward() against central differences (h = {}) and "
        "against the hand-written modules of part 1.",
        h);
    r.table("gradients", {"seed", "parameter", "shape", "max |grad|", "engine - finite diff.", "engine - by hand"},
            rows);
    r.value("max_engine_minus_finite_diff", worst_fd);
    r.value("max_engine_minus_hand", worst_hand);
    r.value("gradcheck_max_abs_error", worst_gradcheck);
    r.claim({"gradcheck",
             "Automatic differentiation computes the gradient: the engine's backward() agrees with central finite "
             "differences (`ag::gradcheck`)",
             "", worst_gradcheck, gradcheck_passed,
             fmt::format("gradcheck {} on {}; its largest |error| {} (with h = {}; it passes when every |error| <= "
                         "{} + {}·|numeric|; the table's column used h = {})",
                         gradcheck_passed ? "passed" : "failed", count_of(options.seeds, "seed"),
                         Cell(worst_gradcheck).str(), kCheck.h, kCheck.atol, kCheck.rtol, h),
             ClaimKind::check,
             fmt::format("Tested backward() against central finite differences on {}: largest error {}, {} the "
                         "tolerance: {}.",
                         count_of(options.seeds, "seed"), Cell(worst_gradcheck).str(),
                         gradcheck_passed ? "within" : "outside", gradcheck_passed ? "reproduced" : "not reproduced")});
    constexpr double rounding = 1e-12;
    r.claim({"engine_matches_hand_derivation",
             "The engine's gradients are the ones the hand-written modules' backward() computes", "", worst_hand,
             worst_hand < rounding,
             fmt::format("largest |engine - by hand| {} over every parameter and seed ({} 1e-12, rounding level)",
                         Cell(worst_hand).str(), worst_hand < rounding ? "below" : "not below"),
             ClaimKind::check,
             fmt::format("Tested the engine's gradients against the hand-written backward(): largest difference {}, "
                         "{} the 1e-12 rounding level: {}.",
                         Cell(worst_hand).str(), worst_hand < rounding ? "below" : "above",
                         worst_hand < rounding ? "reproduced" : "not reproduced")});

    r.paragraph("The step h trades truncation, O(h²), against rounding, O(ε/h) (seed 0):");
    const Mlp mlp = Mlp::make(0);
    const auto engine = engine_gradients(mlp);
    rows.clear();
    for (int k = 1; k <= 9; ++k) {
        const double step = std::pow(10.0, -k);
        const auto errors = finite_difference_errors(mlp, engine, step);
        rows.push_back({step, *std::max_element(errors.begin(), errors.end())});
    }
    r.table("step_size", {"h", "max |engine - finite diff.|"}, rows);

    int64_t n_params = 0;
    for (const auto& p : mlp.parameters()) n_params += p.numel();
    r.takeaway(
        fmt::format("backward() agrees with the hand derivation to {} and with finite "
                    "differences to {}; the differences cost 2 × {} = {} forward passes "
                    "for these {} numbers where backward() costs one forward and one "
                    "backward pass: they check gradients, they do not compute them.",
                    Cell(worst_hand).str(), Cell(worst_fd).str(), n_params, 2 * n_params, n_params));
}

}  // namespace

const Lesson& lesson() {
    static const Lesson recap{"00_autograd_recap",
                              "Autograd recap",
                              "§1 Recap · 回顾",
                              1,
                              {{"§1",
                                "Modules with forward() and backward()",
                                "Lecture 3's modules: forward() caches what backward() needs; backward(dL/dy) returns "
                                "dL/dx and accumulates the parameters' gradients.",
                                part1_modules,
                                {"lessons/autograd_recap/hand_modules.cpp", "lessons/autograd_recap/mlp.cpp"}},
                               {"§1",
                                "The computational graph",
                                "The same MLP written with engine ops is recorded as a graph; printed in topological "
                                "order, every node comes after the nodes it reads.",
                                part2_graph,
                                {"lessons/autograd_recap/mlp.cpp", "lessons/autograd_recap/graph_picture.cpp"}},
                               {"§1",
                                "Gradients three ways",
                                "Every parameter's gradient from the engine, from central finite differences, and from "
                                "the hand-written modules of part 1.",
                                part3_gradients,
                                {"lessons/autograd_recap/mlp.cpp", "lessons/autograd_recap/hand_modules.cpp"}}}};
    return recap;
}

}  // namespace lessons::autograd_recap
