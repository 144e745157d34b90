// Exercise 16 · the rolling buffer cache (§6.4, §4.7): a new cache, the
// slots, token-by-token decoding against full windowed attention for T well
// past W (W = 2, the smallest buffer, up to a window wider than the
// sequence), what the buffer holds (the last W-1 positions, keys rotated by
// their absolute position, each in slot p mod S, a fixed [S, head_dim]
// buffer that keeps no graph), decoding from position 1000, another RoPE
// base, q, k, v that arrive as views (not contiguous), large scores (also
// all far below 0), the engine's fused ag::attention never run, and outputs
// that stay as returned while later steps run. Either of §6.4's two ways of
// counting the slots is right: S = W-1 (the window's W-th key is the new
// token's own, held aside) or S = W (the slides' i mod W, the new token
// written in first); every check follows the S the student's cache has.
// Diagnoses rotating by the cache length or the slot, no rotation, the
// default base, the other pairing, W±1 tokens seen, the new token's own key
// left unrotated or seen twice (each only when it explains the output at
// every W probed), slots off by one, and a slot count or slot_of that fits
// neither way.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "exercises/ex16_rolling_cache.h"
#include "reference/ex16_rolling_cache.h"
#include "tensor_checks.h"

namespace ref = ex16_reference;
using ag::Tensor;

namespace {

// §6.4 the buffer's slots: S = W-1 (the new token's key held aside while
// it attends) or S = W (the slides' i mod W), as the student's cache has.
// FAILs when the count fits neither.
int64_t slots_of(const ex16::RollingCache& cache) {
    const int64_t S = static_cast<int64_t>(cache.positions.size()), W = cache.window;
    if (S != W - 1 && S != W)
        FAIL("your buffer has " << S << " slots: a window of W = " << W << " needs W-1 = " << W - 1
                                << " (the new token's key held aside while it attends, nn/attention.h) or W = " << W
                                << " (the slides' i mod W, the new token written in first): the last W-1 positions "
                                << "between two steps, and the new one");
    return S;
}
std::string slots_text(int64_t S, int64_t W) { return (S == W ? "W = " : "W-1 = ") + std::to_string(S); }

// How a decoder turns the token at absolute position p, right and wrong.
struct Rope {
    std::function<int64_t(int64_t p)> angle;  // the position RoPE is given
    double base;
    ag::RopePairing pairing = ag::RopePairing::Half;
};
Rope absolute(double base = 10000.0) {
    return {[](int64_t p) { return p; }, base};
}

// Rows of x [T, d] (positions p0 … p0+T-1) rotated as `rope` says.
Tensor rotate_rows(const Tensor& x, int64_t p0, const Rope& rope) {
    const int64_t T = x.size(0), d = x.size(1);
    std::vector<int64_t> at;
    for (int64_t t = 0; t < T; ++t) at.push_back(rope.angle(p0 + t));
    return ag::rope(x.reshape({T, 1, d}), at, rope.base, rope.pairing).reshape({T, d});
}

struct Qkv {
    Tensor q, k, v;
};
Qkv random_qkv(grading::Random& rng, int64_t T, int64_t d, double scale = 1.0) {
    return {grading::random_tensor(rng, {T, d}, scale), grading::random_tensor(rng, {T, d}, scale),
            grading::random_tensor(rng, {T, d})};
}

// The whole sequence at once (positions p0 … p0+T-1): q and k rotated,
// then causal attention over the last `seen` tokens. A decoder that rotates
// each new token as `rope` says, caches its key and lets the query see
// `seen` tokens computes exactly this.
Tensor full_windowed(const Qkv& x, int64_t seen, int64_t p0, const Rope& rope) {
    const int64_t T = x.q.size(0), d = x.q.size(1);
    const auto head = [&](const Tensor& t) { return t.reshape({1, T, 1, d}); };
    return ag::causal_attention(head(rotate_rows(x.q, p0, rope)), head(rotate_rows(x.k, p0, rope)), head(x.v), seen)
        .reshape({T, d});
}

// The same numbers (NaN equal to NaN).
bool unchanged(const std::vector<double>& now, const std::vector<double>& then) {
    return std::equal(now.begin(), now.end(), then.begin(), then.end(),
                      [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); });
}

