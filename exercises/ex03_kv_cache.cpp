// Exercise 3 · the KV cache's size (lecture §5.1, §5.3, §6.4; §10 exercise 3)
//
// While decoding, every layer keeps the K and V vectors of every past token
// of every KV head. Mistral 7B: 32 layers, 8 KV heads of 128 dimensions,
// BF16 (2 bytes), sliding window 4096.
//   (a) How many bytes does one token add to the cache?
//   (b) With the rolling buffer (§6.4) a sequence keeps at most the last
//       4096 positions: how big does its cache get, however long it is?
//   (c) Without it, how big is the cache of one 32K-token sequence?
// Then Llama-3 8B (32 layers, 8 KV heads, head 128, BF16) at batch 32 ×
// 8192 tokens (§5.3): the cache with MHA (32 KV heads), GQA (8), MQA (1).
//
// Write kv_bytes_per_token() and kv_cache_bytes() (ex03_kv_cache.h).
//
// §6.4 says it twice: position i is written to slot i mod W, and after each
// step the cache keeps only the last W - 1 positions. It is one buffer seen
// between two steps and during one: between steps it holds the last W - 1
// positions, and the new token's K and V join them to make the window of W
// that the new query sees. So a rolling buffer of `window` positions keeps
// min(tokens, window) of a sequence at once (a short sequence only its own
// tokens; Mistral: 4096 positions, 512 MiB); window = 0 means no rolling
// buffer, every token stays. Each sequence of a batch has its own.
// (docs/models.md, "Decoding and caches", says how the code stores it.)
//
// Graded: Mistral's 128 KiB per token, 512 MiB rolling (at 4096, 4097,
// 32K and 1M tokens), a shorter sequence's own size, 4 GiB for 32K tokens
// without a window, 8 sequences with their buffers; a token's size past
// 2^31 bytes (1024 layers, 1024 KV heads of 1024, BF16: 4 GiB); Llama-3
// 8B's batch with MHA, GQA, MQA; every window 1 … 5 against 1 … 8 tokens
// and batches 1 … 3; the reference on random sizes. A known wrong turn (K
// without V, one layer, values or KiB instead of bytes, 2 bytes per value
// whatever bytes_per_value says, 32-bit overflow of a token's size or of the
// cache's, K and V counted twice, W - 1 positions kept (the buffer between
// two steps, without the new token), W + 1 or tokens mod W kept, a short
// sequence padded to the window, window = 0 keeping nothing, the window
// ignored, one buffer for the whole batch, the batch forgotten) is named in
// the message.
#include "exercises/ex03_kv_cache.h"

#include "exercises/not_implemented.h"

namespace ex03 {

int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    // TODO
    (void)layers, (void)kv_heads, (void)head_dim, (void)bytes_per_value;
    throw exercises::not_implemented("ex03 kv_cache: kv_bytes_per_token");
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    // TODO
    (void)batch, (void)tokens, (void)bytes_per_token, (void)window;
    throw exercises::not_implemented("ex03 kv_cache: kv_cache_bytes");
}

}  // namespace ex03
