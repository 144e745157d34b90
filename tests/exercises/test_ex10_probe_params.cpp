// Exercise 10 · a linear probe's parameters vs full fine-tuning (§2.8,
// exercise 10): the counts on the lecture's GPT (130 and 111,490) and what
// is frozen afterwards, named parameter by parameter; whatever state body
// and head were left in before (a frozen head, a half-frozen body, one
// set-up after the other, back and forth); other bodies and heads. Diagnoses
// counting tensors instead of numbers, counting frozen parameters, counting
// before switching, eval() in place of freezing, and body and head swapped.
#include "exercises/ex10_probe_params.h"
#include "grading_checks.h"
#include "nn/autoencoder.h"
#include "nn/language_model.h"
#include "reference/ex10_probe_params.h"

namespace ref = ex10_reference;

namespace {

// The first parameter of m whose requires_grad() is not `trainable`, ""
// when there is none.
std::string first_not(const nn::Module& m, bool trainable) {
    for (const auto& [name, p] : m.named_parameters())
        if (p.requires_grad() != trainable) return name;
    return "";
}

// After a set-up: every parameter of `m` (called `what`) is trainable or
// frozen as `trainable` says, else FAIL naming the first one that is not.
void require_state(const nn::Module& m, const char* what, bool trainable, const char* why) {
    const std::string wrong = first_not(m, trainable);
    if (!wrong.empty())
        FAIL(why << ": " << what << "'s parameter '" << wrong << "' is "
                 << (trainable ? "still frozen (requires_grad() false)" : "still trainable (requires_grad() true)"));
}

int64_t tensor_count(const nn::Module& m) { return static_cast<int64_t>(m.parameters().size()); }

int64_t trainable_now(const nn::Module& body, const nn::Module& head) {
    return body.num_trainable_parameters() + head.num_trainable_parameters();
}

// The count a set-up returned against what it trains; names the usual
// wrong counts. `expected` = the numbers of the trainable parameters,
// `before` = those trainable before the call.
void check_count(int64_t got, int64_t expected, int64_t before, const nn::Module& body, const nn::Module& head,
                 bool probe) {
    INFO((probe ? "probe_trainable()" : "finetune_trainable()")
         << " returned " << got << "; the optimiser trains " << expected << " numbers (body " << body.num_parameters()
         << ", head " << head.num_parameters() << ")");
    if (got != expected) {
        if (got == (probe ? tensor_count(head) : tensor_count(body) + tensor_count(head)))
            FAIL("you counted parameter TENSORS; count the numbers in them (numel())");
        const bool all = got == body.num_parameters() + head.num_parameters(), stale = got == before;
        if (stale && (!probe || !all)) FAIL("that is the count from before the call: count after switching the flags");
        if (stale && all)
            FAIL(
                "you counted the frozen parameters too (count only those with requires_grad()), or counted before "
                "switching the flags (count after)");
        if (probe && all) FAIL("you counted the frozen parameters too: count only those with requires_grad()");
        if (probe && got == body.num_parameters())
            FAIL("that is the body's size: the probe trains the head, the body is frozen");
        if (!probe && got == head.num_parameters())
            FAIL("you counted only the head: full fine-tuning trains the body too");
        if (!probe && got == body.num_parameters()) FAIL("you left out the head: it is trained too");
    }
    CHECK(got == expected);
}

// `expected`: what the count must be (-1: the head's size, or body + head's).
void check_probe(nn::Module& body, nn::Module& head, int64_t expected = -1) {
    const int64_t before = trainable_now(body, head);
    const int64_t got = ex10::probe_trainable(body, head);
    if (!first_not(body, false).empty() && !body.is_training())
        FAIL(
            "the body is in eval mode but its parameters still require grad: eval() only switches the mode "
            "(dropout and the like), the optimiser would still train the body; freeze with requires_grad_(false)");
    require_state(body, "the body", false, "after probe_trainable() the body must be frozen");
    require_state(head, "the head", true, "after probe_trainable() the head must be trainable");
    check_count(got, expected >= 0 ? expected : head.num_parameters(), before, body, head, true);
}

void check_finetune(nn::Module& body, nn::Module& head, int64_t expected = -1) {
    const int64_t before = trainable_now(body, head);
    const int64_t got = ex10::finetune_trainable(body, head);
    require_state(body, "the body", true,
                  "after finetune_trainable() the whole body must be trainable (it undoes any freezing)");
    require_state(head, "the head", true, "after finetune_trainable() the head must be trainable");
    check_count(got, expected >= 0 ? expected : body.num_parameters() + head.num_parameters(), before, body, head,
                false);
}

}  // namespace

