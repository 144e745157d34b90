// Every op rejects bad shapes with std::invalid_argument, and the message
// names the op and the shapes it got.
#include <limits>
#include <new>
#include <stdexcept>

#include "engine/helpers.h"

using ag::Shape;
using ag::Tensor;
using Catch::Contains;

// The exception type, then its message.
#define CHECK_INVALID(expr, matcher)                  \
    do {                                              \
        CHECK_THROWS_AS(expr, std::invalid_argument); \
        CHECK_THROWS_WITH(expr, matcher);             \
    } while (0)

namespace {
Tensor Z(const Shape& s) { return Tensor::zeros(s); }
}  // namespace

TEST_CASE("errors: matmul", "[engine][errors][matmul]") {
    CHECK_THROWS_AS(ag::matmul(Z({2, 3}), Z({4, 5})), std::invalid_argument);
    CHECK_THROWS_WITH(ag::matmul(Z({2, 3}), Z({4, 5})), "matmul: [2,3] @ [4,5]: inner sizes 3 and 4 differ");
    CHECK_INVALID(Z({2, 3}).matmul(Z({2, 3})), Contains("matmul") && Contains("[2,3]"));
    // batch dims that do not broadcast
    CHECK_THROWS_AS(ag::matmul(Z({2, 2, 3}), Z({3, 3, 4})), std::invalid_argument);
    // batched, inner sizes differ
    CHECK_INVALID(ag::matmul(Z({2, 2, 3}), Z({2, 4, 4})),
                  Contains("matmul") && Contains("[2,2,3]") && Contains("[2,4,4]"));
    CHECK_INVALID(ag::matmul(Z({2, 2, 3}), Z({4, 5})), Contains("matmul") && Contains("[2,2,3]") && Contains("[4,5]"));
    // a scalar has no matrix dims
    CHECK_INVALID(ag::matmul(Tensor::scalar(1), Z({1, 1})), Contains("matmul"));
}

TEST_CASE("errors: matmul with batch dims that do not broadcast names both operand shapes",
          "[engine][errors][matmul]") {
    // batch [2] vs [3], and [2,2] vs [3]; the message must show the operands, not just their batch dims
    CHECK_INVALID(ag::matmul(Z({2, 2, 3}), Z({3, 3, 4})),
                  Contains("matmul") && Contains("[2,2,3]") && Contains("[3,3,4]"));
    CHECK_INVALID(ag::matmul(Z({2, 2, 2, 3}), Z({3, 3, 4})),
                  Contains("matmul") && Contains("[2,2,2,3]") && Contains("[3,3,4]"));
}

TEST_CASE("errors: broadcasting binary ops", "[engine][errors][pointwise]") {
    const Tensor a = Z({2, 3}), b = Z({4});
    CHECK_INVALID(ag::add(a, b), Contains("add") && Contains("[2,3]") && Contains("[4]"));
    CHECK_INVALID(a + b, Contains("add") && Contains("[2,3]") && Contains("[4]"));
    CHECK_INVALID(ag::sub(a, b), Contains("sub") && Contains("[2,3]") && Contains("[4]"));
    CHECK_INVALID(ag::mul(a, b), Contains("mul") && Contains("[2,3]") && Contains("[4]"));
    CHECK_INVALID(ag::div(a, b), Contains("div") && Contains("[2,3]") && Contains("[4]"));
    // size 2 against size 3 in a middle dim
    CHECK_INVALID(ag::add(Z({4, 2, 3}), Z({3, 1})), Contains("add") && Contains("[4,2,3]") && Contains("[3,1]"));
    CHECK_INVALID(ag::where(Z({2}), Z({3}), Z({3})), Contains("where"));
    CHECK_INVALID(ag::where(Z({3}), Z({3}), Z({2, 2})), Contains("where") && Contains("[2,2]"));
    CHECK_INVALID(ag::masked_fill(a, Z({4}), 1.0), Contains("masked_fill") && Contains("[2,3]") && Contains("[4]"));
    // the mask must broadcast to x, not the other way round
    CHECK_INVALID(ag::masked_fill(Z({3}), Z({2, 3}), 1.0),
                  Contains("masked_fill") && Contains("[3]") && Contains("[2,3]"));
}

