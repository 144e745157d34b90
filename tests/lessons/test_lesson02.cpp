// Lesson 02, RoPE (§4): every part runs in --quick mode and the identities
// the lecture checks hold to floating-point precision.
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>
#include "catch.h"

#include "lesson_helpers.h"
#include "lessons/rope/pairing_swap.h"
#include "lessons/rope/parts.h"
#include "lessons/rope/rotate_values.h"
#include "lessons/rope/rotation.h"

using lessons::Options;

TEST_CASE("lesson 02 runs every part and each has its takeaway", "[lessons][lesson02]") {
    const test::LessonRun run(lessons::rope::lesson(), test::quick_options(test::scratch_path("l02_all")));
    REQUIRE(run.report.parts().size() == 7);
    const char* sections[] = {"§4.2", "§4.4", "§4.3", "§4.5", "§4.7", "§9.4", "§9.2"};
    for (int n = 1; n <= 7; ++n) {
        INFO("part " << n);
        CHECK(run.report.part(n).section == sections[n - 1]);
        CHECK_FALSE(run.report.part(n).takeaway.empty());
        CHECK_FALSE(run.report.part(n).sources.empty());
        for (const lessons::Claim& claim : run.report.part(n).claims) {
            INFO("claim " << claim.key << " has no verdict, the sentence a student reads beside its outcome");
            CHECK_FALSE(claim.verdict.empty());
        }
    }
    CHECK_THAT(run.output(), Catch::Contains("Takeaway:"));
}

TEST_CASE("lesson 02: every part records claims with a statement, and its figures exist", "[lessons][lesson02]") {
    const auto out = test::scratch_path("l02_claims");
    const test::LessonRun run(lessons::rope::lesson(), test::quick_options(out));
    CHECK(test::check_claims_and_figures(run, out) == std::vector<std::string>{"02_similarity.svg"});
    // identities and exact figures: they hold at any size
    for (const auto& part : run.report.parts())
        for (const auto& claim : part.claims) {
            INFO("part " << part.number << ", claim " << claim.key);
            CHECK(claim.reproduced);
        }
}

TEST_CASE("lesson 02 part 1: R_{Θ,5} is printed and every form of RoPE is one rotation", "[lessons][lesson02]") {
    Options options = test::quick_options(test::scratch_path("l02_p1"));
    options.part = 1;
    const test::LessonRun run(lessons::rope::lesson(), options);
    const auto& part = run.report.part(1);

    // the lecture's indexing, i = 1 … d/2: θ_1 = 1, θ_{d/2} = 10000^(-(d-2)/d)
    const std::vector<double> theta = lessons::rope::frequencies(64);
    REQUIRE(theta.size() == 32);
    INFO("θ_1 (theta[0]) must be 1 and θ_32 (theta[31]) 10000^(-62/64): θ_i = 10000^(-2(i-1)/d)");
    CHECK(theta.front() == 1.0);
    CHECK(theta.back() == Approx(std::pow(10000.0, -62.0 / 64.0)).epsilon(1e-15));

    // block 1 turns by 5 θ_1 = 5 rad, block 2 by 5 θ_2, θ_2 = 10000^(-2/64)
    const auto& R = part.table("R5_top_left");
    REQUIRE(R.rows.size() == 6);
    REQUIRE(R.columns.size() == 7);
    const double theta2 = std::pow(10000.0, -2.0 / 64.0);
    CHECK(R.at(0, "1").number() == Approx(std::cos(5.0)).margin(1e-15));
    CHECK(R.at(0, "2").number() == Approx(-std::sin(5.0)).margin(1e-15));
    CHECK(R.at(1, "1").number() == Approx(std::sin(5.0)).margin(1e-15));
    CHECK(R.at(1, "2").number() == Approx(std::cos(5.0)).margin(1e-15));
    CHECK(R.at(2, "3").number() == Approx(std::cos(5.0 * theta2)).margin(1e-15));
    CHECK(R.at(2, "4").number() == Approx(-std::sin(5.0 * theta2)).margin(1e-15));
    for (size_t row = 0; row < 6; ++row)
        for (int col = 1; col <= 6; ++col)
            if (static_cast<int>(row) / 2 != (col - 1) / 2) {
                INFO("R[" << row + 1 << "][" << col << "] lies outside the 2×2 blocks");
                CHECK(R.at(row, std::to_string(col)).number() == 0.0);
            }

    CHECK(part.value("elementwise_minus_full").number() < 1e-12);
    CHECK(part.value("engine_interleaved_minus_full").number() < 1e-12);
    CHECK(part.value("matrix_form_minus_full").number() < 1e-12);
    CHECK(part.value("engine_half_minus_full").number() < 1e-12);
    CHECK(part.claim("forms_agree").reproduced);
    CHECK(part.claim("forms_agree").ours.number() < 1e-12);
    // without the permutation the two pairings disagree
    CHECK(part.value("unpermuted_matrix_form_minus_full").number() > 0.1);
    CHECK(part.claim("pairings_differ_unpermuted").reproduced);
    CHECK(part.claim("pairings_differ_unpermuted").ours.number() ==
          part.value("unpermuted_matrix_form_minus_full").number());
}