// One step of the student's cache, refusing the engine's fused attention
// (it knows about empty slots and windows: the exercise is to write that
// part), even under NoGradGuard.
Tensor checked_step(ex16::RollingCache& cache, const Tensor& q, const Tensor& k, const Tensor& v, int64_t p) {
    Tensor out;
    const std::vector<double> q0 = q.to_vector(), k0 = k.to_vector(), v0 = v.to_vector();
    const std::vector<std::string> ops = grading::ops_run([&] { return out = cache.step(q, k, v, p); });
    for (const auto& [name, x, before] : {std::tuple{"q", q, q0}, std::tuple{"k", k, k0}, std::tuple{"v", v, v0}})
        if (!unchanged(x.to_vector(), before))
            FAIL("step() at position " << p << " changed the numbers of its input " << name
                                       << ": leave q, k and v as they were; rotate into new tensors (ag::rope "
                                          "returns one)");
    for (const std::string& op : ops)
        if (op.find("attention") != std::string::npos)
            FAIL("step() ran the engine's fused ag::" << op << ": write the attention over the cached keys and the "
                                                      << "new one yourself (matmul, softmax)");
    if (out.shape() != ag::Shape{q.numel()})
        FAIL("step() must return [head_dim] = [" << q.numel() << "], got " << ag::shape_str(out.shape()));
    return out;
}

// Row t of x as the [d] vector step() is given: contiguous, or a strided
// view (every number followed by a NaN gap), as a narrow of a fused qkv
// projection would be.
Tensor row(const Tensor& x, int64_t t, bool strided) {
    const Tensor r = x.narrow(0, t, 1).reshape({x.size(1)});
    return strided ? grading::strided_copy(r) : r;
}

// Decoding row by row (positions p0 …) with a cache (the student's or the
// reference's); after_step(p) runs after each step.
template <class Cache>
Tensor decode(Cache& cache, const Qkv& x, int64_t p0, bool strided = false,
              const std::function<void(int64_t p)>& after_step = nullptr) {
    std::vector<Tensor> rows, returned;
    std::vector<std::vector<double>> numbers;  // each output as it was when step() returned it
    for (int64_t t = 0; t < x.q.size(0); ++t) {
        const Tensor q = row(x.q, t, strided), k = row(x.k, t, strided), v = row(x.v, t, strided);
        Tensor out;
        if constexpr (std::is_same_v<Cache, ex16::RollingCache>)
            out = checked_step(cache, q, k, v, p0 + t);
        else
            out = cache.step(q, k, v, p0 + t);
        returned.push_back(out);
        numbers.push_back(out.to_vector());
        rows.push_back(out.reshape({1, x.q.size(1)}));
        if (after_step) after_step(p0 + t);
    }
    for (size_t t = 0; t < returned.size(); ++t)
        if (!unchanged(returned[t].to_vector(), numbers[t]))
            FAIL("the output step() returned for position "
                 << p0 + static_cast<int64_t>(t)
                 << " changed when later steps ran: it shares its numbers with the buffer (or another tensor a "
                    "later step writes into); return a tensor of its own");
    return ag::cat(rows, 0);
}

// The first row where two [T, d] outputs differ, or -1.
int64_t first_wrong_row(const Tensor& got, const Tensor& want) {
    for (int64_t t = 0; t < want.size(0); ++t)
        if (!grading::same_tensor(got.narrow(0, t, 1), want.narrow(0, t, 1), 1e-12)) return t;
    return -1;
}

// Windowed attention of the rotated q over the rotated cached keys, the
// new token's own key as it came in (not rotated).
Tensor own_key_unrotated(const Qkv& x, int64_t W, int64_t p0, double base) {
    const int64_t T = x.q.size(0), d = x.q.size(1);
    const Tensor q = rotate_rows(x.q, p0, absolute(base)), k = rotate_rows(x.k, p0, absolute(base));
    std::vector<Tensor> rows;
    for (int64_t t = 0; t < T; ++t) {
        const int64_t from = std::max<int64_t>(0, t - W + 1);
        std::vector<Tensor> keys;
        if (t > from) keys.push_back(k.narrow(0, from, t - from));
        keys.push_back(x.k.narrow(0, t, 1));
        const Tensor scores = ag::matmul(q.narrow(0, t, 1), ag::cat(keys, 0).t()) / std::sqrt(static_cast<double>(d));
        rows.push_back(ag::matmul(ag::softmax(scores), x.v.narrow(0, from, t - from + 1)));
    }
    return ag::cat(rows, 0);
}

