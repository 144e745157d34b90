// Tensor: factories, shapes and strides, views sharing storage, layout,
// element access, errors and printing.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "engine/helpers.h"

using ag::Shape;
using ag::Tensor;

TEST_CASE("zeros ones full and scalar have the right shape and values", "[engine][tensor]") {
    CHECK_TENSOR(Tensor::zeros({2, 3}), {2, 3}, {0, 0, 0, 0, 0, 0});
    CHECK_TENSOR(Tensor::ones({3}), {3}, {1, 1, 1});
    CHECK_TENSOR(Tensor::full({2, 1, 2}, -2.5), {2, 1, 2}, {-2.5, -2.5, -2.5, -2.5});

    const Tensor s = Tensor::scalar(4.25);
    CHECK(s.shape() == Shape{});
    CHECK(s.dim() == 0);
    CHECK(s.numel() == 1);
    CHECK(s.item() == 4.25);

    CHECK_FALSE(Tensor::zeros({2}).requires_grad());
    CHECK(Tensor::zeros({2}, true).requires_grad());
    CHECK(Tensor::ones({2}, true).requires_grad());
    CHECK(Tensor::full({2}, 1.0, true).requires_grad());
    CHECK(Tensor::scalar(1.0, true).requires_grad());
    CHECK(Tensor::zeros({2}, true).is_leaf());

    // An empty dimension is a valid shape with no numbers.
    const Tensor e = Tensor::zeros({0, 3});
    CHECK(e.numel() == 0);
    CHECK(e.to_vector().empty());

    CHECK_FALSE(Tensor().defined());
    CHECK(Tensor::zeros({1}).defined());
}

TEST_CASE("arange follows torch.arange", "[engine][tensor]") {
    CHECK_TENSOR(Tensor::arange(5), {5}, {0, 1, 2, 3, 4});
    CHECK_TENSOR(Tensor::arange(2, 6), {4}, {2, 3, 4, 5});
    // (2 - 1) / 0.25 = 4 values, end excluded
    CHECK_TENSOR(Tensor::arange(1, 2, 0.25), {4}, {1, 1.25, 1.5, 1.75});
    // ceil((2.1 - 0) / 0.5) = 5 values: 0, 0.5, 1, 1.5, 2
    CHECK_TENSOR(Tensor::arange(0, 2.1, 0.5), {5}, {0, 0.5, 1, 1.5, 2});
}

TEST_CASE("from keeps row-major order and checks the count", "[engine][tensor]") {
    const Tensor t = Tensor::from({2, 3}, {1, 2, 3, 4, 5, 6});
    CHECK_TENSOR(t, {2, 3}, {1, 2, 3, 4, 5, 6});
    CHECK(t.at({0, 2}) == 3);
    CHECK(t.at({1, 0}) == 4);
    CHECK(Tensor::from({2}, {1, 2}, true).requires_grad());

    CHECK_THROWS_AS(Tensor::from({2, 3}, {1, 2, 3, 4, 5}), std::exception);
    CHECK_THROWS_AS(Tensor::from({2, 3}, {1, 2, 3, 4, 5, 6, 7}), std::exception);
    CHECK_THROWS_AS(Tensor::from({}, {}), std::exception);  // [] holds exactly one number
}

TEST_CASE("randn and uniform are reproducible from the seed", "[engine][tensor][random]") {
    ag::Generator g1(42), g2(42), g3(43);
    const auto a = Tensor::randn({64}, g1).to_vector();
    const auto b = Tensor::randn({64}, g2).to_vector();
    const auto c = Tensor::randn({64}, g3).to_vector();
    CHECK(a == b);
    CHECK(a != c);
    // Two draws from the same generator differ.
    const auto a2 = Tensor::randn({64}, g1).to_vector();
    CHECK(a != a2);

    ag::Generator u1(7), u2(7), u3(8);
    const auto ua = Tensor::uniform({64}, u1, -1, 1).to_vector();
    const auto ub = Tensor::uniform({64}, u2, -1, 1).to_vector();
    const auto uc = Tensor::uniform({64}, u3, -1, 1).to_vector();
    CHECK(ua == ub);
    CHECK(ua != uc);

    ag::Generator g(1);
    CHECK(Tensor::randn({3}, g, 0, 1, true).requires_grad());
    CHECK(Tensor::uniform({3}, g, 0, 1, true).requires_grad());
    CHECK_FALSE(Tensor::randn({3}, g).requires_grad());
}

