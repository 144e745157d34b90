// Forward values of every op against numbers worked out by hand.
#include <cmath>
#include <limits>

#include "engine/helpers.h"

using ag::Shape;
using ag::Tensor;

namespace {
const double kE = 2.718281828459045;  // e
Tensor T(const Shape& s, std::vector<double> v) { return Tensor::from(s, std::move(v)); }
}  // namespace

TEST_CASE("forward: add sub mul div with broadcasting", "[engine][ops][forward]") {
    const Tensor a = T({2, 3}, {1, 2, 3, 4, 5, 6});

    // [2,3] + [3]: the row vector is added to every row
    CHECK_TENSOR(a + T({3}, {10, 20, 30}), {2, 3}, {11, 22, 33, 14, 25, 36});
    CHECK_TENSOR(ag::add(T({3}, {10, 20, 30}), a), {2, 3}, {11, 22, 33, 14, 25, 36});
    // [2,1] * [1,3]: outer product [[2],[3]] x [[1,10,100]]
    CHECK_TENSOR(T({2, 1}, {2, 3}) * T({1, 3}, {1, 10, 100}), {2, 3}, {2, 20, 200, 3, 30, 300});
    CHECK_TENSOR(ag::mul(T({2, 1}, {2, 3}), T({1, 3}, {1, 10, 100})), {2, 3}, {2, 20, 200, 3, 30, 300});
    // [2,3] - [2,1]: row i minus (i+1)
    CHECK_TENSOR(a - T({2, 1}, {1, 2}), {2, 3}, {0, 1, 2, 2, 3, 4});
    CHECK_TENSOR(ag::sub(T({2, 1}, {1, 2}), a), {2, 3}, {0, -1, -2, -2, -3, -4});
    // [2,3] / [3] = [1/2, 2/4, 3/8; 4/2, 5/4, 6/8]
    CHECK_TENSOR(a / T({3}, {2, 4, 8}), {2, 3}, {0.5, 0.5, 0.375, 2, 1.25, 0.75});
    CHECK_TENSOR(ag::div(a, T({3}, {2, 4, 8})), {2, 3}, {0.5, 0.5, 0.375, 2, 1.25, 0.75});
    // [2,1,3] + [4,1] -> [2,4,3]: out[i][j][k] = x[i][k] + y[j]
    const Tensor x = T({2, 1, 3}, {0, 1, 2, 10, 11, 12});
    const Tensor y = T({4, 1}, {100, 200, 300, 400});
    CHECK_TENSOR(x + y, {2, 4, 3}, {100, 101, 102, 200, 201, 202, 300, 301, 302, 400, 401, 402,
                                    110, 111, 112, 210, 211, 212, 310, 311, 312, 410, 411, 412});
    // a scalar tensor [] broadcasts against anything
    CHECK_TENSOR(a * Tensor::scalar(2), {2, 3}, {2, 4, 6, 8, 10, 12});
    CHECK_TENSOR(Tensor::scalar(1) - a, {2, 3}, {0, -1, -2, -3, -4, -5});
    // broadcasting a non-contiguous operand: a.t() is [3,2] = [[1,4],[2,5],[3,6]]
    CHECK_TENSOR(a.t() + T({2}, {0, 100}), {3, 2}, {1, 104, 2, 105, 3, 106});
    CHECK_TENSOR(a.t() * a.t(), {3, 2}, {1, 16, 4, 25, 9, 36});
}

TEST_CASE("forward: scalar forms of the arithmetic", "[engine][ops][forward]") {
    const Tensor a = T({3}, {1, 2, 4});
    CHECK_TENSOR(a + 2.0, {3}, {3, 4, 6});
    CHECK_TENSOR(2.0 + a, {3}, {3, 4, 6});
    CHECK_TENSOR(ag::add(a, 2.0), {3}, {3, 4, 6});
    CHECK_TENSOR(a - 1.0, {3}, {0, 1, 3});
    CHECK_TENSOR(1.0 - a, {3}, {0, -1, -3});
    CHECK_TENSOR(a * 3.0, {3}, {3, 6, 12});
    CHECK_TENSOR(3.0 * a, {3}, {3, 6, 12});
    CHECK_TENSOR(ag::mul(a, 3.0), {3}, {3, 6, 12});
    CHECK_TENSOR(a / 2.0, {3}, {0.5, 1, 2});
    CHECK_TENSOR(8.0 / a, {3}, {8, 4, 2});
    CHECK_TENSOR(-a, {3}, {-1, -2, -4});
    CHECK_TENSOR(ag::neg(a), {3}, {-1, -2, -4});
}

