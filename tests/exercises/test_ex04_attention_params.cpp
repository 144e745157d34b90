// Exercise 4 · GQA's parameters (§5.2): the lecture's counts, heads whose
// total width n_heads·head_dim is not d, the edge cases (one head, MQA,
// MHA), the reference, and real attention modules. Diagnoses the usual
// wrong turns: K and V with every query head, W_o forgotten or sized by the
// KV heads, K and V as one matrix, W_q and W_o taken as d × d, biases,
// W_q sized by the KV heads, W_v forgotten, W_k and W_v sized by the group
// size, heads of d / n_heads, d extra weights, 32-bit overflow.
#include <functional>
#include <string>
#include <vector>

#include "exercises/ex04_attention_params.h"
#include "grading_checks.h"
#include "nn/attention.h"
#include "reference/ex04_attention_params.h"

namespace ref = ex04_reference;

namespace {

// What attention_params returns under a wrong idea, and what it is. With
// q = n_heads·head_dim and kv = n_kv_heads·head_dim the right count is
// W_q (q × d) + W_k, W_v (kv × d each) + W_o (d × q).
struct WrongCount {
    std::function<int64_t(int64_t d, int64_t q, int64_t kv, int64_t heads, int64_t head_dim)> count;
    const char* diagnosis;
};

const std::vector<WrongCount>& wrong_counts() {
    static const std::vector<WrongCount> all = {
        {[](int64_t d, int64_t q, int64_t, int64_t, int64_t) { return 4 * d * q; },
         "that is MHA's count: W_k and W_v have n_kv_heads heads of head_dim (kv·d_h rows each), only W_q and "
         "W_o have n_heads"},
        {[](int64_t d, int64_t q, int64_t kv, int64_t, int64_t) { return d * q + 2 * d * kv; },
         "W_o is missing: the concatenated heads (n_heads·head_dim numbers) are projected back to d"},
        {[](int64_t d, int64_t q, int64_t kv, int64_t, int64_t) { return d * q + 2 * d * kv + kv * d; },
         "your W_o has n_kv_heads·head_dim inputs: it reads the attention outputs, one per QUERY head "
         "(n_heads·head_dim numbers), even when groups of them share K and V"},
        {[](int64_t d, int64_t q, int64_t kv, int64_t, int64_t) { return d * q + d * kv + q * d; },
         "W_k and W_v are two matrices of kv·d_h × d each: query heads share the KV heads, but K and V are "
         "still separate"},
        {[](int64_t d, int64_t, int64_t kv, int64_t, int64_t) { return 2 * d * d + 2 * d * kv; },
         "your W_q and W_o are d × d: they are (n_heads·head_dim) × d and d × (n_heads·head_dim), and "
         "n_heads·head_dim need not equal d"},
        {[](int64_t d, int64_t q, int64_t kv, int64_t, int64_t) { return 2 * d * q + 2 * d * kv + q + 2 * kv + d; },
         "you counted biases: the layer has none (§3.2), only the four weight matrices"},
        {[](int64_t d, int64_t q, int64_t kv, int64_t, int64_t) { return 3 * d * kv + q * d; },
         "your W_q has n_kv_heads·head_dim outputs: every query head keeps its own query projection (W_q is "
         "(n_heads·head_dim) × d), only K and V are shared by a group"},
        {[](int64_t d, int64_t q, int64_t kv, int64_t, int64_t) { return 2 * d * q + d * kv; },
         "W_v is missing: the values are a projection of x too (V = W_v x, kv·d_h × d), even though RoPE only "
         "rotates q and k"},
        {[](int64_t d, int64_t q, int64_t kv, int64_t heads, int64_t head_dim) {
             const int64_t group = heads / (kv / head_dim);
             return 2 * d * q + 2 * d * group * head_dim;
         },
         "your W_k and W_v have g = n_heads / n_kv_heads heads, the group size (query heads per KV head): they "
         "have n_kv_heads heads of head_dim"},
        {[](int64_t d, int64_t, int64_t kv, int64_t heads, int64_t head_dim) {
             const int64_t split = d / heads, kv_heads = kv / head_dim;
             return 2 * d * heads * split + 2 * d * kv_heads * split;
         },
         "your heads are d / n_heads wide: the head width is head_dim, whatever d is (n_heads·head_dim need not "
         "equal d)"},
        {[](int64_t d, int64_t q, int64_t kv, int64_t, int64_t) { return 2 * d * q + 2 * d * kv + d; },
         "you counted d more weights than the four matrices (a norm's gains?): the layer is W_q, W_k, W_v and "
         "W_o only"},
    };
    return all;
}

void check_params(int64_t d, int64_t heads, int64_t kv_heads, int64_t head_dim) {
    const int64_t got = ex04::attention_params(d, heads, kv_heads, head_dim),
                  want = ref::attention_params(d, heads, kv_heads, head_dim);
    const int64_t q = heads * head_dim, kv = kv_heads * head_dim;
    INFO("attention_params(d " << d << ", " << heads << " query heads, " << kv_heads << " KV heads, head dim "
                               << head_dim << "): expected W_q " << q << "×" << d << " + W_k, W_v " << kv << "×" << d
                               << " + W_o " << d << "×" << q << " = " << want << ", got " << got);
    if (got == want) return;
    if (want > INT32_MAX && got == static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(want))))
        FAIL("the count overflowed 32 bits (" << want << " > 2^31 - 1): count in int64_t");
    // Every wrong idea that gives this count. Some coincide at MHA (W_o
    // missing, K and V as one matrix, W_v missing all count three d × d
    // matrices): then a GQA layer whose heads are not d wide (d = 96, 6
    // heads of 10, 2 KV heads) tells them apart, as far as numbers can (K and
    // V as one matrix and W_v missing always count the same).
    std::vector<const WrongCount*> matching;
    for (const WrongCount& wrong : wrong_counts()) {
        const int64_t wrong_count = wrong.count(d, q, kv, heads, head_dim);
        if (wrong_count != want && got == wrong_count) matching.push_back(&wrong);
    }
    if (matching.size() > 1) {
        const int64_t probe = ex04::attention_params(96, 6, 2, 10);
        std::vector<const WrongCount*> still;
        for (const WrongCount* wrong : matching)
            if (wrong->count(96, 60, 20, 6, 10) == probe) still.push_back(wrong);
        if (!still.empty()) matching = still;
    }
    std::string diagnoses;
    for (const WrongCount* wrong : matching)
        diagnoses += (diagnoses.empty() ? "" : "; or ") + std::string(wrong->diagnosis);
    if (!diagnoses.empty()) FAIL(diagnoses);
    FAIL("count W_q, W_k, W_v and W_o: rows × columns of each");
}

}  // namespace