TEST_CASE("errors: reductions", "[engine][errors][reduce]") {
    const Tensor a = Z({2, 3});
    CHECK_INVALID(ag::sum(a, {2}), Contains("sum") && Contains("2"));
    CHECK_INVALID(ag::sum(a, {-3}), Contains("sum") && Contains("-3"));
    CHECK_INVALID(ag::sum(a, {1, 1}), Contains("sum") && Contains("1"));  // a dim listed twice
    // no dims: PyTorch reads it as every dim, which sum(a) already is
    CHECK_INVALID(ag::sum(a, {}), Contains("sum: no dims given for shape [2,3]"));
    CHECK_INVALID(ag::mean(a, {}), Contains("mean: no dims given for shape [2,3]"));
    CHECK_INVALID(ag::mean(a, {5}), Contains("mean") && Contains("5"));
    CHECK_INVALID(ag::max(a, 2), Contains("max") && Contains("2"));
    CHECK_INVALID(ag::argmax(a, -3), Contains("argmax") && Contains("-3"));
    CHECK_INVALID(ag::sum_to(a, {4}), Contains("sum_to") && Contains("[2,3]") && Contains("[4]"));
    CHECK_INVALID(ag::sum_to(a, {3, 2}), Contains("sum_to") && Contains("[2,3]") && Contains("[3,2]"));
    CHECK_INVALID(ag::sum_to(Z({3}), {2, 3}), Contains("sum_to") && Contains("[3]") && Contains("[2,3]"));
}

TEST_CASE("errors: reshape transpose permute narrow", "[engine][errors][shape]") {
    const Tensor a = Z({2, 3});
    CHECK_INVALID(ag::reshape(a, {4, 2}), Contains("reshape") && Contains("[2,3]") && Contains("[4,2]"));
    CHECK_INVALID(a.reshape({7}), Contains("reshape") && Contains("[2,3]") && Contains("[7]"));
    CHECK_INVALID(ag::reshape(a, {-1, -1}), Contains("reshape") && Contains("[2,3]"));

    CHECK_INVALID(ag::transpose(a, 0, 2), Contains("transpose") && Contains("2"));
    CHECK_INVALID(a.transpose(-3, 0), Contains("transpose") && Contains("-3"));
    CHECK_INVALID(Z({2, 3, 4}).t(), Contains("[2,3,4]"));  // t() is for 2-D tensors
    CHECK_INVALID(ag::permute(a, {0, 0}), Contains("permute") && Contains("[2,3]"));
    CHECK_INVALID(ag::permute(a, {0}), Contains("permute") && Contains("[2,3]"));
    CHECK_INVALID(ag::permute(a, {0, 2}), Contains("permute") && Contains("2"));
    CHECK_INVALID(a.permute({1, 0, 2}), Contains("permute") && Contains("[2,3]"));

    CHECK_INVALID(ag::narrow(a, 1, 2, 2), Contains("narrow") && Contains("[2,3]"));  // 2 + 2 > 3
    CHECK_INVALID(ag::narrow(a, 0, -1, 1), Contains("narrow") && Contains("[2,3]"));
    CHECK_INVALID(ag::narrow(a, 0, 0, 3), Contains("narrow") && Contains("[2,3]"));
    CHECK_INVALID(ag::narrow(a, 2, 0, 1), Contains("narrow") && Contains("2"));
    CHECK_INVALID(a.narrow(1, 0, -1), Contains("narrow") && Contains("[2,3]"));
}

TEST_CASE("errors: cat and stack", "[engine][errors][shape]") {
    CHECK_INVALID(ag::cat({Z({2, 3}), Z({2, 4})}, 0), Contains("cat") && Contains("[2,3]") && Contains("[2,4]"));
    CHECK_INVALID(ag::cat({Z({2, 3}), Z({3})}, 0), Contains("cat") && Contains("[2,3]") && Contains("[3]"));
    CHECK_INVALID(ag::cat({Z({2}), Tensor()}, 0), Contains("cat: tensor 1 of 2 is undefined"));
    CHECK_INVALID(ag::cat({Tensor::scalar(1), Tensor::scalar(2)}, 0), Contains("cat: a scalar (shape []) has no dim"));
    CHECK_INVALID(ag::cat({Z({2, 3}), Z({2, 3})}, 2), Contains("cat") && Contains("2"));
    CHECK_INVALID(ag::cat({}, 0), Contains("cat"));
    CHECK_INVALID(ag::stack({Z({2, 3}), Z({3, 2})}, 0), Contains("stack") && Contains("[2,3]") && Contains("[3,2]"));
    CHECK_INVALID(ag::stack({Z({2, 3}), Z({2, 3})}, 3), Contains("stack") && Contains("3"));
    CHECK_INVALID(ag::stack({}, 0), Contains("stack"));
}

