// Exercise 3 · the KV cache's size (§5.3, §6.4): Mistral's and Llama-3's
// figures, small windows and batches counted by hand, and the reference on
// random sizes. Diagnoses the usual wrong turns: K without V, one layer's
// cache, numbers instead of bytes, KiB instead of bytes, 2 bytes per value
// whatever bytes_per_value says, 32-bit overflow (of a token's size too); K
// and V counted twice, a window of W keeping W - 1 (what the buffer holds
// between two steps, §6.4) or W + 1 or tokens mod W positions,
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
    if (overflowed_32_bits(got, want))
        FAIL("the size overflowed a 32-bit int: " << want << " bytes is past 2^31 - 1 = " << INT32_MAX
                                                  << ", and an int keeps only the low 32 bits of the product (here "
                                                  << got << "); compute and return it in int64_t");
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
    // §6.4 between two steps the buffer holds the last W - 1 positions; the
    // step's new token joins them, so a window of W positions is cached at
    // once (exercise 3(b): 4096 positions, 512 MiB).
    if (window > 0 && tokens >= window && got == (window - 1) * sequence)
        FAIL("you kept window - 1 = " << window - 1 << " positions per sequence: between two steps the buffer "
                                      << "holds the last W - 1 positions, but the new token's K and V join them, "
                                      << "so the cache holds a window of W = " << window
                                      << " positions (§6.4; exercise 3(b): 4096 positions, 512 MiB)");
    // A window ignored and a window of W + 1 both keep W + 1 positions of
    // a sequence of W + 1 tokens: a longer one tells them apart.
    const bool ignores_window =
        window > 0 && ex03::kv_cache_bytes(1, 2 * window + 3, 1, window) == 2 * window + 3 && got == tokens * sequence;
    if (window > 0 && tokens > window && ignores_window)
        FAIL("you ignored the window: with a rolling buffer a sequence keeps at most window = "
             << window << " of its " << tokens << " tokens, however long it is (older K and V are never seen "
             << "again, and are overwritten, §6.4)");
    if (window > 0 && tokens > window && got == (window + 1) * sequence)
        FAIL("you kept window + 1 = " << window + 1 << " positions per sequence: a window of " << window
                                      << " positions counts the current token among them");
    if (window > 0 && tokens > window && got == (tokens % window) * sequence)
        FAIL("you kept tokens mod window = " << tokens % window << " positions: i mod W is the slot position i is "
                                             << "written to, not how many are kept; a full buffer holds a window of "
                                             << window << " positions");
    if (window > tokens && got == window * sequence)
        FAIL("a sequence of " << tokens << " tokens shorter than the window keeps only its " << tokens
                              << " positions (min(tokens, window))");
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

TEST_CASE("ex03 a token's size past 2^31 bytes: 64-bit arithmetic") {
    // 1024 layers, 1024 KV heads of 1024 numbers, BF16: 2 · 2^10 · 2^10 ·
    // 2^10 · 2 = 2^32 bytes (4 GiB) a token, which a 32-bit int wraps to 0;
    // 3 · 2^30 (768 layers) and 4 · 10^9, which it wraps to negative sizes.
    INFO("sizes past 2^31 - 1: multiply in int64_t (the arguments already are)");
    check_per_token(1024, 1024, 1024, 2);
    CHECK(ex03::kv_bytes_per_token(1024, 1024, 1024, 2) == 4 * GiB);
    check_per_token(768, 1024, 1024, 2);
    check_per_token(1000, 1000, 1000, 2);
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