// Windowed attention in which the new token's own key and value are seen
// twice: in the window, and once more beside it.
Tensor own_key_twice(const Qkv& x, int64_t W, int64_t p0, double base) {
    const int64_t T = x.q.size(0), d = x.q.size(1);
    const Tensor q = rotate_rows(x.q, p0, absolute(base)), k = rotate_rows(x.k, p0, absolute(base));
    std::vector<Tensor> rows;
    for (int64_t t = 0; t < T; ++t) {
        const int64_t from = std::max<int64_t>(0, t - W + 1), n = t - from + 1;
        const Tensor keys = ag::cat({k.narrow(0, from, n), k.narrow(0, t, 1)}, 0),
                     values = ag::cat({x.v.narrow(0, from, n), x.v.narrow(0, t, 1)}, 0);
        const Tensor scores = ag::matmul(q.narrow(0, t, 1), keys.t()) / std::sqrt(static_cast<double>(d));
        rows.push_back(ag::matmul(ag::softmax(scores), values));
    }
    return ag::cat(rows, 0);
}

// §6.4 the wrong turns, as what a whole-sequence pass would compute
// instead (for a cache of window W, S slots and RoPE base `base`), and what
// to tell a student whose cache has W slots (w_slots) or W-1.
struct WrongTurn {
    std::function<std::string(bool w_slots)> message;
    std::function<Tensor(const Qkv& x, int64_t W, int64_t S, int64_t p0, double base)> computes;
};
Rope turned(std::function<int64_t(int64_t)> angle, double base) { return {std::move(angle), base}; }
std::function<std::string(bool)> says(std::string text) {
    return [text](bool) { return text; };
}

const std::vector<WrongTurn>& wrong_turns() {
    static const std::vector<WrongTurn> turns = {
        {[](bool w_slots) {
             return std::string("you rotated the new token by the cache's length min(p, ") + (w_slots ? "W" : "W-1") +
                    "): rotate q and k by the absolute position p (§6.4, misconception 9)";
         },
         [](const Qkv& x, int64_t W, int64_t S, int64_t p0, double b) {
             return full_windowed(x, W, p0, turned([S](int64_t p) { return std::min(p, S); }, b));
         }},
        {[](bool w_slots) {
             return std::string("you rotated the new token by its slot p mod ") + (w_slots ? "W" : "(W-1)") +
                    ": rotate q and k by the absolute position p; the slot only says where the key is stored (§6.4)";
         },
         [](const Qkv& x, int64_t W, int64_t S, int64_t p0, double b) {
             return full_windowed(x, W, p0, turned([S](int64_t p) { return p % S; }, b));
         }},
        {says("your q and k are not rotated at all: RoPE turns both by the position p (ag::rope)"),
         [](const Qkv& x, int64_t W, int64_t, int64_t p0, double b) {
             return full_windowed(x, W, p0, turned([](int64_t) { return 0; }, b));
         }},
        {says("your rotation ignores the cache's RoPE base: the angles are p·θ_i with θ_i = base^(-2(i-1)/head_dim) "
              "for the base given to the constructor, not 10000"),
         [](const Qkv& x, int64_t W, int64_t, int64_t p0, double) { return full_windowed(x, W, p0, absolute()); }},
        {says("you paired dims 2i and 2i+1 (Interleaved): the pairing is Half, dim i with i + head_dim/2 (ag::rope's "
              "default)"),
         [](const Qkv& x, int64_t W, int64_t, int64_t p0, double b) {
             Rope r = absolute(b);
             r.pairing = ag::RopePairing::Interleaved;
             return full_windowed(x, W, p0, r);
         }},
        {[](bool w_slots) -> std::string {
             if (w_slots)
                 return "your queries see W+1 tokens: all W slots of your buffer and the new token. Slot p mod W "
                        "still holds position p-W, which has left the window: write the new token there before "
                        "attending (it is then the window's W-th key), or skip that slot";
             return "your queries see W+1 tokens: the window is the new token and the W-1 positions before it";
         },
         [](const Qkv& x, int64_t W, int64_t, int64_t p0, double b) {
             return full_windowed(x, W + 1, p0, absolute(b));
         }},
        {[](bool w_slots) -> std::string {
             if (w_slots)
                 return "your queries see W-1 tokens: the window is the new token and the W-1 positions before it "
                        "(is the new token's own key missing, or is one of the W-1 before it skipped?)";
             return "your queries see W-1 tokens: W-1 cached positions and the new token itself make W (did you "
                    "drop one slot, forget the new token's own key, or store it over the oldest slot before "
                    "attending? With W-1 slots that slot still holds p-(W-1), which this query sees)";
         },
         [](const Qkv& x, int64_t W, int64_t, int64_t p0, double b) {
             return full_windowed(x, W - 1, p0, absolute(b));
         }},
        {says("the new token's own key is scored as it came in, not rotated: the query sees k rotated by p, the same "
              "key that goes into the buffer"),
         [](const Qkv& x, int64_t W, int64_t, int64_t p0, double b) { return own_key_unrotated(x, W, p0, b); }},
        {[](bool w_slots) -> std::string {
             return std::string("your query scores the new token's own key twice (and weighs its value twice): ") +
                    (w_slots ? "written into its slot before the query attends, it is already in the buffer; do "
                               "not add it again"
                             : "once from the buffer and once beside it; with W-1 slots, attend first and store it "
                               "after");
         },
         [](const Qkv& x, int64_t W, int64_t, int64_t p0, double b) { return own_key_twice(x, W, p0, b); }},
    };
    return turns;
}

