"""GPT and ModernLM in PyTorch, exactly as docs/models.md fixes them.

This is the reference the C++ engine is compared against, so every detail
that changes a number follows docs/models.md: parameter names and shapes (the
checkpoint names), PyTorch's default initialisation, exact GELU, RMSNorm
with eps 1e-5, RoPE with the "half" pairing, grouped-query attention in
which query head h reads KV head h // g, and causal (optionally windowed)
attention written out with explicit ops (PyTorch 1.13 has no
F.scaled_dot_product_attention).

Shapes: B = batch, T = positions, d = model width, H = heads, dh = d / H.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

V = 68       # vocabulary (docs/farm_language.md)
T_MAX = 40   # context length


# ---------------------------------------------------------------- attention
def causal_mask(T, window=0):
    """[T, T] bool, True where query t may see key j: j <= t and, with a
    window W > 0, also j > t - W."""
    t = torch.arange(T).unsqueeze(1)
    j = torch.arange(T).unsqueeze(0)
    visible = j <= t
    if window > 0:
        visible &= j > t - window
    return visible


def attend(q, k, v, visible):
    """softmax(q kᵀ / sqrt(dh)) v over the visible keys.

    q: [B, H, T, dh]; k, v: [B, H, T, dh] (already expanded to H heads);
    visible: [T, T] bool. Right padding needs no extra mask: the attention
    is causal, so a real token never looks at the padding after it.
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])   # [B, H, T, T]
    scores = scores.masked_fill(~visible, float("-inf"))
    return F.softmax(scores, dim=-1) @ v


def split_heads(x, n):
    """[B, T, n*dh] -> [B, n, T, dh]: head h is columns h*dh .. (h+1)*dh-1."""
    B, T, C = x.shape
    return x.view(B, T, n, C // n).transpose(1, 2)


def merge_heads(x):
    """[B, H, T, dh] -> [B, T, H*dh], the inverse of split_heads."""
    B, H, T, dh = x.shape
    return x.transpose(1, 2).reshape(B, T, H * dh)


# ---------------------------------------------------------------------- GPT
class GPTAttention(nn.Module):
    """Multi-head causal self-attention with one fused q/k/v projection."""

    def __init__(self, d, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d, 3 * d)     # rows: the q, k, v blocks in order
        self.proj = nn.Linear(d, d)
        self.register_buffer("visible", causal_mask(T_MAX), persistent=False)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (split_heads(a, self.n_heads) for a in (q, k, v))
        y = attend(q, k, v, self.visible[:T, :T])
        return self.proj(merge_heads(y))


class GPTMLP(nn.Module):
    """fc -> exact GELU, 0.5 x (1 + erf(x / sqrt 2)) -> proj."""

    def __init__(self, d, hidden):
        super().__init__()
        self.fc = nn.Linear(d, hidden)
        self.proj = nn.Linear(hidden, d)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))     # F.gelu is exact by default


