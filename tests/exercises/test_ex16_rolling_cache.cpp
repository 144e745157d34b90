// Exercise 16 · the rolling buffer cache (§6.4, §4.7): a new cache, the
// slots, token-by-token decoding against full windowed attention for T well
// past W, and what the buffer holds (keys rotated by their absolute
// position, each in slot p mod (W-1)). Diagnoses rotating by the cache
// length or the slot, and slots off by one.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "exercises/ex16_rolling_cache.h"
#include "grading_checks.h"
#include "reference/ex16_rolling_cache.h"

namespace ref = ex16_reference;

namespace {

// Where RoPE turns the token at absolute position p (the last argument:
// the window W), right and wrong.
using Angle = std::function<int64_t(int64_t p, int64_t W)>;
const Angle absolute = [](int64_t p, int64_t) { return p; };

// Rows of x [T, d] rotated by angle(p0 + t), as ag::rope would.
ag::Tensor rotate_rows(const ag::Tensor& x, int64_t p0, int64_t W, const Angle& angle) {
    const int64_t T = x.size(0), d = x.size(1);
    std::vector<int64_t> at;
    for (int64_t t = 0; t < T; ++t) at.push_back(angle(p0 + t, W));
    return ag::rope(x.reshape({T, 1, d}), at, 10000.0).reshape({T, d});
}

// The whole sequence at once (positions p0 … p0+T-1): q and k rotated by
// angle(p), then windowed causal attention. A decoder that rotates each new
// token by angle(p) and caches its key computes exactly this.
ag::Tensor full_windowed(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t W, int64_t p0,
                         const Angle& angle = absolute) {
    const int64_t T = q.size(0), d = q.size(1);
    const auto head = [&](const ag::Tensor& x) { return x.reshape({1, T, 1, d}); };
    return ag::causal_attention(head(rotate_rows(q, p0, W, angle)), head(rotate_rows(k, p0, W, angle)), head(v), W)
        .reshape({T, d});
}

// Decoding row by row with a cache (the student's or the reference's).
template <class Cache>
ag::Tensor decode(Cache& cache, const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t p0) {
    std::vector<ag::Tensor> rows;
    for (int64_t t = 0; t < q.size(0); ++t) {
        const ag::Tensor out = cache.step(q.narrow(0, t, 1).reshape({q.size(1)}), k.narrow(0, t, 1).reshape({q.size(1)}),
                                          v.narrow(0, t, 1).reshape({q.size(1)}), p0 + t);
        if (out.numel() != q.size(1)) FAIL("step() must return [head_dim], got " << ag::shape_str(out.shape()));
        rows.push_back(out.reshape({1, q.size(1)}));
    }
    return ag::cat(rows, 0);
}

bool same(const ag::Tensor& a, const ag::Tensor& b, double tol = 1e-12) {
    return a.shape() == b.shape() && ag::max_abs_diff(a, b) <= tol;
}

// The first row where two [T, d] outputs differ, or -1.
int64_t first_wrong_row(const ag::Tensor& got, const ag::Tensor& want) {
    for (int64_t t = 0; t < want.size(0); ++t)
        if (ag::max_abs_diff(got.narrow(0, t, 1), want.narrow(0, t, 1)) > 1e-12) return t;
    return -1;
}

struct Qkv {
    ag::Tensor q, k, v;
};
Qkv random_qkv(ag::Generator& gen, int64_t T, int64_t d) {
    return {ag::Tensor::randn({T, d}, gen), ag::Tensor::randn({T, d}, gen), ag::Tensor::randn({T, d}, gen)};
}

// The wrong turns of §6.4, checked on a decoded sequence.
void diagnose_outputs(const ag::Tensor& got, const Qkv& x, int64_t W, int64_t p0) {
    const ag::Tensor& q = x.q;
    const ag::Tensor& k = x.k;
    const ag::Tensor& v = x.v;
    if (same(got, full_windowed(q, k, v, W, p0, [](int64_t p, int64_t w) { return std::min(p, w - 1); })))
        FAIL("you rotated the new token by the cache's length min(p, W-1): rotate q and k by the absolute "
             "position p (§6.4, misconception 9)");
    if (same(got, full_windowed(q, k, v, W, p0, [](int64_t p, int64_t w) { return p % (w - 1); })))
        FAIL("you rotated the new token by its slot p mod (W-1): rotate q and k by the absolute position p; the "
             "slot only says where the key is stored (§6.4)");
    if (same(got, full_windowed(q, k, v, W, p0, [](int64_t, int64_t) { return 0; })))
        FAIL("your q and k are not rotated at all: RoPE turns both by the position p (ag::rope)");
    if (same(got, full_windowed(q, k, v, W + 1, p0)))
        FAIL("your queries see W+1 tokens: W-1 cached positions and the new token itself make W");
    if (W > 2 && same(got, full_windowed(q, k, v, W - 1, p0)))
        FAIL("your queries see W-1 tokens: W-1 cached positions and the new token itself make W (did you drop one "
             "slot, or forget the new token's own key?)");
}

// What the buffer must hold after position p: the positions p-W+2 … p
// (those not yet overwritten), position r in slot r mod (W-1), its key
// rotated by r and its value as given.
void check_buffer(const ex16::RollingCache& cache, const Qkv& x, int64_t p0, int64_t p) {
    const int64_t W = cache.window;
    REQUIRE(static_cast<int64_t>(cache.positions.size()) == W - 1);
    const ag::Tensor rotated = rotate_rows(x.k, p0, W, absolute);
    for (int64_t r = std::max(p0, p - W + 2); r <= p; ++r) {
        const int64_t slot = r % (W - 1), t = r - p0;
        INFO("after decoding position " << p << ": position " << r << " belongs in slot " << slot);
        const int64_t found = cache.positions[static_cast<size_t>(slot)];
        if (found != r) {
            const auto where = std::find(cache.positions.begin(), cache.positions.end(), r);
            if (where != cache.positions.end())
                FAIL("position " << r << " is in slot " << where - cache.positions.begin() << ", not in slot r mod (W-1) = "
                     << slot << " (positions: " << grading::str(cache.positions) << ")");
            FAIL("slot " << slot << " records position " << found << ", expected " << r
                 << " (positions: " << grading::str(cache.positions) << ")");
        }
        const ag::Tensor key = cache.keys.narrow(0, slot, 1), value = cache.values.narrow(0, slot, 1);
        if (!same(key, rotated.narrow(0, t, 1))) {
            if (same(key, x.k.narrow(0, t, 1)))
                FAIL("you cached the key before rotating it: store k rotated by its absolute position, so it never "
                     "needs rotating again (§4.7)");
            if (same(key, rotate_rows(x.k.narrow(0, t, 1), slot, W, absolute)))
                FAIL("the cached key is rotated by its slot " << slot << ", not by its absolute position " << r);
            if (same(key, rotate_rows(x.k.narrow(0, t, 1), t, W, absolute)))
                FAIL("the cached key is rotated by " << t << ", the number of tokens decoded before it, not by its "
                     "absolute position " << r);
            FAIL("the key in slot " << slot << " is not position " << r << "'s key rotated by " << r);
        }
        INFO("the value in slot " << slot << " must be position " << r << "'s value (values are never rotated)");
        CHECK(same(value, x.v.narrow(0, t, 1)));
    }
}

}  // namespace

