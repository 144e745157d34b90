#include "lessons/common/course.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace lessons::course {

std::string Exercise::id() const { return fmt::format("ex{:02d}", number); }
std::string Exercise::file() const { return fmt::format("exercises/{}_{}.cpp", id(), name); }

const std::vector<Exercise>& exercises() {
    static const std::vector<Exercise> all{
        {1, "rope_by_hand", "§4.4",
         "§4.4 and exercise 1: rotate q by tθ and k by jθ, counter-clockwise; the score is their dot product"},
        {2, "rope_frequencies", "§4.5",
         "§4.5 and exercise 2: θ_i = base^(-2(i-1)/d) for i = 1 … d/2; a pair's period is 2π/θ_i positions"},
        {3, "kv_cache", "§5.3, §6.4",
         "§5.3 and exercise 3: per token, K and V (2) × layers × KV heads × head dim × bytes per number"},
        {4, "attention_params", "§5.2",
         "exercise 4: W_q maps d to query heads × head dim and W_o maps that back to d; W_k and W_v map d to KV heads "
         "× head dim"},
        {5, "window_fractions", "§6.2", "exercise 5: count the scores each implementation computes, divided by T²"},
        {6, "receptive_field", "§6.3", "§6.3: each layer reaches W-1 tokens further back, so L layers reach L(W-1)"},
        {7, "wrong_rope", "§4.3", "§4.3 and exercise 7: rotations are orthogonal, RᵀR = I"},
        {8, "swiglu_hidden", "§3.2", "exercise 8: 3·d·d_ff = 2·d·4d, then round up to the multiple"},
        {9, "norms", "§3.2",
         "exercise 9: RMSNorm divides by sqrt(mean(x²) + eps); LayerNorm subtracts the mean first and uses the biased "
         "variance"},
        {10, "probe_params", "§2.8",
         "exercise 10: a linear probe trains only the head's weight and bias; full fine-tuning trains every parameter"},
        {11, "rope_apply", "§4.6",
         "§4.6: dim i with i + d/2 (half) or 2i-1 with 2i (interleaved; dims from 1); the angle is position × θ_i, "
         "positions start at 0"},
        {12, "rms_norm_backward", "§3.2",
         "§3.2: with r = 1/rms, dx = r·(g⊙dy) - x·r³·mean(g⊙dy⊙x); dg sums dy⊙x·r over rows"},
        {13, "swiglu", "§3.2", "§3.2: W_down(SiLU(W_gate x) ⊙ W_up x), SiLU(x) = x·σ(x), no biases"},
        {14, "gqa_attention", "§5.2", "§5.2: query head h uses KV head floor(h / g), g = query heads / KV heads"},
        {15, "sliding_window", "§6.1, §6.2", "§6.1: position t sees j with t - W < j ≤ t (W tokens, itself included)"},
        {16, "rolling_cache", "§6.4, §4.7",
         "§6.4: position p lives in slot p mod (W-1); keys are rotated by their absolute position, never the slot"},
        {17, "uptrain_gqa", "§5.4",
         "§5.4: the new KV head j is the mean of old heads j·g … j·g + g-1 (consecutive groups)"},
        {18, "autoencoder", "§2.4",
         "§2.4: z = h(W x + b), x' = h(W' z + b'), loss = mean squared error; stack by encoding with the trained "
         "layers"},
    };
    return all;
}

std::string to_string(Shown shown) {
    switch (shown) {
        case Shown::trained_model:
            return "shown on a trained model";
        case Shown::computed:
            return "computed";
        case Shown::stated:
            return "stated";
    }
    return {};
}

