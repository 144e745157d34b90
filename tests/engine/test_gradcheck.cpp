// Every op's backward against central differences (ag::gradcheck), on
// seeded random inputs, including the broadcasting and batched cases; plus
// a small MLP end to end and a check that gradcheck can fail.
#include <cmath>
#include <limits>
#include <string>

#include "engine/helpers.h"

using ag::Shape;
using ag::Tensor;
using In = std::vector<Tensor>;

namespace {

void check_grad(const std::string& what, const ag::TensorFunction& f, const In& inputs) {
    const ag::GradcheckResult r = ag::gradcheck(f, inputs);
    INFO(what << ": ok=" << r.ok << ", max_abs_error=" << r.max_abs_error << ", max_rel_error=" << r.max_rel_error
              << ", message: " << r.message);
    CHECK(r.ok);
    CHECK(r.max_abs_error < 1e-5);
}

std::string shapes(const Shape& a, const Shape& b) { return ag::shape_str(a) + " and " + ag::shape_str(b); }

// The broadcast pairs every binary op is checked on.
const std::vector<std::pair<Shape, Shape>> kBroadcastPairs = {
    {{2, 3}, {2, 3}},    {{4, 3}, {3}}, {{3}, {4, 3}}, {{4, 1}, {1, 5}},
    {{2, 1, 3}, {4, 1}}, {{2, 3}, {}},  {{}, {2, 3}},  {{2, 4, 3}, {2, 1, 3}},
};

}  // namespace

TEST_CASE("gradcheck: add sub mul div with broadcasting", "[engine][gradcheck][pointwise]") {
    ag::Generator gen(1);
    for (const auto& [sa, sb] : kBroadcastPairs) {
        const Tensor a = test::rand_t(sa, gen);
        const Tensor b = test::rand_t(sb, gen);
        const Tensor b_away = test::rand_away_from_zero(sb, gen);
        check_grad("add " + shapes(sa, sb), [](const In& x) { return ag::add(x[0], x[1]); }, {a, b});
        check_grad("sub " + shapes(sa, sb), [](const In& x) { return ag::sub(x[0], x[1]); }, {a, b});
        check_grad("mul " + shapes(sa, sb), [](const In& x) { return ag::mul(x[0], x[1]); }, {a, b});
        check_grad("div " + shapes(sa, sb), [](const In& x) { return ag::div(x[0], x[1]); }, {a, b_away});
        check_grad("operator+ " + shapes(sa, sb), [](const In& x) { return x[0] + x[1]; }, {a, b});
        check_grad("operator- " + shapes(sa, sb), [](const In& x) { return x[0] - x[1]; }, {a, b});
        check_grad("operator* " + shapes(sa, sb), [](const In& x) { return x[0] * x[1]; }, {a, b});
        check_grad("operator/ " + shapes(sa, sb), [](const In& x) { return x[0] / x[1]; }, {a, b_away});
    }
    // one operand only requires grad
    const Tensor a = test::rand_t({3, 4}, gen);
    const Tensor c = test::rand_t({4}, gen, -1, 1, false);
    check_grad("mul with a constant [4]", [&](const In& x) { return ag::mul(x[0], c); }, {a});
    // the same tensor on both sides
    check_grad("x * x", [](const In& x) { return x[0] * x[0]; }, {a});
    check_grad("x / x", [](const In& x) { return x[0] / x[0]; }, {test::rand_away_from_zero({3}, gen)});
    // non-contiguous operands
    check_grad("transposed [4,3] + [3]", [](const In& x) { return ag::add(x[0].t(), x[1]); },
               {test::rand_t({3, 4}, gen), test::rand_t({3}, gen)});
    check_grad("transposed * narrowed", [](const In& x) { return ag::mul(x[0].t(), ag::narrow(x[1], 1, 1, 3)); },
               {test::rand_t({3, 2}, gen), test::rand_t({2, 5}, gen)});
}