// The wrong turn the student's cache follows for every W probed (decoding
// 20 tokens from p0 with RoPE base `base`, small scores, contiguous
// inputs), said for the student's slots, or "".
std::string diagnose_outputs(int64_t p0, double base) {
    grading::Random rng(1616);
    const Qkv x = random_qkv(rng, 20, 4);
    std::vector<Tensor> got;
    std::vector<int64_t> slots;
    for (int64_t W = 2; W <= 6; ++W) {
        ex16::RollingCache cache(W, 4, base);
        slots.push_back(slots_of(cache));
        got.push_back(decode(cache, x, p0));
    }
    // A turn explains the outputs if it computes them at every W, and it
    // is a wrong turn there if it differs from the right answer at some W.
    for (const WrongTurn& turn : wrong_turns()) {
        bool all = true, differs = false;
        for (int64_t W = 2; W <= 6; ++W) {
            const Tensor computes = turn.computes(x, W, slots[static_cast<size_t>(W - 2)], p0, base);
            all = all && grading::same_tensor(got[static_cast<size_t>(W - 2)], computes, 1e-12);
            differs = differs || !grading::same_tensor(computes, full_windowed(x, W, p0, absolute(base)), 1e-12);
        }
        if (all && differs) return turn.message(slots.back() == 6);
    }
    return "";
}