TEST_CASE("forward: pow exp log sqrt", "[engine][ops][forward]") {
    CHECK_TENSOR(ag::pow(T({3}, {1, 2, 3}), 2.0), {3}, {1, 4, 9});
    CHECK_TENSOR(T({3}, {-2, 2, 3}).pow(3.0), {3}, {-8, 8, 27});
    // 4^0.5 = 2, 8^(1/3) = 2, 2^-1 = 0.5
    CHECK_TENSOR(ag::pow(T({1}, {4}), 0.5), {1}, {2});
    CHECK_TENSOR(ag::pow(T({1}, {8}), 1.0 / 3.0), {1}, {2});
    CHECK_TENSOR(ag::pow(T({1}, {2}), -1.0), {1}, {0.5});
    CHECK_TENSOR(ag::pow(T({2}, {5, -3}), 0.0), {2}, {1, 1});

    CHECK_TENSOR(ag::exp(T({3}, {0, 1, -1})), {3}, {1, kE, 1 / kE});
    CHECK_TENSOR(T({1}, {2}).exp(), {1}, {7.38905609893065});  // e^2
    CHECK_TENSOR(ag::log(T({3}, {1, kE, kE * kE})), {3}, {0, 1, 2});
    CHECK_TENSOR(T({1}, {0.5}).log(), {1}, {-0.6931471805599453});  // -ln 2
    CHECK_TENSOR(ag::sqrt(T({3}, {4, 2, 0.25})), {3}, {2, 1.4142135623730951, 0.5});
}

TEST_CASE("forward: tanh sigmoid relu gelu silu", "[engine][ops][forward]") {
    // tanh(1) = (e - 1/e) / (e + 1/e); tanh is odd
    CHECK_TENSOR(ag::tanh(T({3}, {0, 1, -1})), {3}, {0, 0.7615941559557649, -0.7615941559557649});
    // sigmoid(2) = 1 / (1 + e^-2); large |x| saturates without NaN
    CHECK_TENSOR(ag::sigmoid(T({5}, {0, 2, -2, 800, -800})), {5},
                 {0.5, 0.8807970779778823, 1 - 0.8807970779778823, 1, 0}, 1e-12);
    CHECK_TENSOR(ag::relu(T({4}, {-1, 0, 2, -0.5})), {4}, {0, 0, 2, 0});
    // gelu(x) = x Φ(x): Φ(1) = 0.8413447460685429, Φ(2) = 0.9772498680518208,
    // gelu(-1) = -(1 - Φ(1)); the tanh approximation would give 0.8411920
    CHECK_TENSOR(ag::gelu(T({4}, {1, 0, -1, 2})), {4},
                 {0.8413447460685429, 0, -0.15865525393145707, 1.9544997361036416}, 1e-14);
    // silu(x) = x sigmoid(x): sigmoid(1) = 0.7310585786300049, silu(-1) = -(1 - sigmoid(1))
    CHECK_TENSOR(ag::silu(T({3}, {1, 0, -1})), {3}, {0.7310585786300049, 0, -0.2689414213699951});
    CHECK_TENSOR(ag::silu(T({2}, {-800, 800})), {2}, {0, 800});
}