TEST_CASE("gradcheck: scalar forms and neg", "[engine][gradcheck][pointwise]") {
    ag::Generator gen(2);
    const Tensor a = test::rand_t({2, 3}, gen);
    const Tensor p = test::rand_away_from_zero({2, 3}, gen);
    check_grad("add(a, 2.5)", [](const In& x) { return ag::add(x[0], 2.5); }, {a});
    check_grad("mul(a, -1.5)", [](const In& x) { return ag::mul(x[0], -1.5); }, {a});
    check_grad("a + 2", [](const In& x) { return x[0] + 2.0; }, {a});
    check_grad("2 + a", [](const In& x) { return 2.0 + x[0]; }, {a});
    check_grad("a - 2", [](const In& x) { return x[0] - 2.0; }, {a});
    check_grad("2 - a", [](const In& x) { return 2.0 - x[0]; }, {a});
    check_grad("a * 3", [](const In& x) { return x[0] * 3.0; }, {a});
    check_grad("3 * a", [](const In& x) { return 3.0 * x[0]; }, {a});
    check_grad("a / 4", [](const In& x) { return x[0] / 4.0; }, {a});
    check_grad("4 / a", [](const In& x) { return 4.0 / x[0]; }, {p});
    check_grad("neg", [](const In& x) { return ag::neg(x[0]); }, {a});
    check_grad("unary -", [](const In& x) { return -x[0]; }, {a});
}

TEST_CASE("gradcheck: pow exp log sqrt", "[engine][gradcheck][pointwise]") {
    ag::Generator gen(3);
    const Tensor a = test::rand_t({2, 3}, gen);
    const Tensor pos = test::rand_t({2, 3}, gen, 0.5, 2.0);
    check_grad("pow 2", [](const In& x) { return ag::pow(x[0], 2.0); }, {a});
    check_grad("pow 3", [](const In& x) { return ag::pow(x[0], 3.0); }, {a});
    check_grad("pow 2.5 (positive inputs)", [](const In& x) { return ag::pow(x[0], 2.5); }, {pos});
    check_grad("pow 0.5 (positive inputs)", [](const In& x) { return x[0].pow(0.5); }, {pos});
    check_grad("pow -1.5 (positive inputs)", [](const In& x) { return ag::pow(x[0], -1.5); }, {pos});
    check_grad("pow -1", [](const In& x) { return ag::pow(x[0], -1.0); }, {test::rand_away_from_zero({2, 3}, gen)});
    check_grad("exp", [](const In& x) { return ag::exp(x[0]); }, {a});
    check_grad("Tensor::exp", [](const In& x) { return x[0].exp(); }, {a});
    check_grad("log (positive inputs)", [](const In& x) { return ag::log(x[0]); }, {pos});
    check_grad("Tensor::log (positive inputs)", [](const In& x) { return x[0].log(); }, {pos});
    check_grad("sqrt (positive inputs)", [](const In& x) { return ag::sqrt(x[0]); }, {pos});
}

TEST_CASE("gradcheck: activations", "[engine][gradcheck][pointwise]") {
    ag::Generator gen(4);
    const Tensor a = test::rand_t({3, 4}, gen, -3, 3);
    check_grad("tanh", [](const In& x) { return ag::tanh(x[0]); }, {a});
    check_grad("sigmoid", [](const In& x) { return ag::sigmoid(x[0]); }, {a});
    check_grad("relu (away from 0)", [](const In& x) { return ag::relu(x[0]); },
               {test::rand_away_from_zero({3, 4}, gen)});
    check_grad("gelu", [](const In& x) { return ag::gelu(x[0]); }, {a});
    check_grad("silu", [](const In& x) { return ag::silu(x[0]); }, {a});
}

TEST_CASE("gradcheck: where and masked_fill", "[engine][gradcheck][pointwise]") {
    ag::Generator gen(5);
    const Tensor cond = Tensor::from({4, 1}, {1, 0, 0, 1});
    const Tensor cond_full = Tensor::from({2, 3}, {1, 0, 1, 0, 0, 1});
    check_grad("where [4,1] ? [4,3] : [3]", [&](const In& x) { return ag::where(cond, x[0], x[1]); },
               {test::rand_t({4, 3}, gen), test::rand_t({3}, gen)});
    check_grad("where [2,3] ? [2,3] : []", [&](const In& x) { return ag::where(cond_full, x[0], x[1]); },
               {test::rand_t({2, 3}, gen), test::rand_t({}, gen)});
    check_grad("masked_fill with mask [1,3]",
               [](const In& x) {
                   return ag::masked_fill(x[0], Tensor::from({1, 3}, {0, 1, 0}), 5.0);
               },
               {test::rand_t({2, 3}, gen)});
    check_grad("masked_fill with mask [2,3]", [&](const In& x) { return ag::masked_fill(x[0], cond_full, -2.0); },
               {test::rand_t({2, 3}, gen)});
}

