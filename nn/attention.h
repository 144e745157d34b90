#pragma once
// Causal self-attention with every option of the lecture: query heads and
// KV heads (§5 MHA / GQA / MQA), RoPE on q and k (§4), a sliding window
// (§6), and decoding with a KV cache, including Mistral's rolling buffer
// (§6.4).
#include <memory>
#include <utility>
#include <vector>

#include "nn/config.h"
#include "nn/layers.h"

namespace nn {

// Keys and values of the positions seen so far, for one layer.
//  - plain cache: every position, one slot each, in the order they came.
//    The tokens are written in place into buffers with room to spare; a
//    full buffer is replaced by one twice as large. Decoding T tokens one at
//    a time so copies each stored row about once (at most 2T rows in all),
//    where appending by concatenation copied the whole cache at every step,
//    T²/2 rows (issue 13). (With one sequence, B = 1, attention reads the
//    filled slots where they are; with B > 1 the attention op gathers them
//    into one contiguous copy per call, a pass over numbers it reads anyway.)
//  - rolling buffer (window W > 0): W-1 slots, position p stored in slot
//    p mod (W-1), overwriting the oldest. A query at p sees p itself and the
//    W-1 positions before it, so nothing older is ever needed again.
// Keys are stored rotated by their own absolute position (RoPE), so where
// they sit in the buffer does not matter.
enum class CacheKind { Plain, Rolling };

struct KVCache {
    // [B, room, Hkv, dh]: slot s of batch row b at [b, s]. A rolling buffer's
    // room is its W-1 slots; a plain cache's first slots() are filled.
    Tensor k, v;
    std::vector<int64_t> positions;  // absolute position of each slot (-1: empty)
    int64_t capacity = -1;           // slots of a rolling buffer; -1: a plain cache

    static KVCache plain() { return {}; }
    static KVCache rolling(int64_t window) {
        KVCache c;
        c.capacity = window - 1;
        return c;
    }
    int64_t slots() const { return static_cast<int64_t>(positions.size()); }
};

// Where the rows of a packed activation [N, d] come from: several sequences
// laid end to end without padding. Sequence b is rows starts[b] …
// starts[b+1]-1; row i is token positions[i] of its sequence. Every
// row-wise layer (norms, linears, the MLP, the head) just sees N rows; only
// attention needs the packing, to keep sequences apart.
struct Packing {
    std::vector<int64_t> starts;     // [B + 1], from 0 to N
    std::vector<int64_t> positions;  // [N]

    static Packing from_starts(std::vector<int64_t> starts);  // validates
    static Packing uniform(int64_t B, int64_t T);             // B sequences of length T
    int64_t rows() const { return starts.empty() ? 0 : starts.back(); }
    int64_t sequences() const { return starts.empty() ? 0 : static_cast<int64_t>(starts.size()) - 1; }
};

// Chosen rows of packed sequences, for attention at those rows only: row
// r of sequence b, at position p, needs its query and the keys and values
// of rows starts[b] … r. Rows that see the same number L of keys are
// grouped, to go through one attention call. Built once for a packing, so
// a training loop that reads the same rows every step groups them once.
struct RowSelection {
    static RowSelection of(const Packing& packing, std::vector<int64_t> rows);  // validates

    struct Group {
        int64_t keys = 0;  // L
        Tensor members;    // [n]: indices into rows
        Tensor key_rows;   // [n·L]: rows starts[b] … r of each member, member by member
    };
    std::vector<int64_t> rows;       // [R]
    Tensor index;                    // the same as a tensor, for index_select
    std::vector<int64_t> positions;  // [R]: each row's position in its sequence
    std::vector<Group> groups;       // by increasing L
    Tensor order;                    // [R]: row i's place among the groups' members laid end to end
    int64_t packed_rows = 0;         // N of the packing it was made for
};

// Causal self-attention, the part both recipes share: heads, RoPE (§4),
// GQA (§5), the window (§6) and the three ways of running it (Attend
// below). A recipe supplies its projections.
class Attention : public Module {
public:
    // x [N, d]: packed sequences (training and evaluation). With `weights`
    // (sequences of one length T only), receives the attention
    // probabilities [B, Hq, T, T].
    Tensor forward(const Tensor& x, const Packing& packing, Tensor* weights = nullptr) const;

    // The outputs at chosen rows of packed sequences only, [R, d] (row i is
    // the output of row rows.rows[i]): the same numbers as those rows of
    // forward(), with queries for those rows alone. Every row still gives
    // its key and value.
    Tensor forward_rows(const Tensor& x, const Packing& packing, const RowSelection& rows) const;

