#include "autograd/engine.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "autograd/ops.h"
#include "autograd/ops/common.h"
#include "autograd/profile.h"

namespace ag {

namespace {
thread_local bool grad_mode_enabled = true;
// The innermost live log, whichever thread opened it: an op run on any
// thread is written to it (a function under test that starts a thread of
// its own cannot hide an op from it). The atomic keeps record() to one load
// while no log lives; the mutex orders the appends of several threads.
std::atomic<OpLog*> op_log{nullptr};
std::mutex op_log_mutex;
}  // namespace

void OpLog::write(const char* op) {
    if (!op_log.load(std::memory_order_relaxed)) return;
    const std::lock_guard lock(op_log_mutex);
    if (OpLog* log = op_log.load()) log->ops_.emplace_back(op);
}

bool GradMode::is_enabled() { return grad_mode_enabled; }
void GradMode::set_enabled(bool on) { grad_mode_enabled = on; }

// The default destructor would recurse once per node (Node → input Tensor
// → TensorImpl → its Node → …). Instead, take over the inputs of every node
// that is about to die with us, so that each dies with nothing left to free.
Node::~Node() {
    std::vector<Tensor> pending = std::move(inputs);
    backward = nullptr;
    while (!pending.empty()) {
        Tensor t = std::move(pending.back());
        pending.pop_back();
        if (t.defined() && t.impl_ptr().use_count() == 1 && t.impl()->grad_fn && t.impl()->grad_fn.use_count() == 1) {
            Node& node = *t.impl()->grad_fn;
            for (Tensor& in : node.inputs) pending.push_back(std::move(in));
            node.inputs.clear();
            node.backward = nullptr;
        }
    }  // t dies here, and with it a node that holds nothing
}

OpLog::OpLog() {
    const std::lock_guard lock(op_log_mutex);
    previous_ = op_log.load();
    op_log = this;
}
OpLog::~OpLog() {
    const std::lock_guard lock(op_log_mutex);
    op_log = previous_;
}
std::vector<std::string> OpLog::ops() const {
    const std::lock_guard lock(op_log_mutex);
    return ops_;
}
bool OpLog::ran(const std::string& op) const {
    const std::lock_guard lock(op_log_mutex);
    return std::find(ops_.begin(), ops_.end(), op) != ops_.end();
}

Tensor record(const char* op, Tensor out, std::vector<Tensor> inputs, BackwardFn backward) {
    OpLog::write(op);
    if (!GradMode::is_enabled()) return out;
    bool any = false;
    for (const Tensor& t : inputs) any = any || (t.defined() && t.requires_grad());
    if (!any) return out;
    // bench_train --profile: the time since the previous node is this op's
    // forward (an untracked step inside an op, such as a reshape of its
    // result before it records, belongs to the op; the ops a backward runs,
    // under NoGradGuard, returned above and count in that op's backward)
    profile::count_forward(op);
    const profile::Stopwatch timed(&profile::Counters::graph_seconds);  // bench_train --profile
    profile::count_node();
    auto node = std::make_shared<Node>();
    node->op = op;
    node->inputs = std::move(inputs);
    node->backward = std::move(backward);
    out.impl()->grad_fn = std::move(node);
    out.impl()->requires_grad = true;
    return out;
}

// Iterative depth-first search from the root: a node is emitted after all
// the nodes that made its inputs (post-order), so the list runs from the
// leaves' first users to the root. No recursion: a graph may be 100,000
// ops deep.
std::vector<std::shared_ptr<Node>> topological_order(const Tensor& root) {
    std::vector<std::shared_ptr<Node>> order;
    if (!root.grad_fn()) return order;
    std::unordered_set<const Node*> visited;
    // (node, index of the next input to visit)
    std::vector<std::pair<std::shared_ptr<Node>, size_t>> stack;
    stack.emplace_back(root.grad_fn(), 0);
    visited.insert(root.grad_fn().get());
    while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (node->released)
            throw std::runtime_error(
                fmt::format("backward: the graph through '{}' was already freed by an earlier backward(); "
                            "run the forward pass again to build a new graph",
                            node->op));
        if (next < node->inputs.size()) {
            const Tensor& input = node->inputs[next++];
            const auto& child = input.defined() ? input.grad_fn() : nullptr;
            if (child && visited.insert(child.get()).second) stack.emplace_back(child, 0);
        } else {
            order.push_back(node);
            stack.pop_back();
        }
    }
    return order;
}