TEST_CASE("lesson 02 parts 2 and 3: scores depend on t - j only, the wrong version on nothing", "[lessons][lesson02]") {
    const int seeds = 2;
    const test::LessonRun run(lessons::rope::lesson(), test::quick_options(test::scratch_path("l02_p23"), 0, seeds));
    const auto& relative = run.report.part(2);
    const auto& scores = relative.table("scores");
    REQUIRE(scores.rows.size() == 3 * seeds);
    for (size_t row = 0; row < scores.rows.size(); ++row) {
        INFO("row " << row);
        CHECK(scores.at(row, "t − j").number() == 3);
        CHECK(scores.at(row, "$(R_j k)^\\top (R_t q)$").number() ==
              Approx(scores.at(row - row % 3, "$(R_j k)^\\top (R_t q)$").number()).margin(1e-12));
        CHECK(std::fabs(scores.at(row, "difference").number()) < 1e-12);
    }
    // two seeds, two different q, k: different scores
    CHECK(std::fabs(scores.at(0, "$(R_j k)^\\top (R_t q)$").number() -
                    scores.at(3, "$(R_j k)^\\top (R_t q)$").number()) > 1e-6);
    CHECK(relative.value("score_spread").number() < 1e-12);
    CHECK(relative.value("identity_error").number() < 1e-12);
    CHECK(relative.table("identity").rows.size() == 3);
    CHECK(relative.claim("scores_equal").reproduced);
    CHECK(relative.claim("scores_equal").ours.number() == relative.value("score_spread").number());
    CHECK(relative.claim("identity_holds").reproduced);
    CHECK(relative.claim("identity_holds").lecture.number() == 9.5e-15);

    const auto& wrong = run.report.part(3);
    CHECK(wrong.value("wrong_minus_no_rotation").number() < 1e-12);
    CHECK(wrong.value("wrong_score_range").number() < 1e-12);
    CHECK(wrong.value("rope_score_range").number() > 0.1);  // RoPE does see the distance
    CHECK(wrong.claim("wrong_equals_no_rotation").reproduced);
    CHECK(wrong.claim("wrong_equals_no_rotation").ours.number() < 1e-12);
    const auto& table = wrong.table("wrong_version");
    for (size_t row = 0; row < table.rows.size(); ++row)
        CHECK(table.at(row, "wrong: both $R_{t-j}$").number() ==
              Approx(table.at(row, "$k^\\top q$ (no rotation)").number()).margin(1e-12));
}