TEST_CASE("gradients of masked_fill and where flow to the kept elements only", "[engine][gradcheck][pointwise]") {
    // d/dx Σ masked_fill(x, m, 7) = 1 - m
    Tensor x = Tensor::from({2, 3}, {1, 2, 3, 4, 5, 6}, true);
    ag::sum(ag::masked_fill(x, Tensor::from({1, 3}, {1, 0, 1}), 7.0)).backward();
    CHECK_TENSOR(x.grad(), {2, 3}, {0, 1, 0, 0, 1, 0});

    // where(cond, a, b) with cond [2,1] = [[1],[0]], a [2,3], b [3]:
    // a gets cond (row 0), b gets Σ over rows of (1 - cond) = one row of ones
    Tensor a = Tensor::from({2, 3}, {1, 2, 3, 4, 5, 6}, true);
    Tensor b = Tensor::from({3}, {7, 8, 9}, true);
    ag::sum(ag::where(Tensor::from({2, 1}, {1, 0}), a, b) * Tensor::from({3}, {1, 2, 3})).backward();
    CHECK_TENSOR(a.grad(), {2, 3}, {1, 2, 3, 0, 0, 0});
    CHECK_TENSOR(b.grad(), {3}, {1, 2, 3});
}

TEST_CASE("gradcheck: reductions and sum_to", "[engine][gradcheck][reduce]") {
    ag::Generator gen(6);
    const Tensor a = test::rand_t({3, 4}, gen);
    const Tensor b = test::rand_t({2, 3, 4}, gen);
    check_grad("sum", [](const In& x) { return ag::sum(x[0]); }, {a});
    check_grad("Tensor::sum", [](const In& x) { return x[0].sum(); }, {a});
    check_grad("sum dim 0", [](const In& x) { return ag::sum(x[0], {0}); }, {a});
    check_grad("sum dim -1 keepdim", [](const In& x) { return ag::sum(x[0], {-1}, true); }, {a});
    check_grad("sum dims {0,2} of [2,3,4]", [](const In& x) { return ag::sum(x[0], {0, 2}); }, {b});
    check_grad("sum dims {0,2} keepdim", [](const In& x) { return ag::sum(x[0], {0, 2}, true); }, {b});
    check_grad("sum of a transposed view", [](const In& x) { return ag::sum(x[0].t(), {1}); }, {a});
    check_grad("mean", [](const In& x) { return ag::mean(x[0]); }, {a});
    check_grad("Tensor::mean", [](const In& x) { return x[0].mean(); }, {b});
    check_grad("mean dim 1", [](const In& x) { return ag::mean(x[0], {1}); }, {b});
    check_grad("mean dims {1,2} keepdim", [](const In& x) { return ag::mean(x[0], {1, 2}, true); }, {b});
    check_grad("sum_to [3,4] -> [4]", [](const In& x) { return ag::sum_to(x[0], {4}); }, {a});
    check_grad("sum_to [3,4] -> [3,1]", [](const In& x) { return ag::sum_to(x[0], {3, 1}); }, {a});
    check_grad("sum_to [2,3,4] -> [3,1]", [](const In& x) { return ag::sum_to(x[0], {3, 1}); }, {b});
    check_grad("sum_to [2,3,4] -> []", [](const In& x) { return ag::sum_to(x[0], {}); }, {b});
}

TEST_CASE("max and argmax carry no gradient", "[engine][gradcheck][reduce]") {
    ag::Generator gen(7);
    const Tensor a = test::rand_t({3, 4}, gen);
    REQUIRE(a.requires_grad());
    for (const Tensor& r :
         {ag::max(a), ag::max(a, 1), ag::max(a, 0, true), ag::argmax(a, 1), ag::argmax(a, -1, true)}) {
        CAPTURE(ag::shape_str(r.shape()));
        CHECK_FALSE(r.requires_grad());
        CHECK(r.grad_fn() == nullptr);
    }
    // using a max as a constant still lets the gradient reach x through the other path:
    // d/dx Σ (x - max(x)) = 1 for every element (max treated as a constant)
    Tensor x = Tensor::from({3}, {1, 5, 2}, true);
    ag::sum(x - ag::max(x)).backward();
    CHECK_TENSOR(x.grad(), {3}, {1, 1, 1});
}