namespace {
void moments(const std::vector<double>& v, double& mean, double& std) {
    double s = 0, s2 = 0;
    for (double x : v) s += x;
    mean = s / static_cast<double>(v.size());
    for (double x : v) s2 += (x - mean) * (x - mean);
    std = std::sqrt(s2 / static_cast<double>(v.size()));
}
}  // namespace

TEST_CASE("randn and uniform have the requested distribution", "[engine][tensor][random]") {
    ag::Generator gen(2024);
    double mean = 0, std = 0;

    // 10k samples: the standard error of the mean is 0.01 (0.02 for std 2).
    const Tensor n01 = Tensor::randn({100, 100}, gen);
    CHECK(n01.shape() == Shape{100, 100});
    moments(n01.to_vector(), mean, std);
    INFO("randn(0, 1): mean " << mean << ", std " << std);
    CHECK(std::fabs(mean) < 0.05);
    CHECK(std::fabs(std - 1.0) < 0.05);
    // The shape, not only two moments (a uniform of the same mean and std
    // has them too): P(|z| > 2) = 0.0455 for a normal, 0 for that uniform;
    // 10k samples put the share within ±0.0021 (one standard error).
    const auto z = n01.to_vector();
    const double tail =
        static_cast<double>(std::count_if(z.begin(), z.end(), [](double x) { return std::fabs(x) > 2; })) /
        static_cast<double>(z.size());
    INFO("randn(0, 1): share beyond ±2 " << tail);
    CHECK(std::fabs(tail - 0.0455) < 0.008);

    moments(Tensor::randn({10000}, gen, 3.0, 2.0).to_vector(), mean, std);
    INFO("randn(3, 2): mean " << mean << ", std " << std);
    CHECK(std::fabs(mean - 3.0) < 0.1);
    CHECK(std::fabs(std - 2.0) < 0.1);

    // uniform(-2, 4): mean 1, std 6/sqrt(12) = 1.7320508
    const auto u = Tensor::uniform({10000}, gen, -2.0, 4.0).to_vector();
    moments(u, mean, std);
    INFO("uniform(-2, 4): mean " << mean << ", std " << std);
    CHECK(std::fabs(mean - 1.0) < 0.1);
    CHECK(std::fabs(std - 1.7320508075688772) < 0.05);
    bool in_range = true;
    for (double x : u) in_range = in_range && x >= -2.0 && x < 4.0;
    CHECK(in_range);
}

TEST_CASE("shape size numel strides and dim", "[engine][tensor]") {
    const Tensor t = Tensor::zeros({2, 3, 4});
    CHECK(t.shape() == Shape{2, 3, 4});
    CHECK(t.dim() == 3);
    CHECK(t.numel() == 24);
    CHECK(t.strides() == Shape{12, 4, 1});
    CHECK(t.size(0) == 2);
    CHECK(t.size(2) == 4);
    CHECK(t.size(-1) == 4);
    CHECK(t.size(-3) == 2);
    CHECK(t.is_contiguous());

    CHECK(ag::shape_str({2, 3}) == "[2,3]");
    CHECK(ag::shape_str({}) == "[]");
    CHECK(ag::numel_of({2, 3, 4}) == 24);
    CHECK(ag::numel_of({}) == 1);
    CHECK(ag::contiguous_strides({2, 3, 4}) == Shape{12, 4, 1});

    const Tensor e = ag::empty({3, 2});  // uninitialised numbers: only the layout is defined
    CHECK(e.shape() == Shape{3, 2});
    CHECK(e.is_contiguous());
}