TEST_CASE("lesson 02 part 4: norms kept, one frequency aliases at 44, the figure is written", "[lessons][lesson02]") {
    const auto out = test::scratch_path("l02_p4");
    Options options = test::quick_options(out);
    options.part = 4;
    const test::LessonRun run(lessons::rope::lesson(), options);
    const auto& part = run.report.part(4);
    CHECK(part.value("norm_change").number() < 1e-13);
    CHECK(part.value("one_frequency_alias_distance").number() == 44);
    // one frequency: similarity cos(Δ); RoPE: clearly lower at the same Δ
    CHECK(part.value("one_frequency_similarity_at_alias").number() == Approx(std::cos(44.0)).margin(1e-12));
    CHECK(part.value("rope_similarity_at_alias").number() < 0.9);
    CHECK(part.claim("norms_kept").reproduced);
    CHECK(part.claim("norms_kept").lecture.number() == 1.8e-15);
    CHECK(part.claim("one_frequency_aliases").reproduced);
    CHECK(part.claim("one_frequency_aliases").ours.number() == 44);
    CHECK(part.claim("rope_mean_similarity_decays").reproduced);
    CHECK(part.claim("fastest_period").ours.number() == Approx(2 * M_PI));
    CHECK(part.claim("slowest_period").ours.number() == Approx(2 * M_PI * std::pow(10000.0, 62.0 / 64.0)));

    const auto& similarity = part.table("similarity");
    CHECK(similarity.at(0, "Δ").number() == 0);
    CHECK(similarity.at(0, "one frequency $\\theta = 1$").number() == Approx(1.0).margin(1e-15));
    CHECK(similarity.at(0, "RoPE $\\theta_i = 10000^{-2(i-1)/d}$").number() == Approx(1.0).margin(1e-15));
    CHECK(similarity.at(1, "one frequency $\\theta = 1$").number() == Approx(std::cos(1.0)).margin(1e-12));
    CHECK(part.table("decay").rows.size() == 3);  // quick: Δ up to 999

    const std::string svg = test::read_text(out / "02_similarity.svg");
    CHECK_THAT(svg, Catch::Contains("<svg"));
    CHECK_THAT(svg, Catch::Contains("one frequency"));
    REQUIRE(part.figures.size() == 1);
    CHECK(part.figures[0].file == "02_similarity.svg");
}

TEST_CASE("lesson 02 part 5: cached decoding equals the full forward pass", "[lessons][lesson02]") {
    Options options = test::quick_options(test::scratch_path("l02_p5"), 0, 2);
    options.part = 5;
    const test::LessonRun run(lessons::rope::lesson(), options);
    const auto& part = run.report.part(5);
    CHECK(part.value("max_cached_minus_full").number() < 1e-12);
    CHECK(part.claim("cached_equals_full").reproduced);
    CHECK(part.claim("cached_equals_full").lecture.number() == 1.7e-16);
    CHECK(part.claim("cached_equals_full").ours.number() == part.value("max_cached_minus_full").number());
    const auto& table = part.table("decoding");
    REQUIRE(table.rows.size() >= 4);
    for (size_t row = 0; row < table.rows.size(); ++row) {
        // a plain cache holds every position read so far
        CHECK(table.at(row, "cached keys").number() == table.at(row, "position").number() + 1);
        CHECK(table.at(row, "largest |cached − full| logit").number() < 1e-12);
    }
    CHECK(table.at(0, "token").str() == "<s>");
}

TEST_CASE("lesson 02 part 6: W_q and W_k permuted per head make the other pairing the same model",
          "[lessons][lesson02]") {
    // an untrained ModernLM (random weights, so every dimension matters): the
    // same logits through the other pairing after the permutation, others without
    for (const ag::RopePairing pairing : {ag::RopePairing::Half, ag::RopePairing::Interleaved}) {
        nn::LMConfig config = nn::LMConfig::modern_lm();
        config.rope_pairing = pairing;
        const nn::LanguageModel model(config, 3);
        const ag::RopePairing other =
            pairing == ag::RopePairing::Half ? ag::RopePairing::Interleaved : ag::RopePairing::Half;
        ag::Generator gen(4);
        std::vector<double> ids;
        for (int i = 0; i < 2 * 12; ++i) ids.push_back(static_cast<double>(gen.randint(68)));
        const ag::Tensor x = ag::Tensor::from({2, 12}, ids);
        const ag::Tensor logits = model.forward(x);
        const auto permuted = lessons::rope::with_pairing(model, other, true);
        const auto as_is = lessons::rope::with_pairing(model, other, false);
        INFO("trained pairing " << nn::to_string(pairing));
        CHECK(permuted->config().rope_pairing == other);
        CHECK(ag::max_abs_diff(permuted->forward(x), logits) < 1e-12);
        CHECK(ag::max_abs_diff(as_is->forward(x), logits) > 1e-3);
        // only W_q and W_k moved; W_v, W_o and the rest are the same numbers
        const auto a = model.named_parameters(), b = permuted->named_parameters();
        for (size_t i = 0; i < a.size(); ++i) {
            const bool q_or_k =
                a[i].first.find(".wq.") != std::string::npos || a[i].first.find(".wk.") != std::string::npos;
            INFO(a[i].first);
            CHECK((ag::max_abs_diff(a[i].second, b[i].second) == 0.0) == !q_or_k);
        }
    }
    // the part: both models, three perplexities each, the permuted one equal to the right one
    Options options = test::quick_options(test::scratch_path("l02_p6"));
    options.part = 6;
    const test::LessonRun run(lessons::rope::lesson(), options);
    const auto& part = run.report.part(6);
    const auto& table = part.table("pairing_swap");
    REQUIRE(table.rows.size() == 2);
    for (size_t row = 0; row < 2; ++row) {
        const double right = table.at(row, "test perplexity, its own pairing").number();
        CHECK(std::isfinite(right));
        CHECK(right > 1.0);
        CHECK(table.at(row, "the other, $W_q$ and $W_k$ rows permuted").number() == Approx(right).epsilon(1e-9));
        CHECK(table.at(row, "the other pairing").number() != right);
    }
    CHECK(part.claim("pairings_equivalent_after_permutation").reproduced);
    CHECK(part.value("ppl_half_right").number() == table.at(0, "test perplexity, its own pairing").number());
}