TEST_CASE("errors: index_select and embedding ids", "[engine][errors][shape]") {
    const Tensor x = Z({3, 2});
    // an id error names the op and the offending id
    CHECK_INVALID(ag::index_select(x, 0, Tensor::from({2}, {0, 3})), Contains("index_select") && Contains("3"));
    CHECK_INVALID(ag::index_select(x, 0, Tensor::from({1}, {-1})), Contains("index_select") && Contains("-1"));
    CHECK_INVALID(ag::index_select(x, 1, Tensor::from({1}, {2})), Contains("index_select") && Contains("2"));
    CHECK_INVALID(ag::index_select(x, 0, Tensor::from({2}, {1, 1.5})), Contains("index_select") && Contains("1.5"));
    CHECK_INVALID(ag::index_select(x, 2, Tensor::from({1}, {0})), Contains("index_select") && Contains("2"));

    const Tensor w = Z({4, 2});
    CHECK_INVALID(ag::embedding(w, Tensor::from({3}, {0, 4, 1})), Contains("embedding") && Contains("4"));
    CHECK_INVALID(ag::embedding(w, Tensor::from({2}, {-1, 0})), Contains("embedding") && Contains("-1"));
    CHECK_INVALID(ag::embedding(w, Tensor::from({2, 1}, {2, 0.5})), Contains("embedding") && Contains("0.5"));
    CHECK_INVALID(ag::embedding(Z({4}), Tensor::from({1}, {0})), Contains("embedding") && Contains("[4]"));
}

TEST_CASE("errors: softmax losses and norms", "[engine][errors][loss]") {
    const Tensor logits = Z({2, 3});
    CHECK_INVALID(ag::cross_entropy(logits, Tensor::from({3}, {0, 1, 2})),
                  Contains("cross_entropy") && Contains("[2,3]") && Contains("[3]"));
    CHECK_INVALID(ag::cross_entropy(logits, Tensor::from({2, 1}, {0, 1})),
                  Contains("cross_entropy") && Contains("[2,3]") && Contains("[2,1]"));
    CHECK_INVALID(ag::cross_entropy(logits, Tensor::from({2}, {0, 3})), Contains("cross_entropy") && Contains("3"));
    CHECK_INVALID(ag::cross_entropy(Z({0, 3}), Z({0})),
                  Contains("cross_entropy: no targets: logits [0,3] hold no row"));
    CHECK_INVALID(ag::cross_entropy(logits, Tensor::from({2}, {-1, 0})), Contains("cross_entropy") && Contains("-1"));
    CHECK_INVALID(ag::cross_entropy(logits, Tensor::from({2}, {0.5, 0})), Contains("cross_entropy") && Contains("0.5"));
    CHECK_INVALID(ag::cross_entropy(Z({3}), Tensor::from({1}, {0})), Contains("cross_entropy") && Contains("[3]"));
    CHECK_INVALID(ag::mse_loss(Z({3}), Z({4})), Contains("mse_loss") && Contains("[3]") && Contains("[4]"));
    CHECK_INVALID(ag::mse_loss(Z({2, 3}), Z({3})), Contains("mse_loss") && Contains("[2,3]") && Contains("[3]"));
    CHECK_INVALID(ag::binary_cross_entropy_with_logits(Z({2, 3}), Z({3, 2})),
                  Contains("binary_cross_entropy_with_logits") && Contains("[2,3]") && Contains("[3,2]"));
    CHECK_INVALID(ag::binary_cross_entropy_with_logits(Z({0}), Z({0})), Contains("empty"));

    const Tensor x = Z({2, 4});
    CHECK_INVALID(ag::layer_norm(x, Z({3}), Z({4})), Contains("layer_norm") && Contains("[2,4]") && Contains("[3]"));
    CHECK_INVALID(ag::layer_norm(x, Z({4}), Z({5})), Contains("layer_norm") && Contains("[2,4]") && Contains("[5]"));
    CHECK_INVALID(ag::layer_norm(x, Z({1, 4}), Z({4})), Contains("layer_norm") && Contains("[1,4]"));
    CHECK_INVALID(ag::rms_norm(x, Z({3})), Contains("rms_norm") && Contains("[2,4]") && Contains("[3]"));
    // a LayerNorm without bias is not this op: say which argument is missing
    CHECK_INVALID(ag::layer_norm(x, Z({4}), Tensor()), Contains("layer_norm: bias is an undefined tensor"));
    // eps makes a constant row finite; a negative or NaN one makes it NaN
    CHECK_INVALID(ag::layer_norm(x, Z({4}), Z({4}), -1.0), Contains("layer_norm: eps must be finite and >= 0"));
    CHECK_INVALID(ag::rms_norm(x, Z({4}), std::nan("")), Contains("rms_norm: eps must be finite and >= 0, got nan"));
    CHECK_INVALID(ag::max_abs_diff(Z({3}), Z({4})), Contains("max_abs_diff") && Contains("[3]") && Contains("[4]"));
}

