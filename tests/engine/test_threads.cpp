// Results do not depend on the thread count: a model-sized forward and
// backward with 1 and with 2 engine threads must agree bit for bit.
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "autograd/thread_pool.h"
#include "engine/helpers.h"

using ag::Tensor;

namespace {

using Results = std::vector<std::pair<std::string, std::vector<double>>>;

Results run_model(int threads) {
    const ag::ThreadCountGuard use(threads);
    REQUIRE(ag::num_threads() == threads);
    ag::Generator gen(2718);
    const int64_t N = 512, D = 64, H = 256, C = 40, V = 50;
    Tensor x = Tensor::randn({N, D}, gen, 0, 1, true);
    Tensor E = Tensor::randn({V, D}, gen, 0, 0.5, true);
    Tensor W1 = Tensor::randn({D, H}, gen, 0, 0.125, true);
    Tensor b1 = Tensor::randn({H}, gen, 0, 0.1, true);
    Tensor W2 = Tensor::randn({H, D}, gen, 0, 0.0625, true);
    Tensor ln_w = Tensor::uniform({D}, gen, 0.5, 1.5, true);
    Tensor ln_b = Tensor::randn({D}, gen, 0, 0.1, true);
    Tensor Wout = Tensor::randn({D, C}, gen, 0, 0.125, true);
    Tensor Wb = Tensor::randn({D, D}, gen, 0, 0.125, true);
    Tensor Wbb = Tensor::randn({1, D, D}, gen, 0, 0.125, true);
    Tensor g = Tensor::uniform({D}, gen, 0.5, 1.5, true);
    std::vector<double> ids(N), targets(N);
    for (int64_t i = 0; i < N; ++i) {
        ids[i] = static_cast<double>(gen.randint(V));
        targets[i] = (i % 17 == 0) ? -100.0 : static_cast<double>(gen.randint(C));
    }

    const Tensor h0 = x + ag::embedding(E, Tensor::from({N}, ids));  // [N,D]
    const Tensor h1 = ag::gelu(ag::matmul(h0, W1) + b1);             // [N,H]
    const Tensor h2 = ag::matmul(h1, W2);                            // [N,D]
    const Tensor h3 = ag::layer_norm(h2 + h0, ln_w, ln_b);           // [N,D]
    const Tensor logits = ag::matmul(h3, Wout);                      // [N,C]
    const Tensor ce = ag::cross_entropy(logits, Tensor::from({N}, targets));
    const Tensor probs = ag::softmax(logits);
    // attention-like batched products: [8, 64, D]
    const Tensor q = ag::reshape(h3, {8, N / 8, D});
    const Tensor att = ag::softmax(ag::matmul(q, ag::transpose(q, 1, 2)) / 8.0);  // [8,64,64]
    const Tensor o = ag::matmul(att, q);                                          // [8,64,D]
    const Tensor o2 = ag::matmul(o, Wb) + ag::matmul(o, Wbb);                     // 2-D right, broadcast batch
    const Tensor r = ag::rms_norm(o2, g);
    const Tensor loss = ce + ag::mean(r * r) + ag::sum(probs * probs) / static_cast<double>(N) +
                        ag::mean(ag::sum(h1, {0})) * 1e-3 + ag::mean(ag::tanh(h2), {1}).sum() * 1e-3;
    loss.backward();

    Results out;
    for (const auto& [name, t] : std::vector<std::pair<std::string, Tensor>>{{"loss", loss},
                                                                             {"h1", h1},
                                                                             {"h3", h3},
                                                                             {"logits", logits},
                                                                             {"probs", probs},
                                                                             {"att", att},
                                                                             {"o2", o2},
                                                                             {"r", r},
                                                                             {"grad x", x.grad()},
                                                                             {"grad E", E.grad()},
                                                                             {"grad W1", W1.grad()},
                                                                             {"grad b1", b1.grad()},
                                                                             {"grad W2", W2.grad()},
                                                                             {"grad ln_w", ln_w.grad()},
                                                                             {"grad ln_b", ln_b.grad()},
                                                                             {"grad Wout", Wout.grad()},
                                                                             {"grad Wb", Wb.grad()},
                                                                             {"grad Wbb", Wbb.grad()},
                                                                             {"grad g", g.grad()}}) {
        out.emplace_back(name, t.defined() ? t.to_vector() : std::vector<double>{});
    }
    return out;
}

void check_bitwise_equal(const Results& one, const Results& two) {
    REQUIRE(one.size() == two.size());
    for (std::size_t i = 0; i < one.size(); ++i) {
        const auto& [name, a] = one[i];
        const auto& b = two[i].second;
        CAPTURE(name);
        CHECK_FALSE(a.empty());
        REQUIRE(a.size() == b.size());
        const bool same = std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
        if (!same) {
            std::size_t first = 0;
            while (first < a.size() && std::memcmp(&a[first], &b[first], sizeof(double)) == 0) ++first;
            double worst = 0;
            std::size_t differing = 0;
            for (std::size_t k = 0; k < a.size(); ++k) {
                if (std::memcmp(&a[k], &b[k], sizeof(double)) != 0) ++differing;
                worst = std::max(worst, std::fabs(a[k] - b[k]));
            }
            INFO(name << ": " << differing << " of " << a.size() << " elements differ; first at " << first
                      << ": 1 thread " << fmt::format("{:.17g}", a[first]) << ", 2 threads "
                      << fmt::format("{:.17g}", b[first]) << "; max |diff| " << worst);
            CHECK(same);
        } else {
            CHECK(same);
        }
    }
}

}  // namespace

