#include "nn/attention.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace nn {

GptAttention::GptAttention(const LMConfig& cfg, ag::Generator& gen) : Attention(cfg) {
    const int64_t d = cfg.d_model, kv = cfg.n_kv_heads * cfg.head_dim();
    qkv = register_module("qkv", std::make_shared<Linear>(LinearOptions(d, d + 2 * kv), gen));
    proj = register_module("proj", std::make_shared<Linear>(LinearOptions(d, d), gen));
}

// Where q is needed for other rows than k and v (forward_rows: queries of
// chosen rows only) or both are cached apart (decoding): products with row
// blocks of qkv.weight (views, no copy) give contiguous q, k and v.
Tensor GptAttention::project_q(const Tensor& x) const {
    const int64_t d = cfg_.d_model;
    return ag::linear(x, qkv->weight.narrow(0, 0, d), qkv->bias.narrow(0, 0, d));
}

std::pair<Tensor, Tensor> GptAttention::project_kv(const Tensor& x) const {
    const int64_t d = cfg_.d_model, kv = cfg_.n_kv_heads * cfg_.head_dim();
    return {ag::linear(x, qkv->weight.narrow(0, d, kv), qkv->bias.narrow(0, d, kv)),
            ag::linear(x, qkv->weight.narrow(0, d + kv, kv), qkv->bias.narrow(0, d + kv, kv))};
}

// Training and evaluation: every row needs its q, k and v, so the whole
// qkv product is made at once and attention reads the three blocks of
// each row where they are (GPT has no RoPE to turn q and k by: its
// configuration allows learned positions only). Its gradient comes back as
// one [N, d + 2·kv] tensor: one product for dX and one for dW, where three
// narrowed products need three of each and two sums.
Tensor GptAttention::attend_packed(const Tensor& x, const Packing& packing, Tensor* weights) const {
    return ag::attention_packed_qkv(qkv->forward(x), cfg_.n_heads, cfg_.n_kv_heads, packing.starts, cfg_.window,
                                    weights);
}

ModernAttention::ModernAttention(const LMConfig& cfg, ag::Generator& gen) : Attention(cfg) {
    const int64_t d = cfg.d_model, kv = cfg.n_kv_heads * cfg.head_dim();
    wq = register_module("wq", std::make_shared<Linear>(LinearOptions(d, d).bias(false), gen));
    wk = register_module("wk", std::make_shared<Linear>(LinearOptions(d, kv).bias(false), gen));
    wv = register_module("wv", std::make_shared<Linear>(LinearOptions(d, kv).bias(false), gen));
    wo = register_module("wo", std::make_shared<Linear>(LinearOptions(d, d).bias(false), gen));
}

Packing Packing::from_starts(std::vector<int64_t> starts) {
    if (starts.empty() || starts.front() != 0) throw std::invalid_argument("Packing: starts must begin at 0");
    Packing p;
    for (size_t b = 0; b + 1 < starts.size(); ++b) {
        if (starts[b + 1] < starts[b])
            throw std::invalid_argument(
                fmt::format("Packing: starts decrease at {} ({} > {})", b, starts[b], starts[b + 1]));
        for (int64_t i = starts[b]; i < starts[b + 1]; ++i) p.positions.push_back(i - starts[b]);
    }
    p.starts = std::move(starts);
    return p;
}

Packing Packing::uniform(int64_t B, int64_t T) {
    std::vector<int64_t> starts;
    for (int64_t b = 0; b <= B; ++b) starts.push_back(b * T);
    return from_starts(std::move(starts));
}

Tensor Attention::split_heads(const Tensor& t, int64_t heads) const {
    Shape s = t.shape();
    s.back() = heads;
    s.push_back(cfg_.head_dim());
    return t.reshape(s);
}

// §4: q and k are turned by their positions, never v.
Tensor Attention::rotate(const Tensor& t, const std::vector<int64_t>& positions) const {
    return cfg_.pos == PosEncoding::Rope ? ag::rope(t, positions, cfg_.rope_base, cfg_.rope_pairing) : t;
}

Tensor Attention::merge_heads(const Tensor& t) const {
    Shape s(t.shape().begin(), t.shape().end() - 1);
    s.back() = cfg_.d_model;
    return t.reshape(s);
}

static void check_packed(const Tensor& x, const Packing& packing, int64_t d) {
    if (x.dim() != 2 || x.size(1) != d || x.size(0) != packing.rows())
        throw std::invalid_argument(fmt::format("Attention: input {} is not [N, {}] with N = {} packed rows",
                                                ag::shape_str(x.shape()), d, packing.rows()));
}

Tensor Attention::forward(const Tensor& x, const Packing& packing, Tensor* weights) const {
    check_packed(x, packing, cfg_.d_model);
    return project_out(merge_heads(attend_packed(x, packing, weights)));
}

