// Exercise 3 · the KV cache's size (§5.3, §6.4): Mistral's and Llama-3's
// figures, and the reference on random sizes.
#include "exercises/ex03_kv_cache.h"
#include "grading_checks.h"
#include "reference/ex03_kv_cache.h"

namespace ref = ex03_reference;

constexpr int64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

TEST_CASE("ex03 Mistral 7B: 128 KiB per token, 512 MiB rolling, 4 GiB for 32K tokens") {
    const int64_t per_token = ex03::kv_bytes_per_token(32, 8, 128, 2);
    UNSCOPED_INFO("2 (K and V) × 32 layers × 8 KV heads × 128 dims × 2 bytes = 131,072 bytes");
    CHECK(per_token == 128 * KiB);
    UNSCOPED_INFO("a rolling buffer keeps at most the window's 4096 positions");
    CHECK(ex03::kv_cache_bytes(1, 32768, 128 * KiB, 4096) == 512 * MiB);
    CHECK(ex03::kv_cache_bytes(1, 1000000, 128 * KiB, 4096) == 512 * MiB);
    CHECK(ex03::kv_cache_bytes(1, 100, 128 * KiB, 4096) == 100 * 128 * KiB);
    UNSCOPED_INFO("without it every one of the 32,768 tokens stays");
    CHECK(ex03::kv_cache_bytes(1, 32768, 128 * KiB, 0) == 4 * GiB);
}

TEST_CASE("ex03 Llama-3 8B at batch 32 x 8192: MHA 128 GiB, GQA 32 GiB, MQA 4 GiB") {
    const int64_t heads[] = {32, 8, 1}, expected[] = {128 * GiB, 32 * GiB, 4 * GiB};
    for (int i = 0; i < 3; ++i) {
        INFO(heads[i] << " KV heads");
        CHECK(ex03::kv_cache_bytes(32, 8192, ex03::kv_bytes_per_token(32, heads[i], 128, 2), 0) == expected[i]);
    }
}

TEST_CASE("ex03 both functions equal the reference") {
    grading::Random rng(4);
    for (int n = 0; n < 300; ++n) {
        const int64_t layers = rng.integer(1, 80), kv = rng.integer(1, 64), dh = rng.integer(1, 256),
                      bytes = rng.integer(1, 8);
        INFO("layers " << layers << ", KV heads " << kv << ", head dim " << dh << ", bytes " << bytes);
        const int64_t per = ref::kv_bytes_per_token(layers, kv, dh, bytes);
        if (ex03::kv_bytes_per_token(layers, kv, dh, bytes) * 2 == per) FAIL("count both K and V: a factor 2");
        CHECK(ex03::kv_bytes_per_token(layers, kv, dh, bytes) == per);
        const int64_t batch = rng.integer(1, 64), tokens = rng.integer(1, 100000),
                      window = n % 3 == 0 ? 0 : rng.integer(1, 8192);
        INFO("batch " << batch << ", tokens " << tokens << ", window " << window);
        CHECK(ex03::kv_cache_bytes(batch, tokens, per, window) == ref::kv_cache_bytes(batch, tokens, per, window));
    }
}
