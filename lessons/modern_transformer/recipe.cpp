#include "lessons/modern_transformer/recipe.h"

#include <stdexcept>
#include <string>

#include "nn/language_model.h"

namespace lessons::modern_transformer {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

bool same_split(const nn::ParamCount& a, const nn::ParamCount& b) {
    return a.embeddings == b.embeddings && a.attention == b.attention && a.ffn == b.ffn && a.norms == b.norms &&
           a.head == b.head;
}

}  // namespace

nn::ParamCount count_module_parameters(const nn::Module& model) {
    nn::ParamCount n;
    for (const auto& [name, t] : model.named_parameters()) {
        if (starts_with(name, "tok_emb.") || starts_with(name, "pos_emb."))
            n.embeddings += t.numel();
        else if (starts_with(name, "head."))
            n.head += t.numel();
        else if (contains(name, ".attn."))
            n.attention += t.numel();
        else if (contains(name, ".mlp."))
            n.ffn += t.numel();
        else if (contains(name, "norm") || contains(name, "ln"))
            n.norms += t.numel();
        else
            throw std::logic_error("count_module_parameters: no group for parameter '" + name + "'");
    }
    return n;
}

RecipeCounts count_recipes() {
    const nn::LMConfig modern_cfg = nn::LMConfig::modern_lm(), gpt_cfg = nn::LMConfig::gpt();
    const nn::LanguageModel modern(modern_cfg, 0), gpt(gpt_cfg, 0);
    RecipeCounts n;
    n.modern_module = count_module_parameters(modern);
    n.gpt_module = count_module_parameters(gpt);
    n.modern_formula = nn::count_parameters(modern_cfg);
    n.gpt_formula = nn::count_parameters(gpt_cfg);
    n.llama3_8b = nn::count_parameters(nn::llama3_8b());
    n.modern_total = modern.num_parameters();
    n.gpt_total = gpt.num_parameters();
    n.module_equals_formula = same_split(n.modern_module, n.modern_formula) &&
                              same_split(n.gpt_module, n.gpt_formula) && n.modern_module.total() == n.modern_total &&
                              n.gpt_module.total() == n.gpt_total;
    return n;
}

int64_t gelu_mlp_weights(int64_t d) { return 2 * d * 4 * d; }

double swiglu_matching_hidden(int64_t d) { return 8.0 * static_cast<double>(d) / 3.0; }

int64_t swiglu_hidden_rounded(int64_t d, int64_t multiple) {
    return (8 * d + 3 * multiple - 1) / (3 * multiple) * multiple;  // ceil(8d / 3m) · m
}

std::array<bool, kRecipeChanges.size()> recipe_uses(const nn::LMConfig& config) {
    const bool modern = config.model == nn::ModelKind::ModernLM;
    return {modern, modern, modern, config.pos == nn::PosEncoding::Rope,
            config.n_kv_heads<config.n_heads, config.window> 0};
}

}  // namespace lessons::modern_transformer