Tensor Attention::attend_packed(const Tensor& x, const Packing& packing, Tensor* weights) const {
    const auto [k, v] = project_kv(x);
    const Tensor q = rotate(split_heads(project_q(x), cfg_.n_heads), packing.positions);
    return ag::attention_packed(q, rotate(split_heads(k, cfg_.n_kv_heads), packing.positions),
                                split_heads(v, cfg_.n_kv_heads), packing.starts, cfg_.window, weights);
}

static Tensor index_tensor(const std::vector<double>& rows) {
    return Tensor::from({static_cast<int64_t>(rows.size())}, rows);
}

RowSelection RowSelection::of(const Packing& packing, std::vector<int64_t> rows) {
    struct Lists {
        std::vector<double> members, key_rows;
    };
    std::map<int64_t, Lists> by_keys;  // L -> its rows
    RowSelection s;
    for (size_t i = 0; i < rows.size(); ++i) {
        const int64_t r = rows[i];
        if (r < 0 || r >= packing.rows())
            throw std::invalid_argument(
                fmt::format("RowSelection: row {} is outside the {} packed rows", r, packing.rows()));
        const int64_t p = packing.positions[static_cast<size_t>(r)];
        Lists& group = by_keys[p + 1];
        group.members.push_back(static_cast<double>(i));
        for (int64_t k = r - p; k <= r; ++k) group.key_rows.push_back(static_cast<double>(k));
        s.positions.push_back(p);
    }
    std::vector<double> order(rows.size());
    size_t place = 0;
    for (const auto& [L, group] : by_keys) {
        for (double i : group.members) order[static_cast<size_t>(i)] = static_cast<double>(place++);
        s.groups.push_back({L, index_tensor(group.members), index_tensor(group.key_rows)});
    }
    s.index = index_tensor(std::vector<double>(rows.begin(), rows.end()));
    s.order = index_tensor(order);
    s.rows = std::move(rows);
    s.packed_rows = packing.rows();
    return s;
}

// One attention call per group of rows that see L keys: [n, 1, Hq, dh]
// queries against [n, L, Hkv, dh] keys, the query at position L - 1.
Tensor Attention::forward_rows(const Tensor& x, const Packing& packing, const RowSelection& rows) const {
    check_packed(x, packing, cfg_.d_model);
    if (rows.packed_rows != packing.rows())
        throw std::invalid_argument(fmt::format("Attention: rows chosen among {} packed rows, for a packing of {}",
                                                rows.packed_rows, packing.rows()));
    const int64_t dh = cfg_.head_dim();
    const Tensor q = rotate(split_heads(project_q(ag::index_select(x, 0, rows.index)), cfg_.n_heads), rows.positions);
    const auto [k_rows, v_rows] = project_kv(x);
    const Tensor k = rotate(split_heads(k_rows, cfg_.n_kv_heads), packing.positions);
    const Tensor v = split_heads(v_rows, cfg_.n_kv_heads);

    std::vector<Tensor> outputs;
    for (const RowSelection::Group& group : rows.groups) {
        const int64_t n = group.members.size(0), L = group.keys;
        std::vector<int64_t> key_positions(static_cast<size_t>(L));
        std::iota(key_positions.begin(), key_positions.end(), int64_t{0});
        const Tensor out = ag::attention(ag::index_select(q, 0, group.members).reshape({n, 1, cfg_.n_heads, dh}),
                                         ag::index_select(k, 0, group.key_rows).reshape({n, L, cfg_.n_kv_heads, dh}),
                                         ag::index_select(v, 0, group.key_rows).reshape({n, L, cfg_.n_kv_heads, dh}),
                                         {L - 1}, key_positions, cfg_.window);
        outputs.push_back(out.reshape({n, cfg_.d_model}));
    }
    return project_out(ag::index_select(ag::cat(outputs, 0), 0, rows.order));
}

// Row t of `from` [B, S, Hkv, dh] into slot `slot` of `to` [B, S', Hkv, dh]
// (both contiguous), for every batch row.
static void copy_row(const Tensor& from, int64_t t, Tensor& to, int64_t slot) {
    const int64_t B = from.size(0), S = from.size(1), S_to = to.size(1), row = from.size(2) * from.size(3);
    for (int64_t b = 0; b < B; ++b)
        std::copy_n(from.data() + (b * S + t) * row, row, to.data() + (b * S_to + slot) * row);
}

// Room for `needed` slots in a plain cache whose new rows look like `like`
// [B, T, Hkv, dh]: a full buffer is replaced by one of twice the room (or
// what is needed, if more), the filled slots copied over. Doubling keeps
// the copying to at most one row per row stored, on average.
static void make_room(KVCache& cache, const Tensor& like, int64_t needed) {
    const int64_t room = cache.k.defined() ? cache.k.size(1) : 0;
    if (needed <= room) return;
    Shape shape = like.shape();
    shape[1] = std::max(needed, 2 * room);
    Tensor k = Tensor::zeros(shape), v = Tensor::zeros(shape);
    for (int64_t s = 0; s < cache.slots(); ++s) {
        copy_row(cache.k, s, k, s);
        copy_row(cache.v, s, v, s);
    }
    cache.k = k;
    cache.v = v;
}