class GPTBlock(nn.Module):
    """Pre-norm block: x += attn(ln1(x)); x += mlp(ln2(x))."""

    def __init__(self, d, n_heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d, eps=1e-5)     # biased variance, as in the spec
        self.attn = GPTAttention(d, n_heads)
        self.ln2 = nn.LayerNorm(d, eps=1e-5)
        self.mlp = GPTMLP(d, 4 * d)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """Lecture 2's GPT: d=64, 2 layers, 4 heads, learned positions, untied
    output head without bias. 111,360 parameters."""

    def __init__(self, d=64, n_layers=2, n_heads=4):
        super().__init__()
        self.tok_emb = nn.Embedding(V, d)        # N(0, 1), PyTorch's default
        self.pos_emb = nn.Embedding(T_MAX, d)
        self.layers = nn.ModuleList(GPTBlock(d, n_heads) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        self.head = nn.Linear(d, V, bias=False)

    def forward(self, ids):
        """ids [B, T] -> logits [B, T, V]."""
        T = ids.shape[1]
        x = self.tok_emb(ids) + self.pos_emb.weight[:T]
        for layer in self.layers:
            x = layer(x)
        return self.head(self.ln_f(x))


# ----------------------------------------------------------------- ModernLM
class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) * weight (no bias, no mean subtraction)."""

    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(dh, T=T_MAX, base=10000.0):
    """cos and sin of m θ_i, [T, dh/2], with θ_i = base^(-2i/dh)."""
    theta = base ** (-torch.arange(0, dh, 2, dtype=torch.float64) / dh)   # [dh/2]
    angle = torch.arange(T, dtype=torch.float64).unsqueeze(1) * theta     # [T, dh/2]
    return angle.cos(), angle.sin()


def apply_rope(x, cos, sin, pairing="half"):
    """Rotate each pair of dimensions of x [B, H, T, dh] by the angle m θ_i.

    "half" (Llama / GPT-NeoX): dimension i pairs with i + dh/2;
    "interleaved" (RoFormer): dimension 2i pairs with 2i + 1. For a pair
    (a, b): a' = a cos - b sin, b' = b cos + a sin.
    """
    if pairing == "half":
        a, b = x.chunk(2, dim=-1)
        return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, b * cos + a * sin], dim=-1).flatten(-2)


class GQAttention(nn.Module):
    """Grouped-query attention: n_heads query heads share n_kv_heads key/value
    heads; query head h reads KV head h // g, g = n_heads / n_kv_heads
    (n_kv_heads = n_heads is ordinary multi-head attention, 1 is MQA)."""

    def __init__(self, d, n_heads, n_kv_heads, rope, pairing, window):
        super().__init__()
        assert n_heads % n_kv_heads == 0
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.dh = d // n_heads
        self.rope, self.pairing = rope, pairing
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, n_kv_heads * self.dh, bias=False)
        self.wv = nn.Linear(d, n_kv_heads * self.dh, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.register_buffer("visible", causal_mask(T_MAX, window), persistent=False)
        cos, sin = rope_tables(self.dh)
        # kept in float64 (exact for a float64 model), cast to x's dtype at use
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, x):
        T = x.shape[1]
        q = split_heads(self.wq(x), self.n_heads)          # [B, H, T, dh]
        k = split_heads(self.wk(x), self.n_kv_heads)       # [B, Hkv, T, dh]
        v = split_heads(self.wv(x), self.n_kv_heads)
        if self.rope:                                      # q and k only, never v
            cos, sin = self.cos[:T].to(x.dtype), self.sin[:T].to(x.dtype)
            q = apply_rope(q, cos, sin, self.pairing)
            k = apply_rope(k, cos, sin, self.pairing)
        g = self.n_heads // self.n_kv_heads                # KV heads 0,0,1,1,...
        k = k.repeat_interleave(g, dim=1)                  # so head h gets h // g
        v = v.repeat_interleave(g, dim=1)
        y = attend(q, k, v, self.visible[:T, :T])
        return self.wo(merge_heads(y))


class SwiGLU(nn.Module):
    """w_down(silu(w_gate x) ⊙ w_up x), silu(z) = z · sigmoid(z)."""

    def __init__(self, d, hidden):
        super().__init__()
        self.w_gate = nn.Linear(d, hidden, bias=False)
        self.w_up = nn.Linear(d, hidden, bias=False)
        self.w_down = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class ModernBlock(nn.Module):
    """Pre-norm block: x += attn(attn_norm(x)); x += mlp(mlp_norm(x))."""

    def __init__(self, d, n_heads, n_kv_heads, hidden, rope, pairing, window):
        super().__init__()
        self.attn_norm = RMSNorm(d)
        self.attn = GQAttention(d, n_heads, n_kv_heads, rope, pairing, window)
        self.mlp_norm = RMSNorm(d)
        self.mlp = SwiGLU(d, hidden)

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


def sinusoidal_table(T, d):
    """Vaswani: PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(...)."""
    p = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    div = 10000.0 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    pe = torch.zeros(T, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(p / div)
    pe[:, 1::2] = torch.cos(p / div)
    return pe   # float64, cast to the activations' dtype at use


class ModernLM(nn.Module):
    """Llama-style LM: RMSNorm, RoPE, grouped-query attention, SwiGLU, no
    biases, untied head. Defaults (d=64, 2 layers, 4 query heads, 2 KV heads,
    SwiGLU hidden 172, RoPE "half", full window): 99,648 parameters.

    positions: "rope" | "learned" | "sinusoidal" | "none".
    """

    def __init__(self, d=64, n_layers=2, n_heads=4, n_kv_heads=2, hidden=172,
                 positions="rope", pairing="half", window=0):
        super().__init__()
        self.positions = positions
        self.tok_emb = nn.Embedding(V, d)
        if positions == "learned":
            self.pos_emb = nn.Embedding(T_MAX, d)
        elif positions == "sinusoidal":
            self.register_buffer("pe", sinusoidal_table(T_MAX, d), persistent=False)
        self.layers = nn.ModuleList(
            ModernBlock(d, n_heads, n_kv_heads, hidden, positions == "rope", pairing, window)
            for _ in range(n_layers))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, V, bias=False)

    def forward(self, ids):
        """ids [B, T] -> logits [B, T, V]."""
        T = ids.shape[1]
        x = self.tok_emb(ids)
        if self.positions == "learned":
            x = x + self.pos_emb.weight[:T]
        elif self.positions == "sinusoidal":
            x = x + self.pe[:T].to(x.dtype)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


# ------------------------------------------------------------------ helpers
def count_parameters(model):
    return sum(p.numel() for p in model.parameters())


def build(name, dtype=torch.float32, seed=0):
    """The lesson model `name` ("gpt" | "modern_lm") with PyTorch's default
    initialisation from torch.manual_seed(seed), converted to dtype.
    Asserts the parameter counts of docs/models.md."""
    torch.manual_seed(seed)
    if name == "gpt":
        model, expected = GPT(), 111_360
    elif name == "modern_lm":
        model, expected = ModernLM(), 99_648
    else:
        raise ValueError(f"unknown model {name!r}")
    n = count_parameters(model)
    assert n == expected, f"{name}: {n} parameters, docs/models.md says {expected}"
    return model.to(dtype)