TEST_CASE("gradcheck: matmul", "[engine][gradcheck][matmul]") {
    ag::Generator gen(8);
    auto mm = [](const In& x) { return ag::matmul(x[0], x[1]); };
    check_grad("matmul [3,4] @ [4,5]", mm, {test::rand_t({3, 4}, gen), test::rand_t({4, 5}, gen)});
    check_grad("matmul [1,4] @ [4,1]", mm, {test::rand_t({1, 4}, gen), test::rand_t({4, 1}, gen)});
    check_grad("matmul [2,3,4] @ [2,4,5]", mm, {test::rand_t({2, 3, 4}, gen), test::rand_t({2, 4, 5}, gen)});
    check_grad("matmul [2,3,4] @ [4,5] (2-D right operand)", mm,
               {test::rand_t({2, 3, 4}, gen), test::rand_t({4, 5}, gen)});
    check_grad("matmul [2,1,3,4] @ [3,4,2] (broadcast batch dims)", mm,
               {test::rand_t({2, 1, 3, 4}, gen), test::rand_t({3, 4, 2}, gen)});
    check_grad("matmul [1,2,3,4] @ [2,1,4,3] (broadcast batch dims)", mm,
               {test::rand_t({1, 2, 3, 4}, gen), test::rand_t({2, 1, 4, 3}, gen)});
    check_grad("matmul [3,4] @ [2,4,5] (2-D left operand)", mm,
               {test::rand_t({3, 4}, gen), test::rand_t({2, 4, 5}, gen)});
    check_grad("matmul of transposed operands", [](const In& x) { return ag::matmul(x[0].t(), x[1].t()); },
               {test::rand_t({4, 3}, gen), test::rand_t({5, 4}, gen)});
    check_grad("Tensor::matmul, the same tensor twice", [](const In& x) { return x[0].matmul(x[0].t()); },
               {test::rand_t({3, 4}, gen)});
    check_grad("matmul of batched transposed operands",
               [](const In& x) { return ag::matmul(x[0], ag::transpose(x[1], 1, 2)); },
               {test::rand_t({2, 3, 4}, gen), test::rand_t({2, 5, 4}, gen)});
}

TEST_CASE("swiglu equals silu(gate) * up and its gradient checks", "[engine][gradcheck][pointwise]") {
    ag::Generator gen(23);
    const Tensor a = test::rand_t({4, 6}, gen), b = test::rand_t({4, 6}, gen);
    CHECK(ag::max_abs_diff(ag::swiglu(a, b), ag::silu(a) * b) < 1e-15);
    check_grad("swiglu [4,6]", [](const In& x) { return ag::swiglu(x[0], x[1]); }, {a, b});
    check_grad("swiglu of a transposed gate", [](const In& x) { return ag::swiglu(x[0].t(), x[1]); },
               {test::rand_t({6, 4}, gen), b});
    CHECK_THROWS_WITH(ag::swiglu(a, test::rand_t({6, 4}, gen)), Catch::Contains("swiglu") && Catch::Contains("[6,4]"));
}

TEST_CASE("gradcheck: linear (x Wᵀ + b), with and without bias", "[engine][gradcheck][matmul]") {
    ag::Generator gen(21);
    const auto with_bias = [](const In& x) { return ag::linear(x[0], x[1], x[2]); };
    const auto no_bias = [](const In& x) { return ag::linear(x[0], x[1]); };
    check_grad("linear [5,4] W[3,4] b[3]", with_bias,
               {test::rand_t({5, 4}, gen), test::rand_t({3, 4}, gen), test::rand_t({3}, gen)});
    check_grad("linear [2,3,4] W[6,4] b[6]", with_bias,
               {test::rand_t({2, 3, 4}, gen), test::rand_t({6, 4}, gen), test::rand_t({6}, gen)});
    check_grad("linear [2,3,4] W[6,4] no bias", no_bias, {test::rand_t({2, 3, 4}, gen), test::rand_t({6, 4}, gen)});
    check_grad("linear of a transposed (non-contiguous) input",
               [](const In& x) { return ag::linear(x[0].t(), x[1], x[2]); },
               {test::rand_t({4, 5}, gen), test::rand_t({3, 4}, gen), test::rand_t({3}, gen)});
}