Tensor Attention::forward_cached(const Tensor& x, const std::vector<int64_t>& positions, KVCache& cache,
                                 const std::vector<int64_t>& rope_positions) const {
    if (x.dim() != 3 || x.size(2) != cfg_.d_model || static_cast<int64_t>(positions.size()) != x.size(1))
        throw std::invalid_argument(fmt::format("Attention: input {} with {} positions is not [B, T, {}]",
                                                ag::shape_str(x.shape()), positions.size(), cfg_.d_model));
    if (!rope_positions.empty() && rope_positions.size() != positions.size())
        throw std::invalid_argument(
            fmt::format("Attention: {} rope positions for {} positions", rope_positions.size(), positions.size()));
    const int64_t B = x.size(0), T = x.size(1);
    // (the cache is written in place: a batch of another size, or a slot
    // computed from a negative position, would be written outside it)
    if (cache.k.defined() && cache.k.size(0) != B)
        throw std::invalid_argument(fmt::format("Attention: input {} for a KV cache of batch size {}",
                                                ag::shape_str(x.shape()), cache.k.size(0)));
    for (const int64_t p : positions)
        if (p < 0) throw std::invalid_argument(fmt::format("Attention: position {} is negative", p));
    ag::NoGradGuard no_grad;  // decoding only
    const std::vector<int64_t>& turn_by = rope_positions.empty() ? positions : rope_positions;
    const auto [k_new, v_new] = project_kv(x);
    const Tensor q = rotate(split_heads(project_q(x), cfg_.n_heads), turn_by);
    const Tensor k = rotate(split_heads(k_new, cfg_.n_kv_heads), turn_by).contiguous();
    const Tensor v = split_heads(v_new, cfg_.n_kv_heads).contiguous();

    if (cache.capacity < 0) {  // plain cache: store the new tokens, then they see every slot, themselves included
        make_room(cache, k, cache.slots() + T);
        for (int64_t t = 0; t < T; ++t) {
            copy_row(k, t, cache.k, cache.slots());
            copy_row(v, t, cache.v, cache.slots());
            cache.positions.push_back(positions[static_cast<size_t>(t)]);
        }
        const int64_t S = cache.slots();
        return project_out(merge_heads(ag::attention(q, cache.k.narrow(1, 0, S), cache.v.narrow(1, 0, S), positions,
                                                     cache.positions, cfg_.window)));
    }
    // Rolling buffer: the new tokens see its slots and each other (a new
    // token may overwrite a slot an earlier new token still sees), then
    // position p goes to slot p mod capacity.
    Tensor keys = k, values = v;
    std::vector<int64_t> key_positions = positions;
    if (cache.slots() > 0) {
        keys = ag::cat({cache.k, k}, 1);
        values = ag::cat({cache.v, v}, 1);
        key_positions.insert(key_positions.begin(), cache.positions.begin(), cache.positions.end());
    }
    const Tensor out = ag::attention(q, keys, values, positions, key_positions, cfg_.window);
    const int64_t C = cache.capacity;
    if (C > 0 && cache.slots() == 0) {
        cache.k = Tensor::zeros({B, C, cfg_.n_kv_heads, cfg_.head_dim()});
        cache.v = Tensor::zeros({B, C, cfg_.n_kv_heads, cfg_.head_dim()});
        cache.positions.assign(static_cast<size_t>(C), -1);
    }
    for (int64_t t = 0; C > 0 && t < T; ++t) {
        const int64_t slot = positions[static_cast<size_t>(t)] % C;
        cache.positions[static_cast<size_t>(slot)] = positions[static_cast<size_t>(t)];
        copy_row(k, t, cache.k, slot);
        copy_row(v, t, cache.v, slot);
    }
    return project_out(merge_heads(out));
}

Attend Attend::packed(const Packing& packing, Tensor* weights) {
    Attend a(Mode::Packed);
    a.packing_ = &packing;
    a.weights_ = weights;
    return a;
}

Attend Attend::rows(const Packing& packing, const RowSelection& rows) {
    Attend a(Mode::Rows);
    a.packing_ = &packing;
    a.rows_ = &rows;
    return a;
}

Attend Attend::cached(std::vector<int64_t> positions, KVCache& cache, std::vector<int64_t> rope_positions) {
    Attend a(Mode::Cached);
    a.positions_ = std::move(positions);
    a.cache_ = &cache;
    a.rope_positions_ = std::move(rope_positions);
    return a;
}

Tensor Attend::operator()(const Attention& attention, const Tensor& x) const {
    switch (mode_) {
        case Mode::Packed:
            return attention.forward(x, *packing_, weights_);
        case Mode::Rows:
            return attention.forward_rows(x, *packing_, *rows_);
        case Mode::Cached:
            return attention.forward_cached(x, positions_, *cache_, rope_positions_);
    }
    return {};
}

Tensor Attend::residual(const Tensor& x) const {
    return mode_ == Mode::Rows ? ag::index_select(x, 0, rows_->index) : x;
}

}  // namespace nn
