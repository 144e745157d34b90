// Exercise 3 · the KV cache's size (§5.3, §6.4): Mistral's and Llama-3's
// figures, small windows and batches counted by hand, and the reference on
// random sizes. Diagnoses the usual wrong turns: K without V, one layer's
// cache, numbers instead of bytes, KiB instead of bytes, 2 bytes per value
// whatever bytes_per_value says, 32-bit overflow; K and V counted twice, a
// window of W keeping W - 1 or W + 1 or tokens mod W positions,
// a short sequence padded to the window, window = 0 read as "keep nothing",
// the window ignored, one buffer shared by the whole batch, the batch
// forgotten.
#include <functional>
#include <string>
#include <vector>

#include "exercises/ex03_kv_cache.h"
#include "grading_checks.h"
#include "reference/ex03_kv_cache.h"

namespace ref = ex03_reference;

namespace {

constexpr int64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

// A size computed in 32-bit int wraps around past 2^31: what that gives.
bool overflowed_32_bits(int64_t got, int64_t want) {
    return want > INT32_MAX && got == static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(want)));
}

// kv_bytes_per_token(L, H_kv, d_h, bytes) = 2 · L · H_kv · d_h · bytes (K
// and V, every layer, every KV head), with the diagnoses of the usual slips.
void check_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes) {
    const int64_t got = ex03::kv_bytes_per_token(layers, kv_heads, head_dim, bytes),
                  want = ref::kv_bytes_per_token(layers, kv_heads, head_dim, bytes);
    INFO("kv_bytes_per_token(layers " << layers << ", KV heads " << kv_heads << ", head dim " << head_dim
                                      << ", bytes per value " << bytes << "): expected 2 · " << layers << " · "
                                      << kv_heads << " · " << head_dim << " · " << bytes << " = " << want << ", got "
                                      << got);
    if (got == want) return;
    if (got * KiB == want) FAIL("that is the size in KiB: return it in bytes");
    if (bytes != 2 && got * bytes == want * 2)
        FAIL("that is the size with 2 bytes per value (BF16): use bytes_per_value = " << bytes);
    if (2 * got == want) FAIL("count both K and V: every token leaves a key AND a value vector, a factor 2");
    if (layers > 1 && got * layers == want)
        FAIL("that is one layer's share: every layer keeps its own K and V of the token, times " << layers);
    if (bytes > 1 && got * bytes == want)
        FAIL("that is the number of values: times " << bytes << " bytes per value for bytes");
    FAIL("one token leaves 2 (K and V) × layers × KV heads × head dim values of bytes_per_value bytes each");
}

// kv_cache_bytes(batch, tokens, per_token, window) = batch · kept · per_token
// with kept = min(tokens, window), or tokens when window = 0.
void check_cache(int64_t batch, int64_t tokens, int64_t per_token, int64_t window) {
    const int64_t got = ex03::kv_cache_bytes(batch, tokens, per_token, window),
                  want = ref::kv_cache_bytes(batch, tokens, per_token, window);
    INFO("kv_cache_bytes(batch " << batch << ", tokens " << tokens << ", bytes per token " << per_token << ", window "
                                 << window << "): expected " << want << " bytes, got " << got);
    if (got == want) return;
    const int64_t sequence = per_token * batch;  // bytes of one position in every sequence
    // Wrapping past 2^32 can give exactly 0, as "window = 0 keeps nothing"
    // does: a small sequence without a window tells them apart.
    const bool keeps_nothing = window == 0 && got == 0 && ex03::kv_cache_bytes(1, 3, 10, 0) == 0;
    if (!keeps_nothing && overflowed_32_bits(got, want))
        FAIL("the size overflowed 32 bits (" << want << " > 2^31 - 1): multiply in int64_t");
    if (got == 2 * want)
        FAIL(
            "that is twice the cache: bytes_per_token already holds the token's K and V, so K and V are not "
            "counted again here");
    if (window == 0 && got == 0)
        FAIL("window = 0 means no rolling buffer: every one of the " << tokens << " tokens stays");
    if (window > 0 && tokens >= window && got == (window - 1) * sequence)
        FAIL("you kept window - 1 = " << window - 1 << " positions per sequence: the rolling buffer has " << window
                                      << " slots, and a sequence keeps up to " << window << " positions");
    if (window > 0 && tokens > window && got == (window + 1) * sequence)
        FAIL("you kept window + 1 = " << window + 1 << " positions per sequence: a window of " << window
                                      << " positions counts the current token among them");
    if (window > 0 && tokens > window && got == (tokens % window) * sequence)
        FAIL("you kept tokens mod window = " << tokens % window << " positions: i mod W is the slot position i is "
                                             << "written to, a full buffer holds all " << window << " slots");
    if (window > tokens && got == window * sequence)
        FAIL("a sequence of " << tokens << " tokens shorter than the window keeps only its " << tokens
                              << " positions (min(tokens, window))");
    if (window > 0 && tokens > window && got == tokens * sequence)
        FAIL("with a rolling buffer of " << window << " positions a sequence keeps at most " << window << " of its "
                                         << tokens << " tokens");
    if (batch > 1 && window > 0 && got == std::min(batch * tokens, window) * per_token)
        FAIL("every sequence of the batch has its own rolling buffer of up to " << window << " positions");
    if (batch > 1 && got * batch == want) FAIL("times the batch: each of the " << batch << " sequences has a cache");
    FAIL("batch × (the positions one sequence keeps) × bytes per token");
}

}  // namespace