TEST_CASE("forward: sum and mean", "[engine][ops][forward][reduce]") {
    const Tensor a = T({2, 3}, {1, 2, 3, 4, 5, 6});
    CHECK_TENSOR(ag::sum(a), {}, {21});
    CHECK_TENSOR(a.sum(), {}, {21});
    CHECK_TENSOR(ag::sum(a, {0}), {3}, {5, 7, 9});
    CHECK_TENSOR(ag::sum(a, {1}), {2}, {6, 15});
    CHECK_TENSOR(ag::sum(a, {-1}), {2}, {6, 15});
    CHECK_TENSOR(ag::sum(a, {1}, true), {2, 1}, {6, 15});
    CHECK_TENSOR(ag::sum(a, {0}, true), {1, 3}, {5, 7, 9});
    CHECK_TENSOR(ag::sum(a, {0, 1}), {}, {21});
    CHECK_TENSOR(ag::sum(a, {0, 1}, true), {1, 1}, {21});
    // on a transposed view: a.t() = [[1,4],[2,5],[3,6]]
    CHECK_TENSOR(ag::sum(a.t(), {1}), {3}, {5, 7, 9});

    CHECK_TENSOR(ag::mean(a), {}, {3.5});
    CHECK_TENSOR(a.mean(), {}, {3.5});
    CHECK_TENSOR(ag::mean(a, {0}), {3}, {2.5, 3.5, 4.5});
    CHECK_TENSOR(ag::mean(a, {1}, true), {2, 1}, {2, 5});

    // x[i][j][k] = 12i + 4j + k; summing over i and k:
    // Σ_i Σ_k (12i + 4j + k) = 4·12 + 8·4j + 2·6 = 60 + 32j
    const Tensor x = T({2, 3, 4}, test::range_values(24));
    CHECK_TENSOR(ag::sum(x, {0, 2}), {3}, {60, 92, 124});
    CHECK_TENSOR(ag::sum(x, {2, 0}, true), {1, 3, 1}, {60, 92, 124});
    // mean over the middle dim: (12i + k) + 4·(0+1+2)/3 = 12i + k + 4
    CHECK_TENSOR(ag::mean(x, {1}), {2, 4}, {4, 5, 6, 7, 16, 17, 18, 19});
}

TEST_CASE("forward: max and argmax", "[engine][ops][forward][reduce]") {
    // all-negative rows catch a maximum that starts from 0
    const Tensor x = T({2, 3}, {-4, 5, -3, -7, -2, -1});
    CHECK_TENSOR(ag::max(x), {}, {5});
    CHECK_TENSOR(ag::max(T({3}, {-3, -1, -2})), {}, {-1});
    CHECK_TENSOR(ag::max(x, 1), {2}, {5, -1});
    CHECK_TENSOR(ag::max(x, -1, true), {2, 1}, {5, -1});
    CHECK_TENSOR(ag::max(x, 0), {3}, {-4, 5, -1});
    CHECK_TENSOR(ag::argmax(x, 1), {2}, {1, 2});
    CHECK_TENSOR(ag::argmax(x, 1, true), {2, 1}, {1, 2});
    CHECK_TENSOR(ag::argmax(x, 0), {3}, {0, 0, 1});
    // on a transposed view: x.t() = [[-4,-7],[5,-2],[-3,-1]]
    CHECK_TENSOR(ag::argmax(x.t(), 1), {3}, {0, 0, 1});
    CHECK_TENSOR(ag::max(x.t(), 1), {3}, {-4, 5, -1});
    // a NaN is the maximum, and its index the argmax (as in PyTorch)
    const double nan = std::nan("");
    CHECK(std::isnan(ag::max(T({2}, {1, nan})).item()));
    CHECK_TENSOR(ag::argmax(T({3}, {1, nan, 3}), 0), {}, {1});
    CHECK_TENSOR(ag::argmax(T({2, 2}, {nan, 5, 1, nan}), 1), {2}, {0, 1});
}

TEST_CASE("forward: matmul 2-D", "[engine][ops][forward][matmul]") {
    // [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]]:
    // 1·7+2·9+3·11 = 58, 1·8+2·10+3·12 = 64, 4·7+5·9+6·11 = 139, 4·8+5·10+6·12 = 154
    const Tensor a = T({2, 3}, {1, 2, 3, 4, 5, 6});
    const Tensor b = T({3, 2}, {7, 8, 9, 10, 11, 12});
    CHECK_TENSOR(ag::matmul(a, b), {2, 2}, {58, 64, 139, 154});
    CHECK_TENSOR(a.matmul(b), {2, 2}, {58, 64, 139, 154});
    // non-contiguous operands: a.t() @ a.t().t() = aᵀa
    // aᵀa = [[1+16, 2+20, 3+24], [22, 4+25, 6+30], [27, 36, 9+36]]
    CHECK_TENSOR(ag::matmul(a.t(), a), {3, 3}, {17, 22, 27, 22, 29, 36, 27, 36, 45});
    // a @ aᵀ = [[1+4+9, 4+10+18], [32, 16+25+36]]
    CHECK_TENSOR(ag::matmul(a, a.t()), {2, 2}, {14, 32, 32, 77});
    // [1,K] @ [K,1]
    CHECK_TENSOR(ag::matmul(T({1, 3}, {1, 2, 3}), T({3, 1}, {4, 5, 6})), {1, 1}, {32});
}