TEST_CASE("errors: backward with a gradient of the wrong shape", "[engine][errors][autograd]") {
    Tensor x = Tensor::zeros({2, 2}, true);
    const Tensor y = x * 2.0;
    CHECK_THROWS_AS(y.backward(Tensor::ones({3})), std::invalid_argument);
    CHECK_THROWS_WITH(y.backward(Tensor::ones({3})), Contains("[2,2]") && Contains("[3]"));
}

// ops.h: "each checks its shapes and throws std::invalid_argument naming the
// op and the shapes it got". A dim out of range is a shape error too: the
// message must show the shape the dim was checked against.
TEST_CASE("errors: a dim out of range names the shape", "[engine][errors][shape]") {
    const Tensor a = Z({2, 3});
    CHECK_INVALID(ag::sum(a, {2}), Contains("sum") && Contains("[2,3]"));
    CHECK_INVALID(ag::mean(a, {-3}), Contains("mean") && Contains("[2,3]"));
    CHECK_INVALID(ag::max(a, 2), Contains("max") && Contains("[2,3]"));
    CHECK_INVALID(ag::argmax(a, -3), Contains("argmax") && Contains("[2,3]"));
    CHECK_INVALID(ag::transpose(a, 0, 2), Contains("transpose") && Contains("[2,3]"));
    CHECK_INVALID(ag::permute(a, {0, 2}), Contains("permute") && Contains("[2,3]"));
    CHECK_INVALID(ag::narrow(a, 2, 0, 1), Contains("narrow") && Contains("[2,3]"));
    CHECK_INVALID(ag::cat({a, a}, 2), Contains("cat") && Contains("[2,3]"));
    CHECK_INVALID(ag::stack({a, a}, 3), Contains("stack") && Contains("[2,3]"));
    CHECK_INVALID(ag::index_select(a, 2, Tensor::from({1}, {0})), Contains("index_select") && Contains("[2,3]"));
}

// [2,3] has 6 numbers: -1 cannot be inferred for [4,-1]. The message must
// say reshape and show both shapes (not a "negative size" complaint).
TEST_CASE("errors: reshape with a -1 that cannot be inferred", "[engine][errors][shape]") {
    const Tensor a = Z({2, 3});
    CHECK_INVALID(a.view({4, -1}), Contains("reshape") && Contains("[2,3]") && Contains("[4,-1]"));
    CHECK_INVALID(ag::reshape(a, {-1, 5}), Contains("reshape") && Contains("[2,3]") && Contains("[-1,5]"));
}

// ---- sizes that do not fit in int64 (issue 13) --------------------------------
// Sizes, strides and offsets are int64. A product or sum of them that does
// not fit used to wrap round to a small or negative number, which then
// passed every bounds check: zeros({2^62, 4}) held 0 numbers, and narrow at
// start INT64_MAX read outside its storage. Each entry point now refuses
// with its own name. A shape is refused when its sizes other than 0
// multiply to 2^63 or more, even if it holds no element: its strides would
// not fit either.

