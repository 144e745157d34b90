// Lesson 00, autograd recap (§1): every part runs, the gradients agree as
// the lecture says they must, and the graph is printed in topological order.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "catch.h"

#include "lesson_helpers.h"
#include "lessons/autograd_recap/parts.h"

using lessons::Options;

namespace {

Options quick(int seeds = 1) {
    Options options;
    options.quick = true;
    options.seeds = seeds;
    return options;
}

std::vector<std::string> split(const std::string& text, char sep) {
    std::vector<std::string> items;
    std::stringstream stream(text);
    for (std::string item; std::getline(stream, item, sep);) items.push_back(item.substr(item.find_first_not_of(' ')));
    return items;
}

}  // namespace

TEST_CASE("lesson 00 runs every part and each has its takeaway", "[lessons][lesson00]") {
    const test::LessonRun run(lessons::autograd_recap::lesson(), quick());
    REQUIRE(run.report.parts().size() == 3);
    for (int n = 1; n <= 3; ++n) {
        INFO("part " << n);
        CHECK(run.report.part(n).section == "§1");
        CHECK_FALSE(run.report.part(n).takeaway.empty());
    }
    CHECK_THAT(run.output(), Catch::Contains("Takeaway:"));
}

TEST_CASE("lesson 00 part 3: engine = hand derivation = finite differences", "[lessons][lesson00]") {
    const int seeds = 2;
    const test::LessonRun run(lessons::autograd_recap::lesson(), quick(seeds));
    const auto& part = run.report.part(3);
    CHECK(part.value("max_engine_minus_finite_diff").number() < 1e-8);
    CHECK(part.value("max_engine_minus_hand").number() < 1e-12);
    CHECK(part.claim("gradcheck").reproduced);
    CHECK(part.claim("gradcheck").ours.number() == part.value("gradcheck_max_abs_error").number());
    CHECK(part.value("gradcheck_max_abs_error").number() < 1e-8);
    CHECK(part.claim("engine_matches_hand_derivation").reproduced);
    CHECK(part.claim("engine_matches_hand_derivation").ours.number() == part.value("max_engine_minus_hand").number());

    // one row per parameter and seed, each within the same bounds
    const auto& table = part.table("gradients");
    REQUIRE(table.rows.size() == 4 * seeds);
    std::set<std::string> names;
    for (size_t row = 0; row < table.rows.size(); ++row) {
        INFO("seed " << table.at(row, "seed").str() << ", " << table.at(row, "parameter").str());
        names.insert(table.at(row, "parameter").str());
        CHECK(table.at(row, "max |grad|").number() > 0.0);
        CHECK(table.at(row, "engine - finite diff.").number() < 1e-8);
        CHECK(table.at(row, "engine - by hand").number() < 1e-12);
    }
    CHECK(names == std::set<std::string>{"W1", "b1", "W2", "b2"});
    CHECK(table.at(4, "seed").number() == 1);

    // the step size: truncation at h = 0.1 and rounding at h = 1e-9 both
    // lose to a middle step
    const auto& steps = part.table("step_size");
    REQUIRE(steps.rows.size() == 9);
    const auto error = [&](size_t row) { return steps.at(row, "max |engine - finite diff.|").number(); };
    CHECK(error(0) > 100 * error(4));
    CHECK(error(8) > 100 * error(4));
}

TEST_CASE("lesson 00 part 2: each node is printed after the nodes it reads", "[lessons][lesson00]") {
    const test::LessonRun run(lessons::autograd_recap::lesson(), quick());
    const auto& part = run.report.part(2);
    const auto& graph = part.table("graph");
    REQUIRE(graph.rows.size() >= 6);  // at least matmul, add, tanh, matmul, add, cross_entropy
    CHECK(part.value("nodes").number() == static_cast<double>(graph.rows.size()));

    std::set<std::string> leaves_read;
    for (size_t row = 0; row < graph.rows.size(); ++row) {
        const int number = static_cast<int>(row) + 1;
        CHECK(graph.at(row, "#").number() == number);
        for (const auto& input : split(graph.at(row, "reads").str(), ',')) {
            INFO("node #" << number << " (" << graph.at(row, "op").str() << ") reads " << input);
            if (input[0] == '#')
                CHECK(std::stoi(input.substr(1)) < number);
            else
                leaves_read.insert(input);
        }
    }
    for (const char* leaf : {"x", "W1", "b1", "W2", "b2"}) {
        INFO("leaf " << leaf);
        CHECK(leaves_read.count(leaf) == 1);
    }
    CHECK(graph.at(graph.rows.size() - 1, "output").str() == "[]");  // the loss is a scalar

    // the graph computes the loss the modules of part 1 compute
    CHECK(std::fabs(part.value("loss_minus_part1_loss").number()) < 1e-14);
    CHECK(part.claim("graph_computes_the_modules_loss").reproduced);
    CHECK(part.value("loss").number() == Approx(run.report.part(1).value("loss").number()));
}

TEST_CASE("lesson 00 part 1: the modules' passes go forward then backward", "[lessons][lesson00]") {
    const test::LessonRun run(lessons::autograd_recap::lesson(), quick());
    const auto& passes = run.report.part(1).table("passes");
    REQUIRE(passes.rows.size() == 8);
    CHECK(passes.at(0, "reads").str() == "x [4,3]");
    CHECK(passes.at(3, "returns").str() == "L []");
    CHECK(passes.at(7, "returns").str() == "dL/dx [4,3]");  // backward ends where forward began
    const auto& reversed = run.report.part(1).claim("backward_reverses_forward");
    CHECK(reversed.reproduced);
    CHECK_THAT(reversed.ours.str(), Catch::StartsWith("softmax cross-entropy → fc2"));
    const double loss = run.report.part(1).value("loss").number();
    CHECK(loss > 0.0);
    CHECK(std::isfinite(loss));
}

TEST_CASE("lesson 00: every part states its claims, and its figures exist", "[lessons][lesson00]") {
    const auto out = test::scratch_path("lesson00_claims");
    lessons::Options options = quick();
    options.out = out.string();
    const test::LessonRun run(lessons::autograd_recap::lesson(), options);
    const auto figures = test::check_claims_and_figures(run, out);
    test::check_prose(run);
    // the graph's picture when Graphviz is installed (CI installs it)
    if (std::system("dot -V > /dev/null 2>&1") == 0) CHECK(figures == std::vector<std::string>{"00_graph.svg"});
    std::filesystem::remove_all(out);
}

TEST_CASE("00_autograd_recap --quick --json writes the report", "[lessons][lesson00][json]") {
    const auto path = test::scratch_path("lesson00.json");
    REQUIRE(test::run_program(lessons::autograd_recap::lesson(), {"--quick", "--json", path.string()}) == 0);
    const std::string text = test::read_text(path);
    REQUIRE_FALSE(text.empty());
    CHECK(text.front() == '{');
    for (const char* key :
         {"\"lesson\":\"00_autograd_recap\"", "\"parts\":{\"1\"", "\"2\":{", "\"3\":{",
          "\"max_engine_minus_finite_diff\":", "\"claims\":{\"gradcheck\":", "\"graph\":{\"columns\""})
        CHECK_THAT(text, Catch::Contains(key));
}