const std::vector<Topic>& topics() {
    using S = Shown;
    static const std::vector<Topic> all{
        // §0.1 learning goals
        {"learning goal 1",
         "pre-training and fine-tuning defined (unsupervised and supervised), and why pre-training on cheap data "
         "then fine-tuning on scarce labels works, and where full fine-tuning hurts",
         "01_pretrain_finetune", "§2.8", S::trained_model, 10},
        {"learning goal 2", "the modern LLM pipeline: pre-training → mid-training → post-training",
         "01_pretrain_finetune", "§2.7", S::stated, 0},
        {"learning goal 3",
         "the changes open Transformers made after 2017: RMSNorm, SwiGLU, no biases, RoPE, GQA/MQA, "
         "sliding windows",
         "05_modern_transformer", "§3.1", S::stated, 8},
        {"learning goal 4",
         "RoPE derived: rotating q and k by their absolute positions gives scores that depend on the distance only; "
         "why 2-D blocks, why many frequencies; the efficient implementation",
         "02_rope", "§4.4", S::computed, 1},
        {"learning goal 5",
         "GQA's formula, MHA and MQA as its two ends, the KV cache it saves, uptraining MHA into GQA", "03_gqa", "§5.2",
         S::computed, 4},
        {"learning goal 6",
         "sliding-window attention: its mask, three implementations and their cost, the receptive field of stacked "
         "layers, Mistral's rolling cache",
         "04_sliding_window", "§6.1", S::computed, 15},
        {"learning goal 7", "relative position encodings are not better on every task, shown by an experiment",
         "05_modern_transformer", "§7.3", S::trained_model, 0},
        // §9 pitfalls (§9.2: the section's second item)
        {"pitfall 1", "\"fine-tuning means retraining every parameter, the more the better\"", "01_pretrain_finetune",
         "§2.8", S::trained_model, 10},
        {"pitfall 2", "\"RoPE adds a position vector to the input\": it rotates q and k in every layer, and not v",
         "02_rope", "§9.2", S::trained_model, 11},
        {"pitfall 3", "\"RoPE rotates by the relative position\": each vector turns by its own absolute position",
         "02_rope", "§4.3", S::computed, 7},
        {"pitfall 4", "\"the two RoPE pairings are different\": equivalent, but a checkpoint needs its own", "02_rope",
         "§9.4", S::trained_model, 11},
        {"pitfall 5", "\"GQA is mainly there to save parameters\": it saves the KV cache and its bandwidth", "03_gqa",
         "§5.3", S::computed, 3},
        {"pitfall 6",
         "\"MQA is the cheapest, so the best\": its quality and stability cost more; GQA is the compromise", "03_gqa",
         "§5.4", S::stated, 0},
        {"pitfall 7", "\"the naive sliding window saves compute\": masking a full matrix is still O(T²)",
         "04_sliding_window", "§6.2", S::computed, 5},
        {"pitfall 8", "\"a sliding window cannot see beyond the window\": L layers reach L(W-1), ever more weakly",
         "04_sliding_window", "§6.3", S::computed, 6},
        {"pitfall 9", "\"after the cache is cut, a new token's position is the cache's length\"", "04_sliding_window",
         "§6.4", S::computed, 16},
        {"pitfall 10", "\"relative position encodings always extrapolate better\"", "05_modern_transformer", "§7.3",
         S::trained_model, 0},
        // §10 exercises
        {"exercise 1", "RoPE by hand: the score of q at t and k at j depends on t - j", "02_rope", "§4.4", S::computed,
         1},
        {"exercise 2", "RoPE's fastest and slowest pairs, and a larger base for long contexts", "02_rope", "§4.5",
         S::computed, 2},
        {"exercise 3", "Mistral's KV cache per token, with and without the rolling buffer", "03_gqa", "§5.3",
         S::computed, 3},
        {"exercise 4", "attention parameters of MHA and GQA at d = 4096", "03_gqa", "§5.2", S::computed, 4},
        {"exercise 5", "what share of the T² scores each sliding-window implementation computes", "04_sliding_window",
         "§6.2", S::computed, 5},
        {"exercise 6", "the receptive field L(W-1) of Mistral 7B and of a 2-layer window-4 model", "04_sliding_window",
         "§6.3", S::computed, 6},
        {"exercise 7", "the \"wrong\" RoPE: one rotation on both q and k cancels", "02_rope", "§4.3", S::computed, 7},
        {"exercise 8", "SwiGLU's hidden size that matches the GELU MLP's parameters", "05_modern_transformer", "§3.2",
         S::computed, 8},
        {"exercise 9", "RMSNorm and LayerNorm of x = [1, 2, 3, 4]", "05_modern_transformer", "§3.2", S::computed, 9},
        {"exercise 10", "why the linear probe beats full fine-tuning with 16 labels", "01_pretrain_finetune", "§2.8",
         S::trained_model, 10},
    };
    return all;
}