namespace {
constexpr int64_t kMaxSize = std::numeric_limits<int64_t>::max();
constexpr int64_t kHuge = int64_t{1} << 62;  // [kHuge, 4] has 2^64 elements
}  // namespace

TEST_CASE("overflow: factories refuse shapes of 2^63 or more elements", "[engine][errors][overflow]") {
    CHECK_INVALID(Tensor::zeros({kHuge, 4}), "zeros: shape [4611686018427387904,4] has 2^63 or more elements");
    CHECK_INVALID(Tensor::ones({4, kHuge}), Contains("ones") && Contains("[4,4611686018427387904]"));
    CHECK_INVALID(Tensor::full({2, kHuge, 2}, 1.0), Contains("full") && Contains("2^63"));
    ag::Generator gen(1);
    CHECK_INVALID(Tensor::randn({kHuge, 2}, gen), Contains("randn") && Contains("2^63"));
    CHECK_INVALID(Tensor::uniform({kHuge, 2}, gen, 0.0, 1.0), Contains("uniform") && Contains("2^63"));
    CHECK_INVALID(ag::empty({kHuge, 2}), Contains("empty") && Contains("2^63"));
    // (4 · (2^62 + 5) wraps round to 20, the number of values given)
    CHECK_INVALID(Tensor::from({4, kHuge + 5}, std::vector<double>(20)),
                  Contains("Tensor::from") && Contains("[4,4611686018427387909]"));
    // no element, but strides of 2^64
    CHECK_INVALID(
        Tensor::zeros({0, kHuge, 4}),
        "zeros: shape [0,4611686018427387904,4] is too large: its sizes other than 0 multiply to 2^63 or more");
    CHECK(Tensor::zeros({kHuge, 0}).numel() == 0);  // 2^62 fits: a valid empty tensor
    // Ops on such a tensor copy nothing, and do not walk its 2^62 empty rows.
    const Tensor empty_rows = Tensor::zeros({kHuge, 0}, true);
    CHECK(ag::cat({empty_rows, empty_rows}, 1).numel() == 0);
    CHECK(ag::index_select(empty_rows, 1, Tensor::zeros({0})).numel() == 0);
    ag::sum(ag::narrow(empty_rows, 1, 0, 0)).backward();
    CHECK(empty_rows.grad().numel() == 0);
    CHECK_INVALID(Tensor::zeros({2, -3}), "zeros: negative size in shape [2,-3]");
    CHECK_INVALID(ag::numel_of({kHuge, 4}), Contains("2^63"));
    CHECK_INVALID(ag::contiguous_strides({0, kHuge, 4}), Contains("contiguous_strides") && Contains("2^63"));
}

TEST_CASE("overflow: arange refuses a range of 2^63 or more elements", "[engine][errors][overflow]") {
    CHECK_INVALID(Tensor::arange(0.0, 1e300), Contains("arange") && Contains("2^63"));
    CHECK_INVALID(Tensor::arange(-1e308, 1e308, 1e-300), Contains("arange") && Contains("2^63"));
}

// Sizes that fit in int64 but not in memory: a failed allocation, not a
// wrapped-round small one (nor std::vector's length_error).
TEST_CASE("overflow: a tensor larger than any memory fails as an allocation", "[engine][errors][overflow]") {
    CHECK_THROWS_AS(Tensor::zeros({int64_t{1} << 61}), std::bad_alloc);  // 2^64 bytes
    CHECK_THROWS_AS(ag::detail::pool_allocate(std::numeric_limits<std::size_t>::max() - 1), std::bad_alloc);
}

TEST_CASE("overflow: reshape to sizes that wrap round to the element count", "[engine][errors][overflow]") {
    const Tensor a = Z({4, 5});
    CHECK_INVALID(a.reshape({4, kHuge + 5}),
                  Contains("reshape") && Contains("[4,5]") && Contains("[4,4611686018427387909]") && Contains("2^63"));
    CHECK_INVALID(a.reshape({-1, kHuge + 5, 4}), Contains("reshape") && Contains("[-1,4611686018427387909,4]"));
    CHECK_INVALID(Z({0}).reshape({0, kHuge, 4}), Contains("reshape") && Contains("2^63"));
}

