// Exercise 10 · a linear probe's parameters vs full fine-tuning (§2.8): the
// counts on the lecture's GPT and what is frozen afterwards.
#include "exercises/ex10_probe_params.h"
#include "grading_checks.h"
#include "nn/autoencoder.h"
#include "nn/language_model.h"
#include "reference/ex10_probe_params.h"

namespace ref = ex10_reference;

namespace {

bool all_frozen(const nn::Module& m, bool frozen) {
    for (const nn::Tensor& p : m.parameters())
        if (p.requires_grad() == frozen) return false;
    return true;
}

}  // namespace

TEST_CASE("ex10 the lecture's GPT with a Linear(64, 2) head") {
    nn::LanguageModel body(nn::LMConfig::gpt(), 0);
    ag::Generator gen(1);
    nn::ClassifierHead head(64, 2, gen);
    UNSCOPED_INFO("the probe trains the head's 64·2 weights and 2 biases");
    CHECK(ex10::probe_trainable(body, head) == 130);
    UNSCOPED_INFO("after probe_trainable() the body must be frozen and the head trainable");
    CHECK(all_frozen(body, true));
    CHECK(all_frozen(head, false));
    UNSCOPED_INFO("full fine-tuning trains the GPT's 111,360 parameters and the head's 130");
    CHECK(ex10::finetune_trainable(body, head) == 111490);
    UNSCOPED_INFO("after finetune_trainable() nothing may stay frozen (it must undo the probe)");
    CHECK(all_frozen(body, false));
    CHECK(all_frozen(head, false));
}

TEST_CASE("ex10 equals the reference on other bodies and heads") {
    for (int64_t classes : {2, 3, 10}) {
        nn::LMConfig cfg = nn::LMConfig::modern_lm();
        nn::LanguageModel body(cfg, 2), body_ref(cfg, 2);
        ag::Generator gen(3);
        nn::ClassifierHead head(64, classes, gen), head_ref(64, classes, gen);
        INFO("ModernLM body, " << classes << " classes");
        CHECK(ex10::probe_trainable(body, head) == ref::probe_trainable(body_ref, head_ref));
        CHECK(ex10::finetune_trainable(body, head) == ref::finetune_trainable(body_ref, head_ref));
    }
}