TEST_CASE("ex16 a new cache has W-1 empty slots and slot_of(p) = p mod (W-1)") {
    for (int64_t W = 2; W <= 9; ++W)
        for (int64_t d : {2, 4, 8}) {
            INFO("W = " << W << ", head_dim = " << d);
            const ex16::RollingCache cache(W, d, 10000.0);
            CHECK(cache.window == W);
            CHECK(cache.base == 10000.0);
            if (static_cast<int64_t>(cache.positions.size()) == W)
                FAIL("your buffer has W slots; the convention (nn/attention.h) is W-1: the new token's own key is "
                     "the W-th one a query sees, it is not read from the cache");
            {
                INFO("W-1 slots, every position -1 (empty); keys and values [W-1, head_dim] of zeros");
                REQUIRE(static_cast<int64_t>(cache.positions.size()) == W - 1);
                CHECK(std::all_of(cache.positions.begin(), cache.positions.end(), [](int64_t p) { return p == -1; }));
                REQUIRE(cache.keys.shape() == ag::Shape{W - 1, d});
                REQUIRE(cache.values.shape() == ag::Shape{W - 1, d});
                CHECK(ag::max_abs(cache.keys) == 0.0);
                CHECK(ag::max_abs(cache.values) == 0.0);
            }
            for (int64_t p = 0; p < 60; ++p) {
                const int64_t got = cache.slot_of(p), want = p % (W - 1);
                INFO("position " << p << ": expected slot " << want << ", got " << got);
                if (got != want && got == (p + 1) % (W - 1)) FAIL("your slot is one ahead: position p goes to p mod (W-1)");
                if (got != want && W > 2 && got == (p + W - 2) % (W - 1))
                    FAIL("your slot is one behind: position p goes to p mod (W-1)");
                if (got != want && got == p % W) FAIL("you count W slots (p mod W); the buffer has W-1: p mod (W-1)");
                CHECK(got == want);
            }
        }
}