TEST_CASE("linear equals matmul with the transposed weight plus the bias", "[engine][forward][matmul]") {
    ag::Generator gen(22);
    const Tensor x = test::rand_t({2, 7, 5}, gen), w = test::rand_t({3, 5}, gen), b = test::rand_t({3}, gen);
    const Tensor expected = ag::matmul(x, w.t()) + b;
    const Tensor actual = ag::linear(x, w, b);
    CHECK(actual.shape() == Shape{2, 7, 3});
    CHECK(ag::max_abs_diff(actual, expected) < 1e-14);
    CHECK_THROWS_WITH(ag::linear(x, test::rand_t({3, 4}, gen)), Catch::Contains("linear") && Catch::Contains("[3,4]"));
    CHECK_THROWS_WITH(ag::linear(x, w, test::rand_t({4}, gen)), Catch::Contains("bias [4]"));
}

TEST_CASE("gradcheck: shape ops", "[engine][gradcheck][shape]") {
    ag::Generator gen(9);
    const Tensor a = test::rand_t({2, 6}, gen);
    const Tensor b = test::rand_t({2, 3, 4}, gen);
    check_grad("reshape [2,6] -> [3,-1]", [](const In& x) { return ag::reshape(x[0], {3, -1}); }, {a});
    check_grad("view [2,6] -> [12]", [](const In& x) { return x[0].view({12}); }, {a});
    check_grad("reshape of a transposed view", [](const In& x) { return ag::reshape(x[0].t(), {4, 3}); }, {a});
    check_grad("transpose (0,2)", [](const In& x) { return ag::transpose(x[0], 0, 2); }, {b});
    check_grad("t()", [](const In& x) { return x[0].t(); }, {a});
    check_grad("permute {2,0,1}", [](const In& x) { return ag::permute(x[0], {2, 0, 1}); }, {b});
    check_grad("permute then a pointwise op", [](const In& x) { return ag::permute(x[0], {1, 2, 0}) * 2.0; }, {b});
    check_grad("Tensor::transpose (2,1)", [](const In& x) { return x[0].transpose(2, 1); }, {b});
    check_grad("Tensor::permute {1,0,2}", [](const In& x) { return x[0].permute({1, 0, 2}); }, {b});
    check_grad("narrow dim 1", [](const In& x) { return ag::narrow(x[0], 1, 2, 3); }, {a});
    check_grad("narrow dim -1 of [2,3,4]", [](const In& x) { return x[0].narrow(-1, 1, 2); }, {b});
    check_grad("two overlapping narrows",
               [](const In& x) { return ag::narrow(x[0], 1, 0, 4) + ag::narrow(x[0], 1, 2, 4); }, {a});
    check_grad("contiguous of a transposed view", [](const In& x) { return x[0].t().contiguous(); }, {a});
    check_grad("clone", [](const In& x) { return x[0].clone(); }, {a});
    check_grad("cat dim 0",
               [](const In& x) {
                   return ag::cat({x[0], x[1]}, 0);
               },
               {test::rand_t({2, 3}, gen), test::rand_t({1, 3}, gen)});
    check_grad("cat dim 1 of three",
               [](const In& x) {
                   return ag::cat({x[0], x[1], x[2]}, 1);
               },
               {test::rand_t({2, 1}, gen), test::rand_t({2, 3}, gen), test::rand_t({2, 2}, gen)});
    check_grad("cat the same tensor twice",
               [](const In& x) {
                   return ag::cat({x[0], x[0]}, -1);
               },
               {test::rand_t({2, 3}, gen)});
    check_grad("stack dim 0",
               [](const In& x) {
                   return ag::stack({x[0], x[1]}, 0);
               },
               {test::rand_t({2, 3}, gen), test::rand_t({2, 3}, gen)});
    check_grad("stack dim 1",
               [](const In& x) {
                   return ag::stack({x[0], x[1], x[0]}, 1);
               },
               {test::rand_t({2, 3}, gen), test::rand_t({2, 3}, gen)});
    check_grad("stack dim -1",
               [](const In& x) {
                   return ag::stack({x[0], x[1]}, -1);
               },
               {test::rand_t({3}, gen), test::rand_t({3}, gen)});
}