TEST_CASE("views share storage with their base", "[engine][tensor][views]") {
    Tensor base = Tensor::from({2, 3}, {0, 1, 2, 3, 4, 5});

    SECTION("reshape of a contiguous tensor") {
        Tensor r = base.reshape({3, 2});
        CHECK(r.impl()->storage == base.impl()->storage);
        base.data()[3] = 30;  // base[1][0] = r[1][1]
        CHECK(r.at({1, 1}) == 30);
        CHECK(base.view({6}).at({3}) == 30);
    }
    SECTION("transpose") {
        Tensor tr = base.transpose(0, 1);
        CHECK(tr.shape() == Shape{3, 2});
        CHECK(tr.strides() == Shape{1, 3});
        CHECK_FALSE(tr.is_contiguous());
        CHECK(tr.impl()->storage == base.impl()->storage);
        base.data()[1] = 10;  // base[0][1] = tr[1][0]
        CHECK(tr.at({1, 0}) == 10);
        CHECK(base.t().at({1, 0}) == 10);
    }
    SECTION("permute") {
        Tensor b3 = Tensor::from({2, 3, 4}, test::range_values(24));
        Tensor p = b3.permute({2, 0, 1});  // p[k][i][j] = b3[i][j][k]
        CHECK(p.shape() == Shape{4, 2, 3});
        CHECK(p.strides() == Shape{1, 12, 4});
        CHECK(p.impl()->storage == b3.impl()->storage);
        b3.data()[12 + 8 + 3] = -1;  // b3[1][2][3] = p[3][1][2]
        CHECK(p.at({3, 1, 2}) == -1);
        CHECK(p.at({1, 0, 2}) == 9);  // b3[0][2][1] = 0*12 + 2*4 + 1
    }
    SECTION("narrow") {
        Tensor n = base.narrow(1, 1, 2);  // columns 1..2
        CHECK(n.shape() == Shape{2, 2});
        CHECK(n.impl()->storage == base.impl()->storage);
        CHECK(n.impl()->offset == 1);
        CHECK_FALSE(n.is_contiguous());
        base.data()[5] = 50;  // base[1][2] = n[1][1]
        CHECK(n.at({1, 1}) == 50);
        // a narrow along dim 0 of a contiguous tensor stays contiguous
        Tensor rows = base.narrow(0, 1, 1);
        CHECK(rows.is_contiguous());
        CHECK(rows.data() == base.data() + 3);
    }
}

TEST_CASE("contiguous copies a transposed tensor into row-major order", "[engine][tensor][views]") {
    Tensor base = Tensor::from({2, 3}, {0, 1, 2, 3, 4, 5});
    const Tensor tr = base.transpose(0, 1);
    CHECK_TENSOR(tr, {3, 2}, {0, 3, 1, 4, 2, 5});  // to_vector is row-major of the view

    const Tensor c = tr.contiguous();
    CHECK(c.is_contiguous());
    CHECK(c.strides() == Shape{2, 1});
    CHECK(c.impl()->storage != base.impl()->storage);
    const double* d = c.data();
    const std::vector<double> flat(d, d + 6);
    CHECK(flat == std::vector<double>{0, 3, 1, 4, 2, 5});

    // Already contiguous: itself, no copy.
    const Tensor same = base.contiguous();
    CHECK(same.impl()->storage == base.impl()->storage);

    // clone always copies.
    Tensor cl = base.clone();
    CHECK(cl.impl()->storage != base.impl()->storage);
    cl.data()[0] = 99;
    CHECK(base.at({0, 0}) == 0);
    CHECK_TENSOR(base.transpose(0, 1).clone(), {3, 2}, {0, 3, 1, 4, 2, 5});
}