TEST_CASE("ex16 decoding 40 tokens one by one equals full windowed attention") {
    ag::Generator gen(16);
    for (int64_t W = 2; W <= 6; ++W)
        for (int64_t d : {2, 4, 8}) {
            const int64_t T = 40;
            const Qkv x = random_qkv(gen, T, d);
            INFO("T = " << T << ", W = " << W << ", head_dim = " << d << " (W-1 = " << W - 1 << " slots)");
            ex16::RollingCache cache(W, d, 10000.0);
            const ag::Tensor got = decode(cache, x.q, x.k, x.v, 0), want = full_windowed(x.q, x.k, x.v, W, 0);
            if (!same(got, want)) {
                diagnose_outputs(got, x, W, 0);
                check_buffer(cache, x, 0, T - 1);   // names a wrongly stored key or slot
                const int64_t t = first_wrong_row(got, want);
                FAIL("the first wrong output is at position " << t << ", max |decoded - full| "
                     << ag::max_abs_diff(got, want)
                     << (t < W - 1 ? " (before the buffer is full: are empty slots, position -1, being seen?)"
                                   : " (the buffer is full from position W-1 on)"));
            }
            ref::RollingCache reference(W, d, 10000.0);
            INFO("max |decoded - full windowed attention| = " << ag::max_abs_diff(got, want));
            CHECK(same(got, want));
            CHECK(same(got, decode(reference, x.q, x.k, x.v, 0)));
        }
}

TEST_CASE("ex16 the buffer holds the last W-1 keys rotated by their absolute positions") {
    ag::Generator gen(17);
    for (int64_t W = 2; W <= 6; ++W) {
        const int64_t T = 25, d = 4;
        const Qkv x = random_qkv(gen, T, d);
        INFO("W = " << W << ", head_dim = " << d);
        ex16::RollingCache cache(W, d, 10000.0);
        for (int64_t p = 0; p < T; ++p) {
            cache.step(x.q.narrow(0, p, 1).reshape({d}), x.k.narrow(0, p, 1).reshape({d}),
                       x.v.narrow(0, p, 1).reshape({d}), p);
            check_buffer(cache, x, 0, p);
        }
    }
}

TEST_CASE("ex16 positions are absolute: decoding that starts at position 1000") {
    // A stream that starts far into a document: position p0 + t is turned
    // by (p0 + t)·θ_i and stored in slot (p0 + t) mod (W-1). (The outputs
    // alone cannot tell: RoPE's scores depend on p - j only, so they are
    // those of positions 0 … T-1; the buffer can.)
    ag::Generator gen(18);
    for (int64_t p0 : {1000, 7}) 
        for (int64_t W = 3; W <= 6; ++W) {
            const int64_t T = 20, d = 4;
            const Qkv x = random_qkv(gen, T, d);
            INFO("positions " << p0 << " … " << p0 + T - 1 << ", W = " << W);
            ex16::RollingCache cache(W, d, 10000.0);
            std::vector<ag::Tensor> rows;
            for (int64_t t = 0; t < T; ++t) {
                rows.push_back(cache.step(x.q.narrow(0, t, 1).reshape({d}), x.k.narrow(0, t, 1).reshape({d}),
                                          x.v.narrow(0, t, 1).reshape({d}), p0 + t)
                                   .reshape({1, d}));
                check_buffer(cache, x, p0, p0 + t);
            }
            const ag::Tensor got = ag::cat(rows, 0), want = full_windowed(x.q, x.k, x.v, W, p0);
            if (!same(got, want)) diagnose_outputs(got, x, W, p0);
            INFO("max |decoded - full windowed attention| = " << ag::max_abs_diff(got, want));
            CHECK(same(got, want));
        }
}