TEST_CASE("a model's forward and backward are bitwise equal for 1 and 2 threads", "[engine][threads]") {
    const Results one = run_model(1);
    const Results two = run_model(2);
    check_bitwise_equal(one, two);
    // and the computation is repeatable at all
    check_bitwise_equal(two, run_model(2));
}

TEST_CASE("large reductions are bitwise equal for 1 and 2 threads", "[engine][threads]") {
    auto run = [](int threads) {
        const ag::ThreadCountGuard use(threads);
        ag::Generator gen(99);
        Tensor x = Tensor::randn({1024, 1024}, gen, 0, 1, true);
        const Tensor s_all = ag::sum(x);
        const Tensor s0 = ag::sum(x, {0});
        const Tensor m1 = ag::mean(x, {1}, true);
        const Tensor mx = ag::max(x, 1);
        const Tensor am = ag::argmax(x, 0);
        const Tensor st = ag::sum_to(x, {1, 1024});
        const Tensor mse = ag::mse_loss(x, x * 0.5);
        const Tensor loss = s_all * 1e-3 + ag::sum(s0 * s0) * 1e-6 + ag::sum(m1) + mse;
        loss.backward();
        return Results{
            {"sum", s_all.to_vector()},    {"sum dim 0", s0.to_vector()},    {"mean dim 1", m1.to_vector()},
            {"max dim 1", mx.to_vector()}, {"argmax dim 0", am.to_vector()}, {"sum_to", st.to_vector()},
            {"mse", mse.to_vector()},      {"loss", loss.to_vector()},       {"grad x", x.grad().to_vector()}};
    };
    check_bitwise_equal(run(1), run(2));
}

namespace {

struct OpCase {
    std::string name;
    std::vector<ag::Shape> shapes;  // inputs, all requiring grad
    std::function<Tensor(const std::vector<Tensor>&)> f;
    bool positive = false;  // inputs in [0.5, 2) instead of N(0,1)
};

// Forward and backward (with a fixed random upstream gradient) of one op.
Results run_op(const OpCase& op, int threads) {
    const ag::ThreadCountGuard use(threads);
    ag::Generator gen(4242);
    std::vector<Tensor> in;
    for (const auto& s : op.shapes)
        in.push_back(op.positive ? Tensor::uniform(s, gen, 0.5, 2.0, true) : Tensor::randn(s, gen, 0, 1, true));
    const Tensor out = op.f(in);
    Results r{{op.name + ": output", out.to_vector()}};
    if (out.requires_grad()) {
        out.backward(Tensor::randn(out.shape(), gen));
        for (std::size_t i = 0; i < in.size(); ++i)
            r.emplace_back(op.name + ": grad of input " + std::to_string(i),
                           in[i].grad().defined() ? in[i].grad().to_vector() : std::vector<double>{});
    }
    return r;
}

}  // namespace