// What the buffer of S slots (as the new cache had) must hold after
// position p: still [S, head_dim], no graph; the last W-1 positions p-W+2
// … p, all a later query needs (§6.4: "keeps the last W - 1 positions";
// with S = W, slot (p+1) mod W also still holds p-W+1, about to be
// overwritten), position r in slot r mod S, its key rotated by r and its
// value as given.
void check_buffer(const ex16::RollingCache& cache, const Qkv& x, int64_t p0, int64_t p, double base, int64_t S) {
    const int64_t W = cache.window, d = x.q.size(1);
    {
        INFO("after decoding position " << p << ": the buffer stays the " << slots_text(S, W)
                                        << " slots it was made with, of head_dim = " << d << ": keys and values "
                                        << ag::shape_str({S, d}) << ", got " << ag::shape_str(cache.keys.shape())
                                        << " and " << ag::shape_str(cache.values.shape()) << ", "
                                        << cache.positions.size() << " positions");
        REQUIRE(slots_of(cache) == S);
        REQUIRE(cache.keys.shape() == ag::Shape{S, d});
        REQUIRE(cache.values.shape() == ag::Shape{S, d});
    }
    if (cache.keys.requires_grad() || cache.values.requires_grad())
        FAIL(
            "the buffer requires grad: it keeps the graph of every step (decoding needs no gradients; write into "
            "keys.data() / values.data() under an ag::NoGradGuard)");
    const Tensor rotated = rotate_rows(x.k, p0, absolute(base));
    for (int64_t r = std::max(p0, p - W + 2); r <= p; ++r) {
        const int64_t slot = r % S, t = r - p0;
        INFO("after decoding position " << p << ": position " << r << " belongs in slot " << slot);
        const int64_t found = cache.positions[static_cast<size_t>(slot)];
        if (found != r) {
            const auto where = std::find(cache.positions.begin(), cache.positions.end(), r);
            if (where != cache.positions.end())
                FAIL("position " << r << " is in slot " << where - cache.positions.begin() << ", not in slot r mod "
                                 << (S == W ? "W" : "(W-1)") << " = " << slot
                                 << " (positions: " << grading::str(cache.positions) << ")");
            FAIL("slot " << slot << " records position " << found << ", expected " << r
                         << " (positions: " << grading::str(cache.positions) << ")");
        }
        const Tensor key = cache.keys.narrow(0, slot, 1), value = cache.values.narrow(0, slot, 1);
        const Tensor k_row = x.k.narrow(0, t, 1);
        if (!grading::same_tensor(key, rotated.narrow(0, t, 1), 1e-12)) {
            if (grading::same_tensor(key, k_row, 1e-12))
                FAIL(
                    "you cached the key before rotating it: store k rotated by its absolute position, so it never "
                    "needs rotating again (§4.7)");
            if (grading::same_tensor(key, rotate_rows(k_row, slot, absolute(base)), 1e-12))
                FAIL("the cached key is rotated by its slot " << slot << ", not by its absolute position " << r);
            if (grading::same_tensor(key, rotate_rows(k_row, t, absolute(base)), 1e-12))
                FAIL("the cached key is rotated by " << t
                                                     << ", the number of tokens decoded before it, not by its "
                                                        "absolute position "
                                                     << r);
            if (grading::same_tensor(key, rotate_rows(k_row, r + 1, absolute(base)), 1e-12))
                FAIL("the cached key is rotated by " << r + 1 << ", not by its absolute position " << r
                                                     << ": positions count from 0 (the first token is position 0)");
            if (grading::same_tensor(key, rotate_rows(k_row, r, absolute()), 1e-12))
                FAIL("the cached key is rotated with base 10000, not the cache's RoPE base " << base);
            if (!grading::all_finite(key))
                FAIL("the key in slot " << slot
                                        << " holds NaN: were k's numbers read from data() without "
                                           "contiguous()?");
            FAIL("the key in slot " << slot << " is not position " << r << "'s key rotated by " << r << ": "
                                    << grading::tensor_diff(key, rotated.narrow(0, t, 1)));
        }
        if (!grading::same_tensor(value, x.v.narrow(0, t, 1), 1e-12)) {
            if (!grading::all_finite(value))
                FAIL("the value in slot " << slot
                                          << " holds NaN: v arrived as a view that is not contiguous; call "
                                             "contiguous() before reading its data()");
            if (grading::same_tensor(value, rotate_rows(x.v.narrow(0, t, 1), r, absolute(base)), 1e-12))
                FAIL("the value in slot " << slot << " is rotated: RoPE turns q and k only, never v");
            FAIL("the value in slot " << slot << " must be position " << r
                                      << "'s value: " << grading::tensor_diff(value, x.v.narrow(0, t, 1)));
        }
    }
}

