#pragma once
// Reverse-mode autodiff, define-by-run (§1: a computational graph is another
// way to write a function; backward() walks it in reverse).
//
// Every op computes its result, then calls record(): if grad mode is on and
// some input requires grad, the result gets a Node holding the inputs and a
// backward closure written next to the op's forward code. backward() on the
// loss orders the nodes topologically once (iterative DFS), calls each
// closure with the gradient of its output, accumulates the returned input
// gradients (summing over broadcast dimensions where an input was
// broadcast), and frees the graph.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace ag {

// Given dL/d(output), return dL/d(input_i) for every input, in order. An
// entry may be left undefined when that input needs no gradient. A returned
// gradient may have a broadcast shape; the engine sums it down to the input.
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output)>;

struct Node {
    std::string op;              // "matmul", "add", ...
    std::vector<Tensor> inputs;  // the tensors the op read
    BackwardFn backward;
    bool released = false;  // set once backward() has run through it

    Node() = default;
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;
    ~Node();  // iterative: dropping a 100,000-op graph must not recurse 100,000 deep
};

// Record `out` as the result of `op` on `inputs`. Returns `out`, now with a
// grad_fn when recording is on and any input requires grad.
Tensor record(const char* op, Tensor out, std::vector<Tensor> inputs, BackwardFn backward);

// Grad mode is thread-local and on by default.
struct GradMode {
    static bool is_enabled();
    static void set_enabled(bool on);
};

// RAII: no graph is recorded while a guard lives (evaluation, optimiser
// steps, decoding). Restores the previous mode on destruction.
class NoGradGuard {
public:
    NoGradGuard() : previous_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
    ~NoGradGuard() { GradMode::set_enabled(previous_); }
    NoGradGuard(const NoGradGuard&) = delete;
    NoGradGuard& operator=(const NoGradGuard&) = delete;

private:
    bool previous_;
};

// RAII: while a log lives, every op run on any thread of the process
// appends its name ("matmul", "rope", ...) to it, with or without grad
// mode, and whether or not the op is recorded in a graph: which ops a
// function ran, not only which ones its graph keeps, also on threads it
// started (the exercises' tests use it to see that a hand-written op does
// not call the engine's fused one). Logs nest; the innermost one is
// written. Open one at a time: a log opened on a second thread while the
// first lives takes that thread's ops and every other's. Each run of the
// engine's backward (Tensor::backward) is logged too, as kBackwardRun: a
// gradient written "by hand" must not be the engine's.
inline constexpr const char* kBackwardRun = "backward()";
class OpLog {
public:
    OpLog();
    ~OpLog();
    OpLog(const OpLog&) = delete;
    OpLog& operator=(const OpLog&) = delete;

    std::vector<std::string> ops() const;  // a copy: other threads may still append
    bool ran(const std::string& op) const;

private:
    friend Tensor record(const char*, Tensor, std::vector<Tensor>, BackwardFn);
    friend void run_backward(const Tensor&, const Tensor&);
    static void write(const char* op);  // to the innermost live log, if any
    OpLog* previous_;
    std::vector<std::string> ops_;
};

// The nodes that lead to `root`, inputs before the ops that use them (the
// order backward() runs in reverse). Lesson 00 prints it.
std::vector<std::shared_ptr<Node>> topological_order(const Tensor& root);

// Runs backward from `root` with dL/droot = grad_output. Called by
// Tensor::backward().
void run_backward(const Tensor& root, const Tensor& grad_output);

// Threads used by every kernel: the engine's own pool (autograd/thread_pool.h,
// which also says how they wait). Results do not depend on the count. The
// default is the hardware's thread count, or AG_NUM_THREADS when set. One
// count for the whole process (not per thread, as OpenMP's was).
void set_num_threads(int n);
int num_threads();

// RAII: the thread count set for a scope and restored when it ends, however
// it ends (a failed test, an exception).
class ThreadCountGuard {
public:
    explicit ThreadCountGuard(int n) : previous_(num_threads()) { set_num_threads(n); }
    ~ThreadCountGuard() { set_num_threads(previous_); }
    ThreadCountGuard(const ThreadCountGuard&) = delete;
    ThreadCountGuard& operator=(const ThreadCountGuard&) = delete;

private:
    int previous_;
};

}  // namespace ag