TEST_CASE("each op is bitwise equal for 1 and 2 threads", "[engine][threads]") {
    using V = std::vector<Tensor>;
    // [256,160] = 40960 elements: above two pointwise grains of 4096 (kPointwiseGrain), so
    // pointwise ops split across 2 threads; 256 and 512 rows for row-wise ops.
    const ag::Shape X{256, 160};
    ag::Generator idgen(77);
    const Tensor rows_idx = test::rand_ids({300}, idgen, 256);
    const Tensor emb_ids = test::rand_ids({512}, idgen, 100);
    std::vector<double> tv(512);
    for (std::size_t i = 0; i < tv.size(); ++i) tv[i] = i % 13 == 0 ? -100.0 : static_cast<double>(idgen.randint(96));
    const Tensor targets = Tensor::from({512}, tv);
    std::vector<double> cv(256 * 160);
    for (auto& c : cv) c = idgen.uniform() < 0.5 ? 1.0 : 0.0;
    const Tensor cond = Tensor::from(X, cv);
    std::vector<double> mv(160);
    for (auto& m : mv) m = idgen.uniform() < 0.3 ? 1.0 : 0.0;
    const Tensor mask = Tensor::from({1, 160}, mv);

    std::vector<int64_t> rope_positions(37);
    for (std::size_t t = 0; t < rope_positions.size(); ++t) rope_positions[t] = static_cast<int64_t>(3 * t);
    const std::vector<OpCase> ops = {
        {"add [256,160] + [160]", {X, {160}}, [](const V& x) { return x[0] + x[1]; }},
        {"sub [256,160] - [256,1]", {X, {256, 1}}, [](const V& x) { return x[0] - x[1]; }},
        {"mul", {X, X}, [](const V& x) { return x[0] * x[1]; }},
        {"div [256,160] / [160]", {X, {160}}, [](const V& x) { return x[0] / x[1]; }, true},
        {"scalar forms", {X}, [](const V& x) { return (x[0] * 1.7 + 0.3) / 2.9 - x[0]; }},
        {"neg", {X}, [](const V& x) { return -x[0]; }},
        {"pow 2.5", {X}, [](const V& x) { return ag::pow(x[0], 2.5); }, true},
        {"exp", {X}, [](const V& x) { return ag::exp(x[0]); }},
        {"log", {X}, [](const V& x) { return ag::log(x[0]); }, true},
        {"sqrt", {X}, [](const V& x) { return ag::sqrt(x[0]); }, true},
        {"tanh", {X}, [](const V& x) { return ag::tanh(x[0]); }},
        {"sigmoid", {X}, [](const V& x) { return ag::sigmoid(x[0]); }},
        {"relu", {X}, [](const V& x) { return ag::relu(x[0]); }},
        {"gelu", {X}, [](const V& x) { return ag::gelu(x[0]); }},
        {"silu", {X}, [](const V& x) { return ag::silu(x[0]); }},
        {"where", {X, {160}}, [&](const V& x) { return ag::where(cond, x[0], x[1]); }},
        {"masked_fill", {X}, [&](const V& x) { return ag::masked_fill(x[0], mask, -3.0); }},
        {"sum", {X}, [](const V& x) { return ag::sum(x[0]); }},
        {"sum dim 0", {X}, [](const V& x) { return ag::sum(x[0], {0}); }},
        {"sum dim 1", {X}, [](const V& x) { return ag::sum(x[0], {1}); }},
        {"mean", {X}, [](const V& x) { return ag::mean(x[0]); }},
        {"mean dim 0 keepdim", {X}, [](const V& x) { return ag::mean(x[0], {0}, true); }},
        {"sum_to [160]", {X}, [](const V& x) { return ag::sum_to(x[0], {160}); }},
        {"max dim 1", {X}, [](const V& x) { return ag::max(x[0], 1); }},
        {"argmax dim 0", {X}, [](const V& x) { return ag::argmax(x[0], 0); }},
        {"matmul [256,160] @ [160,96]", {X, {160, 96}}, [](const V& x) { return ag::matmul(x[0], x[1]); }},
        {"matmul [8,64,160] @ [160,64]", {{8, 64, 160}, {160, 64}}, [](const V& x) { return ag::matmul(x[0], x[1]); }},
        {"transpose + contiguous", {X}, [](const V& x) { return x[0].t().contiguous(); }},
        {"permute",
         {{16, 16, 160}},
         [](const V& x) {
             return ag::permute(x[0], {2, 0, 1}) * 2.0;
         }},
        {"narrow", {X}, [](const V& x) { return ag::narrow(x[0], 1, 7, 150) * 2.0; }},
        {"cat",
         {X, X},
         [](const V& x) {
             return ag::cat({x[0], x[1]}, 1);
         }},
        {"stack",
         {X, X},
         [](const V& x) {
             return ag::stack({x[0], x[1]}, 1);
         }},
        {"reshape",
         {X},
         [](const V& x) {
             return ag::reshape(x[0].t(), {-1, 64});
         }},
        {"index_select", {X}, [&](const V& x) { return ag::index_select(x[0], 0, rows_idx); }},
        {"embedding", {{100, 160}}, [&](const V& x) { return ag::embedding(x[0], emb_ids); }},
        {"softmax", {{512, 96}}, [](const V& x) { return ag::softmax(x[0]); }},
        {"log_softmax", {{512, 96}}, [](const V& x) { return ag::log_softmax(x[0]); }},
        {"cross_entropy", {{512, 96}}, [&](const V& x) { return ag::cross_entropy(x[0], targets); }},
        {"mse_loss", {X, X}, [](const V& x) { return ag::mse_loss(x[0], x[1]); }},
        {"binary_cross_entropy_with_logits",
         {X, X},
         [](const V& x) { return ag::binary_cross_entropy_with_logits(x[0], x[1]); }},
        {"layer_norm", {{512, 96}, {96}, {96}}, [](const V& x) { return ag::layer_norm(x[0], x[1], x[2]); }},
        {"rms_norm", {{512, 96}, {96}}, [](const V& x) { return ag::rms_norm(x[0], x[1]); }},
        {"swiglu", {X, X}, [](const V& x) { return ag::swiglu(x[0], x[1]); }},
        // 2331 head vectors of 16: the second thread's rows start inside a time step (t 18, head 4)
        {"rope [9,37,7,16]", {{9, 37, 7, 16}}, [&](const V& x) { return ag::rope(x[0], rope_positions); }},
    };
    for (const auto& op : ops) {
        CAPTURE(op.name);
        check_bitwise_equal(run_op(op, 1), run_op(op, 2));
    }
}