TEST_CASE("ex04 the lecture's counts") {
    {
        INFO("MHA at d = 4096, 32 heads of 128: four 4096 × 4096 matrices = 67,108,864");
        check_params(4096, 32, 32, 128);
        CHECK(ex04::attention_params(4096, 32, 32, 128) == 67108864);
    }
    {
        INFO("GQA with 8 KV heads: W_k and W_v are 1024 × 4096, 41,943,040 in all");
        check_params(4096, 32, 8, 128);
        CHECK(ex04::attention_params(4096, 32, 8, 128) == 41943040);
    }
    {
        INFO("§5.2: d = 32, 8 heads of 4: MHA 4096, MQA 2304");
        check_params(32, 8, 8, 4);
        check_params(32, 8, 1, 4);
        CHECK(ex04::attention_params(32, 8, 1, 4) == 2304);
    }
}

TEST_CASE("ex04 the edges: one head, MQA, MHA, and heads wider or narrower than d") {
    // One head of d (a single-head attention layer: 4d²), one KV head for
    // many query heads (MQA), every head its own K and V (MHA).
    for (const int64_t d : {1, 7, 64}) check_params(d, 1, 1, d);
    for (const int64_t heads : {2, 5, 16}) {
        check_params(80, heads, 1, 80 / heads);
        check_params(80, heads, heads, 80 / heads);
    }
    {
        // Nothing ties n_heads·head_dim to d: 16 heads of 256 on d = 3072
        // (as in Gemma 7B) are 4096 wide, 8 heads of 16 on d = 512 are 128.
        INFO("n_heads·head_dim ≠ d: W_q is (n_heads·head_dim) × d, W_o is d × (n_heads·head_dim)");
        check_params(3072, 16, 16, 256);
        CHECK(ex04::attention_params(3072, 16, 16, 256) == 4 * 3072 * 4096);
        check_params(512, 8, 2, 16);
        check_params(512, 8, 8, 16);
    }
    {
        // A very wide layer has more weights than a 32-bit int holds.
        INFO(
            "d = 32768, 256 heads of 128: MHA has 4 × 32768² = 4,294,967,296 weights (more than 2^31), GQA with 32 "
            "KV heads 2,415,919,104");
        check_params(32768, 256, 256, 128);
        check_params(32768, 256, 32, 128);
    }
}

TEST_CASE("ex04 equals the reference on random shapes") {
    grading::Random rng(5);
    for (int n = 0; n < 200; ++n) {
        const int64_t kv = rng.integer(1, 8), group = rng.integer(1, 8), dh = rng.integer(1, 64),
                      d = rng.integer(1, 512);
        check_params(d, kv * group, kv, dh);  // n_kv_heads divides n_heads (§5.2)
    }
}

TEST_CASE("ex04 equals the parameter count of real nn::Attention modules") {
    struct Shape {
        int64_t d, heads;
    };
    for (const Shape shape : {Shape{32, 8}, Shape{48, 6}, Shape{16, 1}, Shape{64, 4}})
        for (int64_t kv = 1; kv <= shape.heads; ++kv) {
            if (shape.heads % kv) continue;
            nn::LMConfig cfg = nn::LMConfig::modern_lm();
            cfg.d_model = shape.d;
            cfg.n_heads = shape.heads;
            cfg.n_kv_heads = kv;
            ag::Generator gen(0);
            const nn::ModernAttention attention(cfg, gen);
            const int64_t got = ex04::attention_params(shape.d, shape.heads, kv, cfg.head_dim());
            INFO("nn::Attention with " << shape.heads << " query heads and " << kv << " KV heads of " << cfg.head_dim()
                                       << " at d = " << shape.d << " has " << attention.num_parameters()
                                       << " parameters; you count " << got);
            CHECK(got == attention.num_parameters());
        }
}