TEST_CASE("at and to_vector on non-contiguous views", "[engine][tensor][views]") {
    const Tensor b3 = Tensor::from({2, 3, 4}, test::range_values(24));
    // narrow of a permute: q[k][i][j] = b3[i][j][k] with k in 1..2, j in 1..2
    const Tensor q = b3.permute({2, 0, 1}).narrow(0, 1, 2).narrow(2, 1, 2);
    CHECK(q.shape() == Shape{2, 2, 2});
    // q[a][i][b] = b3[i][1+b][1+a] = 12 i + 4 (1+b) + (1+a)
    CHECK(q.at({0, 0, 0}) == 5);
    CHECK(q.at({1, 1, 1}) == 12 + 8 + 2);
    CHECK(q.at({1, 0, 1}) == 10);
    CHECK_TENSOR(q, {2, 2, 2}, {5, 9, 17, 21, 6, 10, 18, 22});
    // a transposed narrow
    const Tensor m = Tensor::from({3, 4}, test::range_values(12)).narrow(1, 1, 2).t();
    CHECK_TENSOR(m, {2, 3}, {1, 5, 9, 2, 6, 10});
    CHECK(m.at({1, 2}) == 10);
    CHECK_TENSOR(m.contiguous(), {2, 3}, {1, 5, 9, 2, 6, 10});
    // reshape of a non-contiguous view must give the row-major numbers
    CHECK_TENSOR(m.reshape({3, 2}), {3, 2}, {1, 5, 9, 2, 6, 10});
    CHECK_TENSOR(m.reshape({-1}), {6}, {1, 5, 9, 2, 6, 10});
}

TEST_CASE("item needs exactly one element", "[engine][tensor]") {
    CHECK(Tensor::scalar(3.5).item() == 3.5);
    CHECK(Tensor::from({1, 1}, {-2}).item() == -2);
    CHECK(Tensor::from({3}, {1, 2, 3}).narrow(0, 2, 1).item() == 3);
    CHECK_THROWS_AS(Tensor::zeros({2}).item(), std::exception);
    CHECK_THROWS_AS(Tensor::zeros({2, 3}).item(), std::exception);
}

TEST_CASE("printing shows the numbers and the shape", "[engine][tensor][print]") {
    const Tensor t = Tensor::from({2, 3}, {1.5, -2.25, 3.75, 0.125, 4.5, -6.5});
    const std::string f = fmt::format("{}", t);
    std::ostringstream os;
    os << t;
    const std::string s = t.str();
    INFO("fmt::format: " << f);
    INFO("str(): " << s);
    CHECK(f == os.str());
    for (const char* number : {"1.5", "-2.25", "3.75", "0.125", "4.5", "-6.5"}) {
        CAPTURE(number);
        CHECK(f.find(number) != std::string::npos);
        CHECK(s.find(number) != std::string::npos);
    }
    // Either the shape is printed or the layout is PyTorch-like nested rows.
    const bool shape_shown = f.find("[2,3]") != std::string::npos || f.find("2, 3") != std::string::npos ||
                             f.find("2,3") != std::string::npos;
    const bool nested = f.find("[[") != std::string::npos;
    CHECK((shape_shown || nested));
    // The second row starts after the first one ends.
    CHECK(f.find("1.5") < f.find("0.125"));
    // Transposed views print in logical order: 1.5 then 0.125 then -2.25
    const std::string ft = fmt::format("{}", t.t());
    INFO("transposed: " << ft);
    CHECK(ft.find("1.5") < ft.find("0.125"));
    CHECK(ft.find("0.125") < ft.find("-2.25"));

    const std::string sc = fmt::format("{}", Tensor::scalar(2.5));
    INFO("scalar: " << sc);
    CHECK(sc.find("2.5") != std::string::npos);
}

TEST_CASE("names are kept", "[engine][tensor]") {
    Tensor t = Tensor::zeros({2});
    CHECK(t.name().empty());
    t.set_name("weights");
    CHECK(t.name() == "weights");
}