// The pool starts its workers when a region first asks for them. Each task
// here waits (up to 5 s) until every task has started, so they all run at
// once only if every thread, the new workers included, joined this region.
// A worker that starts late and takes this region for one it has already
// seen leaves the caller to run the tasks one after the other (a process
// whose first region was one long parallel_tasks ran on one core).
TEST_CASE("parallel_tasks runs on every thread, also threads started for that region", "[engine][threads]") {
    const int threads = 6;  // more than any other test uses: the pool starts new workers here
    const ag::ThreadCountGuard use(threads);
    std::atomic<int> started{0};
    std::atomic<int> saw_all{0};
    std::mutex ids_mutex;
    std::set<std::thread::id> ids;
    ag::parallel_tasks(threads, [&](int64_t) {
        {
            const std::lock_guard<std::mutex> lock(ids_mutex);
            ids.insert(std::this_thread::get_id());
        }
        started.fetch_add(1);
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (started.load() < threads && std::chrono::steady_clock::now() < until) std::this_thread::yield();
        if (started.load() == threads) saw_all.fetch_add(1);
    });
    INFO("tasks that saw all " << threads << " tasks running at once (each waits for the others)");
    CHECK(saw_all.load() == threads);
    INFO("distinct threads that ran the tasks");
    CHECK(ids.size() == static_cast<size_t>(threads));
}

TEST_CASE("parallel_tasks keeps to max_threads, and with 1 runs every task and its kernels on the caller",
          "[engine][threads]") {
    const ag::ThreadCountGuard use(4);
    const auto caller = std::this_thread::get_id();
    for (const int max_threads : {1, 2}) {
        CAPTURE(max_threads);
        std::mutex ids_mutex;
        std::set<std::thread::id> ids;
        std::atomic<int> inside_region{0};
        ag::parallel_tasks(
            8,
            [&](int64_t) {
                {
                    const std::lock_guard<std::mutex> lock(ids_mutex);
                    ids.insert(std::this_thread::get_id());
                }
                inside_region += ag::detail::in_parallel_region();
                std::this_thread::sleep_for(std::chrono::milliseconds(2));  // time for idle workers to claim tasks
            },
            max_threads);
        INFO("distinct threads that ran the 8 tasks");
        CHECK(ids.size() <= static_cast<size_t>(max_threads));
        if (max_threads == 1) CHECK(*ids.begin() == caller);
        INFO("tasks that saw themselves inside a region (their kernels then stay on their thread)");
        CHECK(inside_region.load() == 8);
    }
    // One task alone: a plain call, whose kernels may split, unless
    // max_threads is 1, which keeps them on the caller as for more tasks.
    for (const int max_threads : {0, 1}) {
        CAPTURE(max_threads);
        bool inside = false;
        ag::parallel_tasks(
            1, [&](int64_t) { inside = ag::detail::in_parallel_region(); }, max_threads);
        INFO("a single task saw itself inside a region (its kernels then stay on the caller)");
        CHECK(inside == (max_threads == 1));
    }
    CHECK_THROWS_WITH(ag::parallel_tasks(
                          2, [](int64_t) {}, -1),
                      "parallel_tasks: max_threads -1 (0: all threads)");
}