TEST_CASE("gradcheck: index_select and embedding with repeated ids", "[engine][gradcheck][shape]") {
    ag::Generator gen(10);
    const Tensor idx = Tensor::from({5}, {2, 0, 2, 2, 3});
    check_grad("index_select dim 0 with repeats", [&](const In& x) { return ag::index_select(x[0], 0, idx); },
               {test::rand_t({4, 3}, gen)});
    check_grad("index_select dim 1 with repeats",
               [](const In& x) {
                   return ag::index_select(x[0], 1, Tensor::from({3}, {1, 1, 0}));
               },
               {test::rand_t({2, 3}, gen)});
    const Tensor ids = Tensor::from({2, 3}, {1, 3, 1, 1, 0, 3});
    check_grad("embedding [5,3] with ids [2,3]", [&](const In& x) { return ag::embedding(x[0], ids); },
               {test::rand_t({5, 3}, gen)});

    // The scatter-add accumulates: row r gets count(r) ones. Row 2 and 4 unused.
    Tensor w = test::rand_t({5, 2}, gen);
    ag::sum(ag::embedding(w, ids)).backward();
    CHECK_TENSOR(w.grad(), {5, 2}, {1, 1, 3, 3, 0, 0, 2, 2, 0, 0});
    Tensor v = test::rand_t({4, 2}, gen);
    ag::sum(ag::index_select(v, 0, idx)).backward();
    CHECK_TENSOR(v.grad(), {4, 2}, {1, 1, 0, 0, 3, 3, 1, 1});
}

TEST_CASE("gradcheck: softmax log_softmax and the losses", "[engine][gradcheck][softmax]") {
    ag::Generator gen(11);
    check_grad("softmax [3,5]", [](const In& x) { return ag::softmax(x[0]); }, {test::rand_t({3, 5}, gen, -2, 2)});
    check_grad("softmax [2,2,3]", [](const In& x) { return ag::softmax(x[0]); }, {test::rand_t({2, 2, 3}, gen, -2, 2)});
    check_grad("softmax of a transposed view", [](const In& x) { return ag::softmax(x[0].t()); },
               {test::rand_t({4, 3}, gen, -2, 2)});
    check_grad("log_softmax [3,5]", [](const In& x) { return ag::log_softmax(x[0]); },
               {test::rand_t({3, 5}, gen, -2, 2)});
    check_grad("log_softmax [2,2,3]", [](const In& x) { return ag::log_softmax(x[0]); },
               {test::rand_t({2, 2, 3}, gen, -2, 2)});

    const Tensor targets = Tensor::from({6}, {1, -100, 3, 0, -100, 3});
    check_grad("cross_entropy with two ignored targets", [&](const In& x) { return ag::cross_entropy(x[0], targets); },
               {test::rand_t({6, 4}, gen, -2, 2)});
    check_grad("cross_entropy with ignore_index 3",
               [&](const In& x) {
                   return ag::cross_entropy(x[0], Tensor::from({4}, {3, 1, 3, 2}), 3);
               },
               {test::rand_t({4, 4}, gen, -2, 2)});
    check_grad("cross_entropy of a transposed view",
               [&](const In& x) {
                   return ag::cross_entropy(x[0].t(), Tensor::from({3}, {0, 1, 1}));
               },
               {test::rand_t({2, 3}, gen, -2, 2)});
    // ignored rows get exactly zero gradient
    Tensor logits = test::rand_t({6, 4}, gen);
    ag::cross_entropy(logits, targets).backward();
    CHECK_TENSOR(ag::narrow(logits.grad(), 0, 1, 1), {1, 4}, {0, 0, 0, 0}, 0.0);
    CHECK_TENSOR(ag::narrow(logits.grad(), 0, 4, 1), {1, 4}, {0, 0, 0, 0}, 0.0);

    check_grad("mse_loss w.r.t. both", [](const In& x) { return ag::mse_loss(x[0], x[1]); },
               {test::rand_t({3, 4}, gen), test::rand_t({3, 4}, gen)});
    check_grad("binary_cross_entropy_with_logits w.r.t. both",
               [](const In& x) { return ag::binary_cross_entropy_with_logits(x[0], x[1]); },
               {test::rand_t({3, 4}, gen, -3, 3), test::rand_t({3, 4}, gen, 0, 1)});
    check_grad("binary_cross_entropy_with_logits of a transposed view",
               [](const In& x) { return ag::binary_cross_entropy_with_logits(x[0].t(), x[1]); },
               {test::rand_t({4, 3}, gen, -3, 3), test::rand_t({3, 4}, gen, 0, 1)});
}