const std::vector<LessonGuide>& lessons() {
    static const std::vector<LessonGuide> all{
        {"00_autograd_recap", "§1", "lessons/autograd_recap/"},
        {"01_pretrain_finetune", "§2", "lessons/pretrain_finetune/"},
        {"02_rope", "§4", "lessons/rope/"},
        {"03_gqa", "§5", "lessons/gqa/"},
        {"04_sliding_window", "§6", "lessons/sliding_window/"},
        {"05_modern_transformer", "§3, §7", "lessons/modern_transformer/"},
    };
    return all;
}

namespace {

// "§2.3" -> {2, 3}; "§9" -> {9, -1}; anything else -> {-1, -1}.
struct Number {
    int chapter = -1, sub = -1;
};
Number number_of(const std::string& s) {
    Number n;
    if (s.rfind("§", 0) != 0) return n;
    const char* p = s.c_str() + std::string("§").size();
    char* end = nullptr;
    n.chapter = static_cast<int>(std::strtol(p, &end, 10));
    if (end == p) return Number{};
    if (*end == '.') n.sub = static_cast<int>(std::strtol(end + 1, nullptr, 10));
    return n;
}

}  // namespace

bool covers(const std::string& part_sections, const std::string& section) {
    const Number want = number_of(section);
    if (want.chapter < 0) return false;
    for (size_t start = 0; start < part_sections.size();) {
        const size_t comma = std::min(part_sections.find(',', start), part_sections.size());
        std::string item = part_sections.substr(start, comma - start);
        start = comma + 1;
        while (start < part_sections.size() && part_sections[start] == ' ') ++start;
        // "§2.3-2.5": from §2.3 to §2.5; "§2.3": itself.
        const size_t dash = item.find('-');
        const Number from = number_of(item.substr(0, dash));
        Number to = from;
        if (dash != std::string::npos) to = number_of("§" + item.substr(dash + 1));
        if (from.chapter != want.chapter || to.chapter != want.chapter) continue;
        if (want.sub < 0 || from.sub < 0) {
            if (want.sub < 0 && from.sub < 0) return true;
            continue;
        }
        if (from.sub <= want.sub && want.sub <= to.sub) return true;
    }
    return false;
}

std::vector<Exercise> exercises_for(const std::string& part_sections) {
    std::vector<Exercise> found;
    for (const Exercise& e : exercises())
        for (size_t start = 0; start < e.section.size();) {
            const size_t end = std::min(e.section.find(',', start), e.section.size());
            if (covers(part_sections, e.section.substr(start, end - start))) {
                found.push_back(e);
                break;
            }
            start = e.section.find_first_not_of(' ', end + 1);
        }
    return found;
}

const LessonGuide& lesson_of(const Exercise& e) {
    const std::string first = e.section.substr(0, e.section.find(','));
    const std::string chapter = first.substr(0, first.find('.'));
    for (const LessonGuide& l : lessons())
        if (covers(l.sections, chapter)) return l;
    throw std::logic_error(fmt::format("no lesson follows {}, the section of exercise {}", chapter, e.id()));
}

}  // namespace lessons::course