TEST_CASE("forward: batched matmul", "[engine][ops][forward][matmul]") {
    // [2,2,2] @ 2-D [2,2]: every matrix of the batch times B = [[5,6],[7,8]]
    // A0 = [[1,2],[3,4]]: A0 B = [[19,22],[43,50]]; A1 = [[0,1],[1,0]] swaps B's rows
    const Tensor a = T({2, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0});
    const Tensor b = T({2, 2}, {5, 6, 7, 8});
    CHECK_TENSOR(ag::matmul(a, b), {2, 2, 2}, {19, 22, 43, 50, 7, 8, 5, 6});

    // [2,2,2] @ [2,2,2]: A1 B1 with B1 = [[1,1],[0,1]]: [[0,1],[1,1]]
    const Tensor b2 = T({2, 2, 2}, {5, 6, 7, 8, 1, 1, 0, 1});
    CHECK_TENSOR(ag::matmul(a, b2), {2, 2, 2}, {19, 22, 43, 50, 0, 1, 1, 1});

    // broadcast batch dims: [2,1,1,2] @ [1,3,2,1] -> [2,3,1,1], out[i][j] = a_i · b_j
    // a_0 = [1,2], a_1 = [3,4]; b_0 = [1,0], b_1 = [0,1], b_2 = [1,1]
    const Tensor ra = T({2, 1, 1, 2}, {1, 2, 3, 4});
    const Tensor cb = T({1, 3, 2, 1}, {1, 0, 0, 1, 1, 1});
    CHECK_TENSOR(ag::matmul(ra, cb), {2, 3, 1, 1}, {1, 2, 3, 3, 4, 7});

    // a batched left operand with a batch of 1 on the right: [2,2,2] @ [1,2,2]
    CHECK_TENSOR(ag::matmul(a, T({1, 2, 2}, {5, 6, 7, 8})), {2, 2, 2}, {19, 22, 43, 50, 7, 8, 5, 6});

    // a transposed batch: a.transpose(1,2) = [[1,3],[2,4]], [[0,1],[1,0]]
    // [[1,3],[2,4]] B = [[5+21, 6+24], [10+28, 12+32]]
    CHECK_TENSOR(ag::matmul(a.transpose(1, 2), b), {2, 2, 2}, {26, 30, 38, 44, 7, 8, 5, 6});

    // a larger case against a naive loop: [2,1,3,4] @ [3,4,5] -> [2,3,3,5]
    ag::Generator gen(5);
    const Tensor x = test::rand_t({2, 1, 3, 4}, gen, -1, 1, false);
    const Tensor y = test::rand_t({3, 4, 5}, gen, -1, 1, false);
    std::vector<double> expected;
    for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j)
            for (int64_t m = 0; m < 3; ++m)
                for (int64_t n = 0; n < 5; ++n) {
                    double s = 0;
                    for (int64_t k = 0; k < 4; ++k) s += x.at({i, 0, m, k}) * y.at({j, k, n});
                    expected.push_back(s);
                }
    CHECK_TENSOR(ag::matmul(x, y), {2, 3, 3, 5}, expected, 1e-13);
}