// Is `g` the only handle on its numbers, laid out as a plain array?
static bool owns(const Tensor& g) {
    return g.impl_ptr().use_count() == 1 && g.impl()->storage.use_count() == 1 && g.impl()->offset == 0 &&
           g.is_contiguous() && static_cast<int64_t>(g.impl()->storage->size()) == g.numel();
}

// Add `grad` into the gradient slot of `t`, first summing it down to t's
// shape if the op broadcast t.
//  - A leaf's (or retained) gradient is the user's and is updated in place
//    later (clipping, accumulation over steps), so it must own its numbers:
//    a gradient that is shared (add's backward hands the same tensor to both
//    inputs) is copied.
//  - A non-leaf's gradient only lives until its node has run and is never
//    written in place, so it may share; a second contribution then makes a
//    new sum instead of writing into the shared one.
static void accumulate(TensorImpl& t, Tensor grad, const std::string& op) {
    if (grad.shape() != t.shape) {
        try {
            grad = sum_to(grad, t.shape);
        } catch (const std::invalid_argument&) {
            throw std::logic_error(
                fmt::format("backward of '{}' returned a gradient of shape {} for an input of shape {}", op,
                            shape_str(grad.shape()), shape_str(t.shape)));
        }
    }
    const bool keeps = !t.grad_fn || t.retains_grad;
    if (!t.grad) {
        t.grad = (!keeps || owns(grad)) ? grad.impl_ptr() : grad.clone().impl_ptr();
        return;
    }
    Tensor acc(t.grad);
    t.grad.reset();
    if (!owns(acc)) {
        t.grad = add(acc, grad).impl_ptr();
        return;
    }
    const Tensor add_c = grad.contiguous();
    double* dst = acc.data();
    const double* src = add_c.data();
    detail::parallel_for(acc.numel(), detail::kPointwiseGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dst[i] += src[i];
    });
    t.grad = acc.impl_ptr();
}

void run_backward(const Tensor& root, const Tensor& grad_output) {
    if (!root.requires_grad())
        throw std::logic_error(
            "backward: this tensor does not require grad (no input required grad, or it was "
            "computed under NoGradGuard)");
    if (grad_output.shape() != root.shape())
        throw std::invalid_argument(fmt::format("backward: gradient of shape {} for an output of shape {}",
                                                shape_str(grad_output.shape()), shape_str(root.shape())));
    if (root.numel() == 1 && !std::isfinite(root.item()))
        throw std::runtime_error(
            fmt::format("backward: the loss is {} (check the learning rate and inputs)", root.item()));
    OpLog::write(kBackwardRun);
    NoGradGuard no_grad;  // gradients are plain numbers: no graph of the backward pass
    std::optional<profile::Stopwatch> sorting(&profile::Counters::graph_seconds);  // bench_train --profile
    const auto order = topological_order(root);

    // Gradients of non-leaf tensors live in their .grad slot only until
    // their node has run (unless retain_grad() asked to keep them).
    accumulate(*root.impl(), grad_output, "backward");
    // Which tensor each node produced: the root, or an input of a node.
    // Held here until the node has run, since freeing a later node may drop
    // the last other reference to it.
    std::unordered_map<const Node*, std::shared_ptr<TensorImpl>> output_of;
    output_of[root.grad_fn().get()] = root.impl_ptr();
    for (const auto& node : order)
        for (const Tensor& in : node->inputs)
            if (in.defined() && in.grad_fn()) output_of[in.grad_fn().get()] = in.impl_ptr();
    sorting.reset();

    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        Node& node = **it;
        const auto out_ptr = std::move(output_of.at(&node));
        TensorImpl* out = out_ptr.get();
        if (out->grad) {
            const auto started = profile::now();
            Tensor g(out->grad);
            if (!out->retains_grad) out->grad.reset();  // a non-leaf's gradient is only needed here
            std::vector<Tensor> grads = node.backward(g);
            if (grads.size() != node.inputs.size())
                throw std::logic_error(fmt::format("backward of '{}' returned {} gradients for {} inputs", node.op,
                                                   grads.size(), node.inputs.size()));
            for (size_t i = 0; i < grads.size(); ++i) {
                const Tensor& in = node.inputs[i];
                if (in.defined() && in.requires_grad() && grads[i].defined())
                    accumulate(*in.impl(), std::move(grads[i]), node.op);
            }
            profile::count_backward(node.op, started);  // bench_train --profile
        }
        // Free the graph: what the node saved for backward is no longer needed.
        node.released = true;
        node.backward = nullptr;
        node.inputs.clear();
    }
}

}  // namespace ag