// Decodes x from p0 with a new cache (W, base) and compares the outputs
// with full windowed attention; a wrong output is diagnosed. Then decodes
// again checking the buffer after every step.
// `nan_hint` says what NaN or inf in the output means for these inputs.
void check_decoding(const Qkv& x, int64_t W, int64_t p0, double base, bool strided = false,
                    const char* nan_hint = "NaN or inf in the output") {
    ex16::RollingCache cache(W, x.q.size(1), base);
    const int64_t S = slots_of(cache);
    const Tensor got = decode(cache, x, p0, strided);
    const Tensor want = full_windowed(x, W, p0, absolute(base));
    if (!grading::same_tensor(got, want, 1e-12)) {
        if (const std::string turn = diagnose_outputs(p0, base); !turn.empty()) FAIL(turn);
        ex16::RollingCache again(W, x.q.size(1), base);  // names a wrongly stored key, value or slot
        decode(again, x, p0, strided, [&](int64_t p) { check_buffer(again, x, p0, p, base, S); });
        const int64_t t = first_wrong_row(got, want);
        FAIL("the first wrong output is at position "
             << p0 + t << ": " << grading::tensor_diff(got, want)
             << (!grading::all_finite(got) ? std::string(" (") + nan_hint + ")"
                 : t < W - 1               ? " (before the buffer is full: are empty slots, position -1, being seen?)"
                                           : " (the buffer is full from position p0 + W-1 on)"));
    }
    ref::RollingCache reference(W, x.q.size(1), base);
    INFO("against full windowed attention (RoPE at the absolute positions, ag::causal_attention with the window)");
    CHECK_TENSOR(got, want, 1e-12);
    INFO("against the reference decoder");
    CHECK_TENSOR(got, decode(reference, x, p0, strided), 1e-12);
    ex16::RollingCache again(W, x.q.size(1), base);
    decode(again, x, p0, strided, [&](int64_t p) { check_buffer(again, x, p0, p, base, S); });
}

}  // namespace

// §6.4 a window of W is the new token and the W-1 positions before it:
// S = W-1 slots (the new token's key held aside while it attends) or S = W
// (the slides' i mod W, the new token written in before it attends), with
// position p in slot p mod S either way.
TEST_CASE("ex16 a new cache has S = W-1 or W empty slots and slot_of(p) = p mod S") {
    for (int64_t W = 2; W <= 9; ++W)
        for (int64_t d : {2, 4, 8})
            for (double base : {10000.0, 500000.0}) {
                INFO("W = " << W << ", head_dim = " << d << ", rope_base = " << base);
                const ex16::RollingCache cache(W, d, base);
                CHECK(cache.window == W);
                CHECK(cache.base == base);
                const int64_t S = slots_of(cache);
                {
                    INFO(slots_text(S, W)
                         << " slots, every position -1 (empty); keys and values [" << S
                         << ", head_dim] of zeros, one row a slot; got keys " << ag::shape_str(cache.keys.shape())
                         << ", values " << ag::shape_str(cache.values.shape()));
                    CHECK(
                        std::all_of(cache.positions.begin(), cache.positions.end(), [](int64_t p) { return p == -1; }));
                    REQUIRE(cache.keys.shape() == ag::Shape{S, d});
                    REQUIRE(cache.values.shape() == ag::Shape{S, d});
                    CHECK(ag::max_abs(cache.keys) == 0.0);
                    CHECK(ag::max_abs(cache.values) == 0.0);
                }
                for (int64_t p = 0; p < 60; ++p) {
                    const int64_t got = cache.slot_of(p), want = p % S;
                    INFO("position " << p << ", a buffer of " << slots_text(S, W) << " slots: expected slot p mod " << S
                                     << " = " << want << ", got " << got);
                    if (got != want && got == (p + 1) % S) FAIL("your slot is one ahead: position p goes to p mod S");
                    if (got != want && S > 1 && got == (p + S - 1) % S)
                        FAIL("your slot is one behind: position p goes to p mod S");
                    if (got != want && S == W - 1 && got == p % W)
                        FAIL(
                            "your buffer has W-1 slots but slot_of counts W (p mod W): position W-1 would go past "
                            "its end; with W-1 slots, p mod (W-1)");
                    if (got != want && S == W && W > 2 && got == p % (W - 1))
                        FAIL(
                            "your buffer has W slots but slot_of counts W-1 (p mod (W-1)): with W slots, position p "
                            "goes to slot p mod W, over p-W, which has left the window");
                    CHECK(got == want);
                }
            }
}

TEST_CASE("ex16 decoding 40 tokens one by one equals full windowed attention") {
    // W = 2 is the smallest buffer (one slot, or two); W = 64 > T never
    // wraps (every query sees all of 0 … p).
    grading::Random rng(16);
    for (int64_t W : {2, 3, 4, 5, 6, 64})
        for (int64_t d : {2, 4, 8}) {
            INFO("T = 40, W = " << W << ", head_dim = " << d << " (a buffer of W-1 = " << W - 1 << " or W slots)");
            check_decoding(random_qkv(rng, 40, d), W, 0, 10000.0);
        }
}