TEST_CASE("ex03 Mistral 7B: 128 KiB per token, 512 MiB rolling, 4 GiB for 32K tokens") {
    const int64_t per_token = ex03::kv_bytes_per_token(32, 8, 128, 2);
    {
        INFO("(a) 2 (K and V) × 32 layers × 8 KV heads × 128 dims × 2 bytes (BF16) = 131,072 bytes = 128 KiB");
        check_per_token(32, 8, 128, 2);
        CHECK(per_token == 128 * KiB);
    }
    {
        INFO("(b) a rolling buffer of 4096 positions: 4096 × 128 KiB = 512 MiB, however long the sequence");
        for (const int64_t tokens : {4096, 4097, 32768, 1000000}) check_cache(1, tokens, 128 * KiB, 4096);
        CHECK(ex03::kv_cache_bytes(1, 32768, 128 * KiB, 4096) == 512 * MiB);
    }
    {
        INFO("a sequence shorter than the window keeps only its own tokens");
        for (const int64_t tokens : {1, 100, 4095}) check_cache(1, tokens, 128 * KiB, 4096);
    }
    {
        INFO("(c) without a rolling buffer (window = 0) all 32,768 tokens stay: 4 GiB");
        check_cache(1, 32768, 128 * KiB, 0);
        CHECK(ex03::kv_cache_bytes(1, 32768, 128 * KiB, 0) == 4 * GiB);
    }
    {
        INFO("a batch of 8 such sequences: 8 rolling buffers of 512 MiB each");
        check_cache(8, 32768, 128 * KiB, 4096);
        CHECK(ex03::kv_cache_bytes(8, 32768, 128 * KiB, 4096) == 4 * GiB);
    }
}

TEST_CASE("ex03 Llama-3 8B at batch 32 x 8192: MHA 128 GiB, GQA 32 GiB, MQA 4 GiB") {
    const int64_t heads[] = {32, 8, 1}, expected[] = {128 * GiB, 32 * GiB, 4 * GiB};
    for (int i = 0; i < 3; ++i) {
        const int64_t per_token = ex03::kv_bytes_per_token(32, heads[i], 128, 2);
        INFO("§5.3: 32 layers, " << heads[i] << " KV heads of 128, BF16, no window: 32 × 8192 tokens × " << 4 * heads[i]
                                 << " KiB = " << expected[i] / GiB << " GiB");
        check_per_token(32, heads[i], 128, 2);
        check_cache(32, 8192, per_token, 0);
        CHECK(ex03::kv_cache_bytes(32, 8192, per_token, 0) == expected[i]);
    }
}

TEST_CASE("ex03 small windows and batches, counted by hand") {
    // window W: a sequence of n tokens keeps min(n, W) positions; the
    // smallest windows (1, 2) are where "W - 1" and "W" differ the most.
    for (int64_t window = 1; window <= 5; ++window)
        for (int64_t tokens = 1; tokens <= 8; ++tokens)
            for (int64_t batch = 1; batch <= 3; ++batch) check_cache(batch, tokens, 10, window);
    for (int64_t tokens = 1; tokens <= 8; ++tokens) check_cache(3, tokens, 10, 0);
    for (const int64_t layers : {1, 2}) check_per_token(layers, 1, 1, 1);
    check_per_token(1, 3, 5, 4);
}

TEST_CASE("ex03 both functions equal the reference") {
    grading::Random rng(4);
    for (int n = 0; n < 300; ++n) {
        const int64_t layers = rng.integer(1, 80), kv = rng.integer(1, 64), dh = rng.integer(1, 256),
                      bytes = rng.integer(1, 8);
        check_per_token(layers, kv, dh, bytes);
        const int64_t per = ref::kv_bytes_per_token(layers, kv, dh, bytes);
        const int64_t batch = rng.integer(1, 64), tokens = rng.integer(1, 100000),
                      window = n % 3 == 0 ? 0 : rng.integer(1, 8192);
        check_cache(batch, tokens, per, window);
    }
}