TEST_CASE("lesson 02 part 7: RoPE turns q and k; turning v too makes the output depend on absolute positions",
          "[lessons][lesson02]") {
    // an untrained ModernLM: by hand it is the model; shifting every position
    // changes nothing with q and k turned, and the output with v turned too
    const nn::LanguageModel model(nn::LMConfig::modern_lm(), 3);
    ag::Generator gen(4);
    std::vector<double> ids;
    for (int i = 0; i < 12; ++i) ids.push_back(static_cast<double>(gen.randint(68)));
    const ag::Tensor x = ag::Tensor::from({12}, ids);
    const nn::Packing packing = nn::Packing::from_starts({0, 5, 12});
    const ag::Tensor own = model.forward(x, packing);
    using lessons::rope::logits_by_hand;
    INFO("q and k turned, at the sentence's own positions: must be the model's forward pass");
    CHECK(ag::max_abs_diff(logits_by_hand(model, x, packing, 0, false), own) < 1e-12);
    INFO("q and k turned, every position shifted by 100: scores depend on t - j only, so the logits must not change");
    CHECK(ag::max_abs_diff(logits_by_hand(model, x, packing, 100, false), own) < 1e-12);
    INFO("v turned too, shifted by 100: R_j v_j carries the absolute position j, so the logits must change");
    CHECK(ag::max_abs_diff(logits_by_hand(model, x, packing, 100, true), logits_by_hand(model, x, packing, 0, true)) >
          1e-3);

    Options options = test::quick_options(test::scratch_path("l02_p7"));
    options.part = 7;
    const test::LessonRun run(lessons::rope::lesson(), options);
    const auto& part = run.report.part(7);
    CHECK(part.claim("rope_adds_nothing_to_the_input").reproduced);
    CHECK(part.claim("only_relative_positions_count").reproduced);
    INFO("turning v must make the trained checkpoint worse");
    CHECK(part.claim("rotating_values_breaks_the_model").reproduced);
    CHECK(part.value("ppl_rotated_values").number() >
          part.table("shifted").at(0, "q, k turned: test perplexity").number());
}

TEST_CASE("02_rope --quick --json writes the report", "[lessons][lesson02][json]") {
    const auto out = test::scratch_path("l02_json");
    const auto path = test::scratch_path("lesson02.json");
    REQUIRE(test::run_program(lessons::rope::lesson(), {"--quick", "--out", out.string(), "--json", path.string()}) ==
            0);
    const auto json = nlohmann::json::parse(test::read_text(path));
    CHECK(json.at("lesson") == "02_rope");
    const auto& parts = json.at("parts");
    CHECK(parts.at("4").at("values").at("one_frequency_alias_distance") == 44);
    const std::pair<const char*, const char*> claims[] = {{"1", "forms_agree"},
                                                          {"2", "scores_equal"},
                                                          {"3", "wrong_equals_no_rotation"},
                                                          {"4", "one_frequency_aliases"},
                                                          {"5", "cached_equals_full"}};
    for (const auto& [part, key] : claims) {
        INFO("part " << part << ", claim " << key);
        CHECK(parts.at(part).at("claims").at(key).at("reproduced") == true);
        CHECK_FALSE(parts.at(part).at("values").contains(key));  // a claim, no longer a yes/no value
    }
}
