// The models' initialisation (docs/models.md, "Initialisation"): PyTorch's
// layer defaults, unchanged bit for bit, and GPT-2's N(0, 0.02) for every
// weight matrix and embedding, biases 0, norms 1 (the §2.8 control of
// lesson 01).
#include <cmath>
#include <cstring>
#include <string>

#include "catch.h"

#include "nn/language_model.h"

using nn::LMConfig;

namespace {

// FNV-1a over the bits of every parameter, in registration order: two
// models with the same fingerprint hold the same numbers.
uint64_t fingerprint(const nn::Module& m) {
    uint64_t h = 1469598103934665603ull;
    for (const ag::Tensor& p : m.parameters())
        for (const double x : p.to_vector()) {
            uint64_t bits = 0;
            std::memcpy(&bits, &x, sizeof bits);
            for (int byte = 0; byte < 8; ++byte) {
                h ^= (bits >> (8 * byte)) & 0xff;
                h *= 1099511628211ull;
            }
        }
    return h;
}

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

TEST_CASE("the default initialisation is PyTorch's, the same numbers as before the init option", "[nn][init]") {
    // Fingerprints of the models built before LMConfig had an init field.
    CHECK(fingerprint(nn::LanguageModel(LMConfig::gpt(), 0)) == 0x2c26099281c6510eull);
    CHECK(fingerprint(nn::LanguageModel(LMConfig::modern_lm(), 7)) == 0x5a7588c9674aa04cull);
}

TEST_CASE("GPT-2's initialisation: weight matrices and embeddings N(0, 0.02), biases 0, norms 1", "[nn][init]") {
    for (LMConfig c : {LMConfig::gpt(), LMConfig::modern_lm()}) {
        INFO(nn::to_string(c.model));
        c.init = nn::Init::Gpt2;
        const nn::LanguageModel model(c, 3);
        int64_t drawn = 0;
        for (const auto& [name, p] : model.named_parameters()) {
            INFO(name);
            const std::vector<double> x = p.to_vector();
            if (p.dim() == 2) {
                double sum = 0, squares = 0;
                for (const double v : x) {
                    sum += v;
                    squares += v * v;
                }
                const double n = static_cast<double>(x.size()), mean = sum / n;
                const double std = std::sqrt(squares / n - mean * mean);
                // the std of n draws of N(0, σ) is σ to within about σ/√(2n): 5 of those
                CHECK(std::abs(std - 0.02) < 5 * 0.02 / std::sqrt(2 * n));
                CHECK(std::abs(mean) < 5 * 0.02 / std::sqrt(n));
                drawn += p.numel();
            } else {
                const double expected = ends_with(name, ".bias") ? 0.0 : 1.0;  // a bias, or a norm's weight
                CHECK(x == std::vector<double>(x.size(), expected));
            }
        }
        // every matrix and table: all but the norms' and biases' numbers
        int64_t vectors = 0;
        for (const auto& p : model.parameters())
            if (p.dim() < 2) vectors += p.numel();
        CHECK(drawn + vectors == model.num_parameters());
    }
    // the same seed, the same numbers; the same seed under the default draws others
    LMConfig gpt2 = LMConfig::gpt();
    gpt2.init = nn::Init::Gpt2;
    CHECK(fingerprint(nn::LanguageModel(gpt2, 3)) == fingerprint(nn::LanguageModel(gpt2, 3)));
    CHECK(fingerprint(nn::LanguageModel(gpt2, 3)) != fingerprint(nn::LanguageModel(gpt2, 4)));
    CHECK(fingerprint(nn::LanguageModel(gpt2, 0)) != fingerprint(nn::LanguageModel(LMConfig::gpt(), 0)));
}

TEST_CASE("the init option in the config's JSON, its text and its checks", "[nn][init]") {
    // The default is not written: every config and checkpoint written before the option reads the same.
    CHECK(LMConfig::gpt().to_json().find("init") == std::string::npos);
    LMConfig gpt2 = LMConfig::gpt();
    gpt2.init = nn::Init::Gpt2;
    const std::string text = gpt2.to_json();
    CHECK(text.rfind(R"(,"window":0,"init":"gpt2"})") == text.size() - 26);
    CHECK(LMConfig::from_json(text).init == nn::Init::Gpt2);
    CHECK(LMConfig::from_json(text).to_json() == text);
    std::string pytorch = text;
    pytorch.replace(pytorch.find("gpt2"), 4, "pytorch");
    CHECK(LMConfig::from_json(pytorch).to_json() == LMConfig::gpt().to_json());
    std::string unknown = text;
    unknown.replace(unknown.find("gpt2"), 4, "xavier");
    CHECK_THROWS_WITH(LMConfig::from_json(unknown), "init 'xavier': expected pytorch or gpt2");
    std::string number = text;
    number.replace(number.find("\"gpt2\""), 6, "2");
    CHECK_THROWS_WITH(LMConfig::from_json(number), "model config: 'init' is 2, not a string");

    CHECK(nn::init_from_string("gpt2") == nn::Init::Gpt2);
    CHECK(nn::to_string(nn::Init::PyTorch) == "pytorch");
    CHECK(nn::describe(gpt2) == nn::describe(LMConfig::gpt()) + ", gpt2 init");
    LMConfig broken = LMConfig::gpt();
    broken.init = static_cast<nn::Init>(7);
    CHECK_THROWS_WITH(broken.validate(), "model config: init 7 is neither pytorch nor gpt2");
}