TEST_CASE("forward: reshape transpose permute narrow", "[engine][ops][forward][shape]") {
    const Tensor a = T({2, 3}, {0, 1, 2, 3, 4, 5});
    CHECK_TENSOR(ag::transpose(a, 0, 1), {3, 2}, {0, 3, 1, 4, 2, 5});
    CHECK_TENSOR(ag::transpose(a, -1, -2), {3, 2}, {0, 3, 1, 4, 2, 5});
    CHECK_TENSOR(ag::reshape(a, {3, 2}), {3, 2}, {0, 1, 2, 3, 4, 5});
    CHECK_TENSOR(ag::reshape(a, {-1}), {6}, {0, 1, 2, 3, 4, 5});
    CHECK_TENSOR(ag::reshape(a, {-1, 2}), {3, 2}, {0, 1, 2, 3, 4, 5});
    CHECK_TENSOR(ag::reshape(a, {1, -1, 1}), {1, 6, 1}, {0, 1, 2, 3, 4, 5});
    CHECK_TENSOR(ag::narrow(a, 1, 1, 2), {2, 2}, {1, 2, 4, 5});
    CHECK_TENSOR(ag::narrow(a, 0, 1, 1), {1, 3}, {3, 4, 5});
    CHECK_TENSOR(ag::narrow(a, -1, 2, 1), {2, 1}, {2, 5});

    const Tensor x = T({2, 3, 4}, test::range_values(24));
    const Tensor p = ag::permute(x, {2, 0, 1});  // p[k][i][j] = 12i + 4j + k
    CHECK(p.shape() == Shape{4, 2, 3});
    CHECK(p.at({1, 1, 2}) == 21);
    CHECK(p.at({3, 0, 1}) == 7);
    CHECK_TENSOR(ag::reshape(x, {6, -1}), {6, 4}, test::range_values(24));
    // reshape after a permute copies in the permuted order: first row of p is k=0
    CHECK_TENSOR(ag::narrow(ag::reshape(p, {4, 6}), 0, 0, 1), {1, 6}, {0, 4, 8, 12, 16, 20});
    CHECK_TENSOR(ag::permute(x, {2, 0, 1}).reshape({-1}).narrow(0, 6, 6), {6}, {1, 5, 9, 13, 17, 21});
}

TEST_CASE("forward: cat and stack", "[engine][ops][forward][shape]") {
    const Tensor r = T({1, 2}, {1, 2});
    const Tensor m = T({2, 2}, {3, 4, 5, 6});
    CHECK_TENSOR(ag::cat({r, m}, 0), {3, 2}, {1, 2, 3, 4, 5, 6});
    CHECK_TENSOR(ag::cat({m, r}, 0), {3, 2}, {3, 4, 5, 6, 1, 2});
    // [[1],[2]] ++ [[3,4],[5,6]] along the columns
    CHECK_TENSOR(ag::cat({T({2, 1}, {1, 2}), m}, 1), {2, 3}, {1, 3, 4, 2, 5, 6});
    CHECK_TENSOR(ag::cat({T({2, 1}, {1, 2}), m, m.t()}, -1), {2, 5}, {1, 3, 4, 3, 5, 2, 5, 6, 4, 6});

    const Tensor u = T({2}, {1, 2});
    const Tensor v = T({2}, {3, 4});
    CHECK_TENSOR(ag::stack({u, v}, 0), {2, 2}, {1, 2, 3, 4});
    CHECK_TENSOR(ag::stack({u, v}, 1), {2, 2}, {1, 3, 2, 4});
    CHECK_TENSOR(ag::stack({u, v, u}, -1), {2, 3}, {1, 3, 1, 2, 4, 2});
    // stacking [2,2] matrices along the middle: out[i][s][j] = xs[s][i][j]
    CHECK_TENSOR(ag::stack({m, m * 10.0}, 1), {2, 2, 2}, {3, 4, 30, 40, 5, 6, 50, 60});
}

TEST_CASE("forward: index_select and embedding", "[engine][ops][forward][shape]") {
    const Tensor x = T({3, 2}, {1, 2, 3, 4, 5, 6});
    CHECK_TENSOR(ag::index_select(x, 0, T({3}, {2, 0, 2})), {3, 2}, {5, 6, 1, 2, 5, 6});
    CHECK_TENSOR(ag::index_select(x, 1, T({1}, {1})), {3, 1}, {2, 4, 6});
    CHECK_TENSOR(ag::index_select(x, -1, T({3}, {1, 0, 1})), {3, 3}, {2, 1, 2, 4, 3, 4, 6, 5, 6});
    CHECK_TENSOR(ag::index_select(x.t(), 0, T({1}, {1})), {1, 3}, {2, 4, 6});

    // weight row r = [10r, 10r+1]; ids [[3,0],[1,3]] -> [2,2,2]
    const Tensor w = T({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31});
    CHECK_TENSOR(ag::embedding(w, T({2, 2}, {3, 0, 1, 3})), {2, 2, 2}, {30, 31, 0, 1, 10, 11, 30, 31});
    CHECK_TENSOR(ag::embedding(w, T({3}, {2, 2, 1})), {3, 2}, {20, 21, 20, 21, 10, 11});
}