TEST_CASE("overflow: narrow past the end of a dim", "[engine][errors][overflow]") {
    CHECK_INVALID(ag::narrow(Z({4, 5}), 1, kMaxSize, 1),
                  "narrow: start 9223372036854775807 + length 1 overflows dim 1 of size 5 in [4,5]");
    CHECK_INVALID(Z({4, 5}).narrow(0, 1, kMaxSize), Contains("narrow") && Contains("overflows dim 0 of size 4"));
}

TEST_CASE("overflow: cat and stack of sizes that add up past int64", "[engine][errors][overflow]") {
    CHECK_INVALID(ag::cat({Z({0, kMaxSize}), Z({0, 1})}, 1),
                  Contains("cat") && Contains("dim 1") && Contains("[0,9223372036854775807]") && Contains("2^63"));
    CHECK_INVALID(ag::cat({Z({1, 0, kHuge}), Z({1, 0, kHuge})}, 0),
                  Contains("cat") && Contains("[2,0,4611686018427387904]"));
    CHECK_INVALID(ag::stack({Z({0, kHuge}), Z({0, kHuge})}, 0),
                  Contains("stack") && Contains("[2,0,4611686018427387904]"));
}

TEST_CASE("overflow: broadcasting to a shape too large", "[engine][errors][overflow]") {
    // [0,1,2^32] with [0,2^32,1]: no element, but a stride of 2^64
    const Tensor a = Z({0, 1, int64_t{1} << 32}), b = Z({0, int64_t{1} << 32, 1});
    CHECK_INVALID(ag::add(a, b), Contains("add") && Contains("[0,4294967296,4294967296]") && Contains("2^63"));
    CHECK_INVALID(a * b, Contains("mul") && Contains("2^63"));
    CHECK_INVALID(ag::where(a, b, Z({1})), Contains("where") && Contains("2^63"));
}

TEST_CASE("overflow: matmul and linear outputs too large", "[engine][errors][overflow]") {
    const int64_t n = int64_t{1} << 32;
    // [2^32, 0] @ [0, 2^32] is [2^32, 2^32] (of zeros): 2^64 numbers
    CHECK_INVALID(ag::matmul(Z({n, 0}), Z({0, n})),
                  Contains("matmul") && Contains("[4294967296,4294967296]") && Contains("2^63"));
    CHECK_INVALID(ag::matmul(Z({2, n, 0}), Z({0, n})), Contains("matmul") && Contains("2^63"));
    CHECK_INVALID(ag::matmul(Z({n, 1, 1, 0}), Z({1, n, 0, 1})), Contains("matmul") && Contains("2^63"));
    CHECK_INVALID(ag::linear(Z({n, 0}), Z({n, 0})), Contains("linear") && Contains("2^63"));
}

// With an inner size of 0 every output is an empty sum: 0, or the bias. The
// rows used to be counted as numel / inner size = 0: linear's output was
// left unwritten (whatever the allocator's recycled block held) and a
// batched matmul's reshape to [-1, 0] failed.
TEST_CASE("overflow: linear and matmul with an inner size of 0", "[engine][errors][overflow]") {
    { const Tensor junk = Tensor::full({3, 4}, 7.0); }  // a freed block the output may reuse
    CHECK(ag::max_abs_diff(ag::linear(Z({3, 0}), Z({4, 0}), Tensor::ones({4})), Tensor::ones({3, 4})) == 0.0);
    { const Tensor junk = Tensor::full({3, 4}, 7.0); }
    CHECK(ag::max_abs_diff(ag::linear(Z({3, 0}), Z({4, 0})), Z({3, 4})) == 0.0);
    CHECK(ag::max_abs_diff(ag::matmul(Z({2, 3, 0}), Z({0, 4})), Z({2, 3, 4})) == 0.0);
}

TEST_CASE("overflow: index_select and embedding outputs too large", "[engine][errors][overflow]") {
    CHECK_INVALID(ag::index_select(Z({2, 0, int64_t{1} << 61}), 0, Tensor::from({4}, {0, 1, 0, 1})),
                  Contains("index_select") && Contains("[4,0,2305843009213693952]") && Contains("2^63"));
    CHECK_INVALID(ag::embedding(Z({0, kHuge}), Z({0, 4})),
                  Contains("embedding") && Contains("[0,4,4611686018427387904]") && Contains("2^63"));
}
