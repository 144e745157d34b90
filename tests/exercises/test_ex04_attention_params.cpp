// Exercise 4 · GQA's parameters (§5.2): the lecture's counts, the reference,
// and real attention modules.
#include "exercises/ex04_attention_params.h"
#include "grading_checks.h"
#include "nn/attention.h"
#include "reference/ex04_attention_params.h"

namespace ref = ex04_reference;

TEST_CASE("ex04 the lecture's counts") {
    UNSCOPED_INFO("MHA at d = 4096: four 4096 × 4096 matrices");
    CHECK(ex04::attention_params(4096, 32, 32, 128) == 67108864);
    UNSCOPED_INFO("GQA with 8 KV heads: W_k and W_v are 4096 × 1024");
    CHECK(ex04::attention_params(4096, 32, 8, 128) == 41943040);
    UNSCOPED_INFO("d = 32, 8 heads of 4: MHA 4096, MQA 2304");
    CHECK(ex04::attention_params(32, 8, 8, 4) == 4096);
    CHECK(ex04::attention_params(32, 8, 1, 4) == 2304);
}

TEST_CASE("ex04 equals the reference and a real attention module") {
    grading::Random rng(5);
    for (int n = 0; n < 200; ++n) {
        const int64_t heads = rng.integer(1, 16), kv = heads / rng.integer(1, heads), dh = rng.integer(1, 64),
                      d = rng.integer(1, 512);
        INFO("d " << d << ", " << heads << " query heads, " << kv << " KV heads of " << dh);
        const int64_t want = ref::attention_params(d, heads, kv, dh), got = ex04::attention_params(d, heads, kv, dh);
        if (got == ref::attention_params(d, heads, heads, dh) && kv != heads)
            FAIL("W_k and W_v have n_kv_heads heads, not n_heads");
        CHECK(got == want);
    }
    for (int64_t kv : {1, 2, 4, 8}) {
        nn::LMConfig cfg = nn::LMConfig::modern_lm();
        cfg.d_model = 32;
        cfg.n_heads = 8;
        cfg.n_kv_heads = kv;
        ag::Generator gen(0);
        const nn::Attention attention(cfg, gen);
        INFO("nn::Attention with 8 query heads and " << kv << " KV heads at d = 32");
        CHECK(ex04::attention_params(32, 8, kv, 4) == attention.num_parameters());
    }
}