TEST_CASE("gradcheck: layer_norm and rms_norm", "[engine][gradcheck][norm]") {
    ag::Generator gen(12);
    check_grad("layer_norm [3,5] w.r.t. x, weight, bias", [](const In& x) { return ag::layer_norm(x[0], x[1], x[2]); },
               {test::rand_t({3, 5}, gen, -2, 2), test::rand_t({5}, gen, 0.5, 1.5), test::rand_t({5}, gen)});
    check_grad("layer_norm [2,3,4] w.r.t. x, weight, bias",
               [](const In& x) { return ag::layer_norm(x[0], x[1], x[2]); },
               {test::rand_t({2, 3, 4}, gen, -2, 2), test::rand_t({4}, gen, 0.5, 1.5), test::rand_t({4}, gen)});
    check_grad("layer_norm with eps 0.1", [](const In& x) { return ag::layer_norm(x[0], x[1], x[2], 0.1); },
               {test::rand_t({2, 4}, gen), test::rand_t({4}, gen, 0.5, 1.5), test::rand_t({4}, gen)});
    const Tensor w_const = Tensor::ones({5}), b_const = Tensor::zeros({5});
    check_grad("layer_norm w.r.t. x only", [&](const In& x) { return ag::layer_norm(x[0], w_const, b_const); },
               {test::rand_t({2, 5}, gen, -2, 2)});
    check_grad("rms_norm [3,5] w.r.t. x, weight", [](const In& x) { return ag::rms_norm(x[0], x[1]); },
               {test::rand_t({3, 5}, gen, -2, 2), test::rand_t({5}, gen, 0.5, 1.5)});
    check_grad("rms_norm [2,3,4] w.r.t. x, weight", [](const In& x) { return ag::rms_norm(x[0], x[1]); },
               {test::rand_t({2, 3, 4}, gen, -2, 2), test::rand_t({4}, gen, 0.5, 1.5)});
    check_grad("rms_norm of a transposed view", [](const In& x) { return ag::rms_norm(x[0].t(), x[1]); },
               {test::rand_t({4, 3}, gen, -2, 2), test::rand_t({4}, gen, 0.5, 1.5)});
}

TEST_CASE("gradcheck: a small MLP end to end", "[engine][gradcheck][model]") {
    ag::Generator gen(13);
    const Tensor targets = Tensor::from({6}, {0, 2, 1, -100, 2, 0});
    // Linear(4 -> 8) -> tanh -> Linear(8 -> 3) -> cross_entropy
    auto mlp = [&](const In& p) {
        const Tensor h = ag::tanh(ag::matmul(p[0], p[1]) + p[2]);
        return ag::cross_entropy(ag::matmul(h, p[3]) + p[4], targets);
    };
    check_grad("MLP w.r.t. x, W1, b1, W2, b2", mlp,
               {test::rand_t({6, 4}, gen), test::rand_t({4, 8}, gen), test::rand_t({8}, gen), test::rand_t({8, 3}, gen),
                test::rand_t({3}, gen)});
}