TEST_CASE("ex16 positions are absolute: decoding that starts at position 1000") {
    // A stream that starts far into a document: position p0 + t is turned
    // by (p0 + t)·θ_i and stored in slot (p0 + t) mod S. (The outputs
    // alone cannot tell: RoPE's scores depend on p - j only, so they are
    // those of positions 0 … T-1; the buffer can.)
    grading::Random rng(18);
    for (int64_t p0 : {1000, 7})
        for (int64_t W = 2; W <= 6; ++W) {
            INFO("positions " << p0 << " … " << p0 + 19 << ", W = " << W);
            check_decoding(random_qkv(rng, 20, 4), W, p0, 10000.0);
        }
}

TEST_CASE("ex16 the cache's RoPE base is the one given to the constructor") {
    // §4.7 θ_i = base^(-2(i-1)/head_dim): Llama 3 uses base 500,000.
    grading::Random rng(19);
    for (double base : {500000.0, 10.0})
        for (int64_t W : {2, 3, 5}) {
            INFO("rope_base = " << base << ", W = " << W << ", positions 100 … 119");
            check_decoding(random_qkv(rng, 20, 6), W, 100, base);
        }
}

TEST_CASE("ex16 step() reads q, k and v given as views that are not contiguous") {
    // Inside a model q, k, v are often narrows of one fused projection: not
    // contiguous. Copying their numbers into the buffer needs contiguous().
    grading::Random rng(20);
    for (int64_t W : {2, 4}) {
        INFO("W = " << W << ", q, k, v as strided views (every number followed by a NaN gap)");
        check_decoding(random_qkv(rng, 12, 4), W, 0, 10000.0, true,
                       "NaN in the output: numbers read from a view's data() without contiguous() include the "
                       "gaps between its elements");
    }
}

const char* const kLargeNan =
    "NaN or inf in the output for large scores: exp(score) overflowed, or every weight underflowed to 0 and was "
    "divided by their sum 0; subtract the max of the scores the query sees (not of empty slots) before exp "
    "(softmax(s) = softmax(s - max s)), or use ag::softmax on those scores only";

TEST_CASE("ex16 decoding with large scores (the softmax must not overflow)") {
    // q and k ~ N(0, 40²): scores q̃·k̃/√head_dim of order 1000; exp(1000)
    // overflows a double, so the softmax must subtract each row's max.
    grading::Random rng(21);
    for (int64_t W : {2, 3, 6}) {
        INFO("W = " << W << ", head_dim = 4, q and k ~ N(0, 40²)");
        check_decoding(random_qkv(rng, 15, 4, 40.0), W, 0, 10000.0, false, kLargeNan);
    }
    // k = -q: each token's own score is -|q|²/√head_dim, of order -3000, so
    // while the buffer fills a row may have only scores far below 0.
    for (int64_t W : {2, 3, 6}) {
        INFO("W = " << W << ", head_dim = 4, q ~ N(0, 40²) and k = -q: every token's own score of order -3000");
        Qkv x = random_qkv(rng, 15, 4, 40.0);
        x.k = -x.q;
        check_decoding(x, W, 0, 10000.0, false, kLargeNan);
    }
}

TEST_CASE("ex16 the buffer keeps no graph when q, k, v require grad") {
    // Decoding from a model in training mode: the inputs carry gradients.
    // The buffer must still be plain numbers, not the end of a graph that
    // grows with every token.
    grading::Random rng(22);
    const int64_t W = 3, d = 4;
    Qkv x = random_qkv(rng, 8, d);
    for (Tensor* t : {&x.q, &x.k, &x.v}) t->requires_grad_(true);
    ex16::RollingCache cache(W, d, 10000.0);
    const int64_t S = slots_of(cache);
    for (int64_t p = 0; p < 8; ++p) {
        checked_step(cache, row(x.q, p, false), row(x.k, p, false), row(x.v, p, false), p);
        check_buffer(cache, x, 0, p, 10000.0, S);
    }
}