TEST_CASE("forward: masked_fill and where", "[engine][ops][forward]") {
    const Tensor x = T({2, 3}, {1, 2, 3, 4, 5, 6});
    // mask [1,3] broadcasts over the rows
    CHECK_TENSOR(ag::masked_fill(x, T({1, 3}, {1, 0, 1}), -9), {2, 3}, {-9, 2, -9, -9, 5, -9});
    CHECK_TENSOR(ag::masked_fill(x, T({2, 3}, {0, 0, 0, 0, 0, 0}), 7), {2, 3}, {1, 2, 3, 4, 5, 6});
    const double inf = std::numeric_limits<double>::infinity();
    CHECK_TENSOR(ag::masked_fill(x, T({2, 1}, {0, 1}), -inf), {2, 3}, {1, 2, 3, -inf, -inf, -inf});
    // where: cond [2,1] picks row 0 from x, row 1 from the scalar -1
    CHECK_TENSOR(ag::where(T({2, 1}, {1, 0}), x, Tensor::scalar(-1)), {2, 3}, {1, 2, 3, -1, -1, -1});
    CHECK_TENSOR(ag::where(T({3}, {0, 1, 0}), x, x * 10.0), {2, 3}, {10, 2, 30, 40, 5, 60});
}

TEST_CASE("forward: softmax and log_softmax", "[engine][ops][forward][softmax]") {
    // e^1 + e^2 + e^3 = 30.19287485057736: softmax = e^i / 30.19…, log_softmax = i - 3.40760596444438
    const Tensor x = T({2, 3}, {1, 2, 3, 0, 0, 0});
    CHECK_TENSOR(ag::softmax(x), {2, 3},
                 {0.09003057317038046, 0.24472847105479767, 0.6652409557748219, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-14);
    CHECK_TENSOR(ag::log_softmax(x), {2, 3},
                 {-2.40760596444438, -1.4076059644443801, -0.4076059644443803, -1.0986122886681098, -1.0986122886681098,
                  -1.0986122886681098},
                 1e-14);

    ag::Generator gen(11);
    const Tensor r = test::rand_t({4, 7}, gen, -3, 3, false);
    const Tensor s = ag::softmax(r);
    // every row sums to 1
    CHECK_TENSOR(ag::sum(s, {-1}), {4}, {1, 1, 1, 1}, 1e-14);
    // log_softmax = log(softmax)
    CHECK(ag::max_abs_diff(ag::log_softmax(r), ag::log(s)) < 1e-13);
    // shift invariance along each row
    CHECK(ag::max_abs_diff(ag::softmax(r + 100.0), s) < 1e-13);
    CHECK(ag::max_abs_diff(ag::softmax(r + T({4, 1}, {-50, 0, 7, 300})), s) < 1e-13);
    // 3-D input: over the last dim only
    const Tensor r3 = test::rand_t({2, 3, 5}, gen, -2, 2, false);
    CHECK_TENSOR(ag::sum(ag::softmax(r3), {-1}), {2, 3}, {1, 1, 1, 1, 1, 1}, 1e-14);
    // a non-contiguous input: softmax over the rows of rᵀ
    CHECK_TENSOR(ag::sum(ag::softmax(r.t()), {-1}), {7}, {1, 1, 1, 1, 1, 1, 1}, 1e-14);

    // large inputs must not overflow: [1000, 1000, 0] -> [1/2, 1/2, e^-1000/2 ≈ 0]
    CHECK_TENSOR(ag::softmax(T({3}, {1000, 1000, 0})), {3}, {0.5, 0.5, 0});
    CHECK_TENSOR(ag::softmax(T({2}, {-1000, -1001})), {2}, {0.7310585786300049, 0.2689414213699951},
                 1e-12);  // = softmax([1, 0])
    // log_softmax([1000, 0]) = [-log(1 + e^-1000), -1000] = [0, -1000]
    CHECK_TENSOR(ag::log_softmax(T({2}, {1000, 0})), {2}, {0, -1000});
    // masked positions (-inf) get probability 0
    const double inf = std::numeric_limits<double>::infinity();
    CHECK_TENSOR(ag::softmax(T({3}, {0, -inf, 0})), {3}, {0.5, 0, 0.5});
}

// Softmax is shift invariant, and exp(x - max) / Σ exp(x - max) computes it
// to a few ulps whatever the shift. Near ±1000 the probabilities must still
// be right to 1e-14 (100 ulps): a formula whose error grows with |x| fails.
TEST_CASE("forward: softmax of large inputs is accurate to 1e-14", "[engine][ops][forward][softmax]") {
    // softmax([-1000, -1001]) = softmax([1, 0]) = [e/(e+1), 1/(e+1)]
    CHECK_TENSOR(ag::softmax(T({2}, {-1000, -1001})), {2}, {0.7310585786300049, 0.2689414213699951}, 1e-14);
    CHECK_TENSOR(ag::softmax(T({2}, {1001, 1000})), {2}, {0.7310585786300049, 0.2689414213699951}, 1e-14);
    // [1000+1, 1000+2, 1000+3] = softmax([1,2,3])
    CHECK_TENSOR(ag::softmax(T({3}, {1001, 1002, 1003})), {3},
                 {0.09003057317038046, 0.24472847105479767, 0.6652409557748219}, 1e-14);
}

TEST_CASE("forward: cross_entropy", "[engine][ops][forward][loss]") {
    // row 0: logits [1,2,3], target 2: logsumexp - 3 = 3.40760596444438 - 3 = 0.40760596444438013
    // row 1: logits [0,0,0], target 1: log 3 = 1.0986122886681098
    // mean = (0.40760596444438013 + 1.0986122886681098) / 2 = 0.753109126556245
    const Tensor logits = T({2, 3}, {1, 2, 3, 0, 0, 0});
    CHECK_TENSOR(ag::cross_entropy(logits, T({2}, {2, 1})), {}, {0.753109126556245}, 1e-14);
    // ignored rows are left out of the mean: only row 0 counts
    CHECK_TENSOR(ag::cross_entropy(logits, T({2}, {2, -100})), {}, {0.40760596444438013}, 1e-14);
    CHECK_TENSOR(ag::cross_entropy(logits, T({2}, {-100, 1})), {}, {1.0986122886681098}, 1e-14);
    // a custom ignore_index
    CHECK_TENSOR(ag::cross_entropy(logits, T({2}, {2, 1}), 1), {}, {0.40760596444438013}, 1e-14);
    // row 0 target 0: 3.40760596444438 - 1 = 2.40760596444438
    CHECK_TENSOR(ag::cross_entropy(T({1, 3}, {1, 2, 3}), T({1}, {0})), {}, {2.40760596444438}, 1e-14);
    // huge logits: [1000, 0], target 1 -> 1000 (no overflow)
    CHECK_TENSOR(ag::cross_entropy(T({1, 2}, {1000, 0}), T({1}, {1})), {}, {1000}, 1e-14);
}

TEST_CASE("forward: layer_norm and rms_norm", "[engine][ops][forward][norm]") {
    const double eps = 1e-5;
    // row 0: [1,2,3,4], mean 2.5, biased var (2.25+0.25+0.25+2.25)/4 = 1.25
    // row 1: [2,2,2,6], mean 3, var (1+1+1+9)/4 = 3
    const Tensor x = T({2, 4}, {1, 2, 3, 4, 2, 2, 2, 6});
    const Tensor w = T({4}, {1, 2, 0.5, 2});
    const Tensor b = T({4}, {0, 0.5, 1, -1});
    const double s0 = std::sqrt(1.25 + eps), s1 = std::sqrt(3 + eps);
    std::vector<double> expected;
    const double xc[8] = {-1.5, -0.5, 0.5, 1.5, -1, -1, -1, 3};
    const double wv[4] = {1, 2, 0.5, 2}, bv[4] = {0, 0.5, 1, -1};
    for (int i = 0; i < 8; ++i) expected.push_back(xc[i] / (i < 4 ? s0 : s1) * wv[i % 4] + bv[i % 4]);
    CHECK_TENSOR(ag::layer_norm(x, w, b), {2, 4}, expected, 1e-14);
    // the same numbers as literals: (-1.5/sqrt(1.25001)) = -1.3416354199689269, …
    CHECK_TENSOR(ag::layer_norm(x, w, b), {2, 4},
                 {-1.3416354199689269, -0.394423613312618, 1.2236059033281546, 1.6832708399378538, -0.5773493069415827,
                  -0.6546986138831654, 0.7113253465292086, 2.4640958416494962},
                 1e-14);
    // eps matters: without it row 0 would be -1.3416407864998738
    CHECK(std::fabs(ag::layer_norm(x, w, b).at({0, 0}) - (-1.3416407864998738)) > 1e-6);
    // a different eps
    CHECK_TENSOR(ag::layer_norm(T({1, 2}, {0, 2}), T({2}, {1, 1}), T({2}, {0, 0}), 1.0), {1, 2},
                 {-1 / std::sqrt(2.0), 1 / std::sqrt(2.0)}, 1e-14);  // var 1, (x-1)/sqrt(1+1)

    // RMSNorm of [1,2,3,4]: mean of squares 30/4 = 7.5, so x / sqrt(7.5 + eps)
    // ≈ [0.365148, 0.730297, 1.095445, 1.460593]
    const double r = std::sqrt(7.5 + eps);
    const Tensor ones = T({4}, {1, 1, 1, 1});
    CHECK_TENSOR(ag::rms_norm(T({4}, {1, 2, 3, 4}), ones), {4}, {1 / r, 2 / r, 3 / r, 4 / r}, 1e-14);
    CHECK_TENSOR(ag::rms_norm(T({4}, {1, 2, 3, 4}), ones), {4},
                 {0.3651481282381064, 0.7302962564762128, 1.0954443847143192, 1.4605925129524255}, 1e-14);
    // two rows and a weight: row 1 = [-2,0,0,2], mean square 2
    const double r1 = std::sqrt(2 + eps);
    CHECK_TENSOR(ag::rms_norm(T({2, 4}, {1, 2, 3, 4, -2, 0, 0, 2}), T({4}, {2, 1, 1, 0.5})), {2, 4},
                 {2 / r, 2 / r, 3 / r, 2 / r, -4 / r1, 0, 0, 1 / r1}, 1e-14);
}

TEST_CASE("forward: mse_loss and sum_to", "[engine][ops][forward][loss]") {
    // ((1-1)² + (2-4)² + (3-0)²) / 3 = 13/3
    CHECK_TENSOR(ag::mse_loss(T({3}, {1, 2, 3}), T({3}, {1, 4, 0})), {}, {13.0 / 3.0}, 1e-15);
    // [2,2]: (1 + 1 + 4 + 0) / 4 = 1.5
    CHECK_TENSOR(ag::mse_loss(T({2, 2}, {1, 2, 3, 4}), T({2, 2}, {0, 3, 1, 4})), {}, {1.5}, 1e-15);

    // binary cross-entropy: mean of -t log σ(a) - (1-t) log(1-σ(a)); σ(0) = 1/2, so log 2 at a = 0;
    // a = ±800 would overflow exp in the naive form, here it is 0 or 800 exactly
    const double s2 = 1 / (1 + std::exp(-2.0));
    CHECK_TENSOR(ag::binary_cross_entropy_with_logits(T({3}, {0, 2, -2}), T({3}, {0.25, 1, 0.5})), {},
                 {(std::log(2.0) - std::log(s2) - 0.5 * std::log(1 - s2) - 0.5 * std::log(s2)) / 3}, 1e-15);
    CHECK_TENSOR(ag::binary_cross_entropy_with_logits(T({2}, {800, -800}), T({2}, {1, 1})), {}, {400}, 1e-12);

    const Tensor a = T({2, 3}, {1, 2, 3, 4, 5, 6});
    CHECK_TENSOR(ag::sum_to(a, {3}), {3}, {5, 7, 9});
    CHECK_TENSOR(ag::sum_to(a, {1, 3}), {1, 3}, {5, 7, 9});
    CHECK_TENSOR(ag::sum_to(a, {2, 1}), {2, 1}, {6, 15});
    CHECK_TENSOR(ag::sum_to(a, {1, 1}), {1, 1}, {21});
    CHECK_TENSOR(ag::sum_to(a, {}), {}, {21});
    CHECK_TENSOR(ag::sum_to(a, {2, 3}), {2, 3}, {1, 2, 3, 4, 5, 6});
    // [2,3,4] -> [3,1]: over dims 0 and 2: 60 + 32j (see the sum test)
    CHECK_TENSOR(ag::sum_to(T({2, 3, 4}, test::range_values(24)), {3, 1}), {3, 1}, {60, 92, 124});
}

TEST_CASE("max_abs and max_abs_diff", "[engine][ops][forward]") {
    CHECK(ag::max_abs(T({3}, {1, -5, 3})) == 5);
    CHECK(ag::max_abs_diff(T({3}, {1, -5, 3}), T({3}, {1, -5, 3.5})) == 0.5);
}