TEST_CASE("gradcheck: causal attention with masked_fill -inf", "[engine][gradcheck][model]") {
    ag::Generator gen(14);
    const double inf = std::numeric_limits<double>::infinity();
    // causal mask [T,T]: 1 above the diagonal
    const Tensor mask = Tensor::from({3, 3}, {0, 1, 1, 0, 0, 1, 0, 0, 0});
    auto attention = [&](const In& p) {  // q, k, v: [2 heads, T=3, d=2]
        const Tensor scores = ag::matmul(p[0], ag::transpose(p[1], -2, -1)) / std::sqrt(2.0);
        return ag::matmul(ag::softmax(ag::masked_fill(scores, mask, -inf)), p[2]);
    };
    check_grad("attention w.r.t. q, k, v", attention,
               {test::rand_t({2, 3, 2}, gen), test::rand_t({2, 3, 2}, gen), test::rand_t({2, 3, 2}, gen)});
}

namespace {
// f(x) = 3x, recorded with a backward that returns `factor`·g.
Tensor triple(const Tensor& x, double factor) {
    std::vector<double> v = x.to_vector();
    for (double& e : v) e *= 3.0;
    return ag::record("triple", Tensor::from(x.shape(), v), {x},
                      [factor](const Tensor& g) { return std::vector<Tensor>{g * factor}; });
}
// f(x) = 3x with a backward that is right except for the last element (off by 1e-3).
Tensor triple_last_wrong(const Tensor& x) {
    std::vector<double> v = x.to_vector();
    for (double& e : v) e *= 3.0;
    return ag::record("triple_last_wrong", Tensor::from(x.shape(), v), {x}, [](const Tensor& g) {
        std::vector<double> gv = g.to_vector();
        for (double& e : gv) e *= 3.0;
        gv.back() += 1e-3;
        return std::vector<Tensor>{Tensor::from(g.shape(), gv)};
    });
}
// f(a, b) = a·b elementwise, with a wrong gradient (2x) for b only.
Tensor mul_b_wrong(const Tensor& a, const Tensor& b) {
    std::vector<double> av = a.to_vector(), bv = b.to_vector(), v(av.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = av[i] * bv[i];
    const Tensor ad = a.detach(), bd = b.detach();
    return ag::record("mul_b_wrong", Tensor::from(a.shape(), v), {a, b}, [ad, bd](const Tensor& g) {
        return std::vector<Tensor>{g * bd, g * ad * 2.0};
    });
}
}  // namespace

TEST_CASE("gradcheck fails on a wrong backward", "[engine][gradcheck][meta]") {
    ag::Generator gen(15);
    const Tensor x = test::rand_t({2, 3}, gen);

    const auto right = ag::gradcheck([](const In& in) { return triple(in[0], 3.0); }, {x});
    INFO("right backward (3g): ok=" << right.ok << ", max_abs_error=" << right.max_abs_error
                                    << ", message: " << right.message);
    CHECK(right.ok);
    CHECK(right.max_abs_error < 1e-6);

    const auto wrong = ag::gradcheck([](const In& in) { return triple(in[0], 6.0); }, {x});
    INFO("2x backward (6g): ok=" << wrong.ok << ", max_abs_error=" << wrong.max_abs_error
                                 << ", message: " << wrong.message);
    CHECK_FALSE(wrong.ok);
    CHECK(wrong.max_abs_error > 0.1);
    CHECK_FALSE(wrong.message.empty());

    const auto last = ag::gradcheck([](const In& in) { return triple_last_wrong(in[0]); }, {x});
    INFO("last element off by 1e-3: ok=" << last.ok << ", max_abs_error=" << last.max_abs_error
                                         << ", message: " << last.message);
    CHECK_FALSE(last.ok);
    CHECK(last.max_abs_error > 1e-4);

    const Tensor a = test::rand_t({3}, gen), b = test::rand_t({3}, gen);
    const auto second = ag::gradcheck([](const In& in) { return mul_b_wrong(in[0], in[1]); }, {a, b});
    INFO("second input's gradient 2x: ok=" << second.ok << ", message: " << second.message);
    CHECK_FALSE(second.ok);

    // an input that does not require grad is not checked
    const Tensor b_const = b.detach();
    const auto skipped = ag::gradcheck([](const In& in) { return mul_b_wrong(in[0], in[1]); }, {a, b_const});
    INFO("wrong gradient for an input without requires_grad: ok=" << skipped.ok << ", message: " << skipped.message);
    CHECK(skipped.ok);
}
