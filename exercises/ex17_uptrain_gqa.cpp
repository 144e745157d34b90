// Exercise 17 · uptraining: MHA -> GQA by mean-pooling K/V heads (lecture
// §5.4)
//
// GQA (§5.2) lets g query heads share one K/V head: query head h reads K/V
// head floor(h / g). Can a model trained with MHA be turned into a GQA
// model? Ainslie et al. (2023): replace each group of K heads (V alike) by
// the mean of their projection matrices, then train a little more
// ("uptraining"). Query head h reads head floor(h / g) afterwards, so the
// group that shares new head j is the CONSECUTIVE heads j·g … j·g+g-1 —
// pooling heads j, j+H_new, … (strided) would merge heads whose queries
// now read different K/V heads.
//
// The weights: nn::Linear stores W [out, in]; in wk.weight [H·dh, d] head h
// is the block of rows h·dh … h·dh+dh-1. Since k = W x is linear in W, the
// mean of the heads' rows computes the mean of their keys.
//   (a) pool_kv_heads(w, dh, H_new): [H_old·dh, d] -> [H_new·dh, d], new
//       head j = (head j·g + … + head j·g+g-1) / g. Hint: a reshape to
//       [H_new, g, dh, d] puts each group on one axis. w may be a view
//       whose numbers are not contiguous: read it through engine ops or
//       contiguous().
//   (b) convert_to_gqa(mha, H_new): build nn::LanguageModel(cfg, seed) with
//       cfg = mha.config() but n_kv_heads = H_new (any seed: every number
//       is overwritten), then copy the parameters one by one:
//       named_parameters() lists both models' parameters in the same order
//       with the same names ("layers.0.attn.wk.weight", …); copy the
//       numbers (data(), numel(), contiguous()) under an ag::NoGradGuard,
//       pooling the wk and wv weights of every layer with dh =
//       cfg.head_dim() = d_model / n_heads (a K/V head has as many rows as
//       a query head, also when mha already shares its K/V heads).
//
// Signatures in ex17_uptrain_gqa.h:
//   ag::Tensor pool_kv_heads(const ag::Tensor& w, int64_t head_dim, int64_t new_heads);
//   std::unique_ptr<nn::LanguageModel> convert_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads);
//
// Graded: the shapes and the means against the reference on random weights
// (strided groups, sums, sums over √g and picking each group's first head
// are named); identity for H_new = H_old, the mean of all for H_new = 1; a w
// that is a view (not contiguous); the exceptions (groups of unequal size,
// H_new < 1 or > H_old, rows that are not whole heads); the converted
// ModernLM, from a config whose sizes, RoPE options and window differ from
// modern_lm()'s (3 layers, 6 K/V heads -> 3, 2, 1 and 6; a model that
// already shares K/V heads, 8 query heads and 4 K/V heads -> 2 and 1; one
// layer with one head): the whole config kept but n_kv_heads, every other
// parameter copied exactly, wk and wv pooled in every layer (in the
// registered parameters the layers compute with), its own storage, every
// parameter trainable and without a gradient even when the old model had
// frozen parameters and gradients, a backward through it reaching all its
// parameters and none of the old model's, changing either model leaving the
// other alone; a model whose K/V heads were already equal within each group
// gives the same logits after conversion as before.
#include "exercises/ex17_uptrain_gqa.h"

#include "exercises/not_implemented.h"

namespace ex17 {

ag::Tensor pool_kv_heads(const ag::Tensor& w, int64_t head_dim, int64_t new_heads) {
    // TODO: new head j = mean of old heads j·g … j·g+g-1
    (void)w, (void)head_dim, (void)new_heads;
    throw exercises::not_implemented("ex17 uptrain_gqa: pool_kv_heads");
}

std::unique_ptr<nn::LanguageModel> convert_to_gqa(const nn::LanguageModel& mha, int64_t n_kv_heads) {
    // TODO: a new model with n_kv_heads K/V heads; copy every parameter,
    // pooling each layer's attn.wk.weight and attn.wv.weight
    (void)mha, (void)n_kv_heads;
    throw exercises::not_implemented("ex17 uptrain_gqa: convert_to_gqa");
}

}  // namespace ex17
