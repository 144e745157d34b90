#include "lessons/modern_transformer/recipe.h"

#include <stdexcept>
#include <string>

namespace lessons::modern_transformer {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

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

}  // namespace lessons::modern_transformer