    // Decoding: x [B, T, d] are new tokens at absolute `positions`; they
    // attend to the cache and to each other, then are stored in it.
    // rope_positions (default: `positions`) turns their q and k by other
    // positions than their own: the §6.4 bug of rotating by the cache's
    // length (lesson 04). The mask and the cache slots always use
    // `positions`.
    Tensor forward_cached(const Tensor& x, const std::vector<int64_t>& positions, KVCache& cache,
                          const std::vector<int64_t>& rope_positions = {}) const;

protected:
    explicit Attention(const LMConfig& cfg) : cfg_(cfg) {}

    // The recipe's projections of x [..., d]: q [..., d], k and v
    // [..., Hkv·dh] (heads are consecutive blocks of dh columns), and the
    // output projection [..., d] -> [..., d].
    virtual Tensor project_q(const Tensor& x) const = 0;
    virtual std::pair<Tensor, Tensor> project_kv(const Tensor& x) const = 0;
    virtual Tensor project_out(const Tensor& heads) const = 0;

    // forward()'s heads [N, Hq, dh] for packed rows x [N, d]: by default the
    // projections above, RoPE, and ag::attention_packed. A recipe with one
    // fused projection and nothing to rotate overrides it with a single op.
    virtual Tensor attend_packed(const Tensor& x, const Packing& packing, Tensor* weights) const;

    const LMConfig cfg_;

private:
    Tensor split_heads(const Tensor& t, int64_t heads) const;                     // [..., H·dh] -> [..., H, dh]
    Tensor rotate(const Tensor& t, const std::vector<int64_t>& positions) const;  // RoPE, if the model uses it
    Tensor merge_heads(const Tensor& t) const;                                    // [..., H, dh] -> [..., d]
};

// Lecture 2's GPT: one fused projection qkv ([d + 2·Hkv·dh, d]: the q, k,
// v blocks of rows in that order) and proj, both with biases.
class GptAttention final : public Attention {
public:
    GptAttention(const LMConfig& cfg, ag::Generator& gen);
    std::shared_ptr<Linear> qkv, proj;

private:
    Tensor project_q(const Tensor& x) const override;
    std::pair<Tensor, Tensor> project_kv(const Tensor& x) const override;
    Tensor project_out(const Tensor& heads) const override { return proj->forward(heads); }
    Tensor attend_packed(const Tensor& x, const Packing& packing, Tensor* weights) const override;
};

// ModernLM (§5): wq [d, d], wk and wv [Hkv·dh, d], wo [d, d], no biases.
class ModernAttention final : public Attention {
public:
    ModernAttention(const LMConfig& cfg, ag::Generator& gen);
    std::shared_ptr<Linear> wq, wk, wv, wo;

private:
    Tensor project_q(const Tensor& x) const override { return wq->forward(x); }
    std::pair<Tensor, Tensor> project_kv(const Tensor& x) const override { return {wk->forward(x), wv->forward(x)}; }
    Tensor project_out(const Tensor& heads) const override { return wo->forward(heads); }
};

// How a block's attention runs in one pass of the model, the same call
// for every block (nn/block.h):
//   packed:  every row of packed sequences (training, evaluation);
//   rows:    the outputs at chosen rows only (what a classifier reads);
//   cached:  new tokens against a KV cache (decoding).
// It refers to the packing, the rows, the weights and the cache it is
// given (they must outlive it) and copies the lists of positions.
class Attend {
public:
    static Attend packed(const Packing& packing, Tensor* weights = nullptr);
    static Attend rows(const Packing& packing, const RowSelection& rows);
    static Attend cached(std::vector<int64_t> positions, KVCache& cache, std::vector<int64_t> rope_positions = {});

    Tensor operator()(const Attention& attention, const Tensor& x) const;
    // The rows of the residual stream the output belongs to: x itself, or
    // its chosen rows.
    Tensor residual(const Tensor& x) const;

private:
    enum class Mode { Packed, Rows, Cached };
    explicit Attend(Mode mode) : mode_(mode) {}
    Mode mode_;
    const Packing* packing_ = nullptr;
    Tensor* weights_ = nullptr;
    const RowSelection* rows_ = nullptr;
    KVCache* cache_ = nullptr;
    std::vector<int64_t> positions_, rope_positions_;
};

}  // namespace nn