TEST_CASE("ex10 the lecture's GPT with a Linear(64, 2) head: 130 and 111,490") {
    nn::LanguageModel body(nn::LMConfig::gpt(), 0);
    ag::Generator gen(1);
    nn::ClassifierHead head(64, 2, gen);
    {
        INFO("§2.8: a linear probe freezes the body and trains the head's 64·2 weights and 2 biases: 130 numbers");
        check_probe(body, head, 130);
    }
    INFO("full fine-tuning trains the GPT's 111,360 parameters and the head's 130: 111,490 (after the probe)");
    check_finetune(body, head, 111490);
}

// The set-ups may not assume the state they find: a head someone froze, a
// body partly frozen (say the embeddings, from an earlier experiment), and
// one set-up after the other in either order.
TEST_CASE("ex10 each set-up holds whatever state body and head were in before") {
    nn::LanguageModel body(nn::LMConfig::gpt(), 0);
    ag::Generator gen(2);
    nn::ClassifierHead head(64, 2, gen);
    SECTION("a frozen head: the probe unfreezes it") {
        head.requires_grad_(false);
        check_probe(body, head);
    }
    SECTION("a frozen head and body: fine-tuning unfreezes both") {
        head.requires_grad_(false);
        body.requires_grad_(false);
        check_finetune(body, head);
    }
    SECTION("a half-frozen body (the embeddings frozen): probe and fine-tuning") {
        for (auto& [name, p] : body.named_parameters())
            if (name.find("emb") != std::string::npos) p.requires_grad_(false);
        check_finetune(body, head);
        for (auto& [name, p] : body.named_parameters())
            if (name.find("layers.1") != std::string::npos) p.requires_grad_(false);
        check_probe(body, head);
    }
    SECTION("probe, fine-tune, probe, fine-tune") {
        for (int round = 0; round < 2; ++round) {
            INFO("round " << round + 1 << " of probe_trainable() then finetune_trainable() on the same modules");
            check_probe(body, head);
            check_finetune(body, head);
        }
    }
}

TEST_CASE("ex10 other bodies and heads: ModernLM, more classes, a wider head") {
    for (const int64_t classes : {2, 3, 10}) {
        nn::LMConfig cfg = nn::LMConfig::modern_lm();
        nn::LanguageModel body(cfg, 2), body_ref(cfg, 2);
        ag::Generator gen(3);
        nn::ClassifierHead head(64, classes, gen), head_ref(64, classes, gen);
        INFO("ModernLM body, a Linear(64, " << classes << ") head");
        check_probe(body, head);
        CHECK(ex10::probe_trainable(body, head) == ref::probe_trainable(body_ref, head_ref));
        check_finetune(body, head);
        CHECK(ex10::finetune_trainable(body, head) == ref::finetune_trainable(body_ref, head_ref));
    }
    // A head on something that is not a language model: any Module works.
    ag::Generator gen(4);
    nn::ClassifierHead body(32, 64, gen), head(64, 5, gen);
    INFO("a Linear(32, 64) 'body' under a Linear(64, 5) head");
    check_probe(body, head);
    check_finetune(body, head);
}