TEST_CASE("set_ makes a leaf read another tensor's numbers and keeps its own grad", "[engine][tensor][views]") {
    Tensor base = Tensor::from({6}, {0, 1, 2, 3, 4, 5});
    Tensor p = Tensor::zeros({3}, true);
    p.set_name("w");
    (p * 2.0).sum().backward();
    p.set_(base.narrow(0, 2, 3));
    CHECK(p.impl()->storage == base.impl()->storage);
    CHECK(p.to_vector() == std::vector<double>{2, 3, 4});
    base.data()[3] = 30;  // a write through base is seen by p
    CHECK(p.at({1}) == 30);
    CHECK(p.requires_grad());
    CHECK(p.name() == "w");
    CHECK(p.grad().to_vector() == std::vector<double>{2, 2, 2});

    CHECK_THROWS_AS(p.set_(Tensor::zeros({4})), std::invalid_argument);
    CHECK_THROWS_WITH(p.set_(Tensor::zeros({4})), "set_: source of shape [4] for a tensor of shape [3]");
    Tensor not_leaf = p * 2.0;
    CHECK_THROWS_AS(not_leaf.set_(base.narrow(0, 0, 3)), std::logic_error);
    CHECK_THROWS_WITH(not_leaf.set_(base.narrow(0, 0, 3)), "set_: only leaf tensors can take another tensor's storage");
}

TEST_CASE("set_grad gives a tensor its gradient, and backward adds to it", "[engine][tensor]") {
    Tensor x = Tensor::zeros({2}, true);
    const Tensor g = Tensor::from({2}, {1, 2});
    x.set_grad(g);
    CHECK(x.grad().data() == g.data());  // the same numbers, as x.grad = g in PyTorch
    (x * 3.0).sum().backward();
    CHECK(x.grad().to_vector() == std::vector<double>{4, 5});

    CHECK_THROWS_AS(x.set_grad(Tensor::zeros({3})), std::invalid_argument);
    CHECK_THROWS_WITH(x.set_grad(Tensor::zeros({3})), "set_grad: a gradient of shape [3] for a tensor of shape [2]");
}

TEST_CASE("memory_stats counts the storage in use and its peak", "[engine][tensor]") {
    ag::reset_peak_memory();
    const ag::MemoryStats before = ag::memory_stats();
    CHECK(before.peak_bytes == before.live_bytes);
    {
        const Tensor big = Tensor::zeros({1000, 100});  // 800,000 bytes, a size class of its own
        const ag::MemoryStats during = ag::memory_stats();
        CHECK(during.live_bytes >= before.live_bytes + 800000);
        CHECK(during.live_bytes <= before.live_bytes + 800000 * 5 / 4);
    }
    const ag::MemoryStats after = ag::memory_stats();
    CHECK(after.live_bytes == before.live_bytes);  // freed (even if the pool keeps the block)
    CHECK(after.peak_bytes >= before.live_bytes + 800000);
    ag::reset_peak_memory();
    CHECK(ag::memory_stats().peak_bytes == after.live_bytes);
}

// The pool hands a freed block back to the thread that allocated it
// (autograd/storage.cpp: reading lines another core wrote last is slow).
// Sizes here are odd ones no other test uses, so the lists start empty.
TEST_CASE("storage pool: a block goes back to the thread that allocated it", "[engine][tensor][threads]") {
    constexpr std::size_t kBytes = 3 * 1024 * 1024 + 8;  // a size class of its own
    void* mine = ag::detail::pool_allocate(kBytes);
    std::thread([&] { ag::detail::pool_deallocate(mine, kBytes); }).join();  // freed on another thread
    void* theirs = nullptr;
    std::thread([&] { theirs = ag::detail::pool_allocate(kBytes); }).join();
    CHECK(theirs != mine);  // not the other thread's to take
    void* again = ag::detail::pool_allocate(kBytes);
    CHECK(again == mine);  // back with its owner
    ag::detail::pool_deallocate(again, kBytes);
    ag::detail::pool_deallocate(theirs, kBytes);
}

TEST_CASE("storage pool: a thread that ends hands its blocks to the next one", "[engine][tensor][threads]") {
    constexpr std::size_t kBytes = 5 * 1024 * 1024 + 8;
    void* first = nullptr;
    void* second = nullptr;
    std::thread([&] { ag::detail::pool_deallocate(first = ag::detail::pool_allocate(kBytes), kBytes); }).join();
    std::thread([&] { second = ag::detail::pool_allocate(kBytes); }).join();
    CHECK(second == first);  // reused, not allocated anew
    ag::detail::pool_deallocate(second, kBytes);
}
