#include "lessons/sliding_window/rolling_cache.h"

#include <algorithm>
#include <stdexcept>

#include "autograd/autograd.h"

namespace lessons::sliding_window {
namespace {

// logits rows [1, 1, V] per position against the full pass [1, T, V].
LogitsComparison compare(const std::vector<ag::Tensor>& rows, const ag::Tensor& full, double tolerance) {
    LogitsComparison c;
    for (size_t p = 0; p < rows.size(); ++p) {
        const ag::Tensor reference = full.narrow(1, static_cast<int64_t>(p), 1);
        const double diff = ag::max_abs_diff(rows[p], reference);
        c.max_diff = std::max(c.max_diff, diff);
        if (diff > tolerance && c.first_wrong < 0) c.first_wrong = static_cast<int64_t>(p);
        if (ag::argmax(rows[p], -1).item() != ag::argmax(reference, -1).item()) ++c.argmax_changed;
    }
    return c;
}

}  // namespace

std::string describe(RotateBy rotate_by) {
    switch (rotate_by) {
        case RotateBy::AbsolutePosition:
            return "absolute position p (correct)";
        case RotateBy::CacheLength:
            return "cache length min(p, W-1) (bug)";
        case RotateBy::Slot:
            return "slot p mod (W-1) (bug)";
    }
    return "";
}

int64_t rotation_position(RotateBy rotate_by, int64_t position, int64_t window) {
    switch (rotate_by) {
        case RotateBy::AbsolutePosition:
            return position;
        case RotateBy::CacheLength:
            return std::min(position, window - 1);
        case RotateBy::Slot:
            return position % (window - 1);
    }
    return position;
}

ag::Tensor decode_rolling(const nn::LanguageModel& model, int64_t token, int64_t position, RotateBy rotate_by,
                          std::vector<nn::KVCache>& caches) {
    const nn::LMConfig& cfg = model.config();
    if (cfg.pos != nn::PosEncoding::Rope || cfg.window < 2)
        throw std::invalid_argument("decode_rolling: needs a model with RoPE and a window W >= 2");
    const ag::Tensor id = ag::Tensor::from({1, 1}, {static_cast<double>(token)});
    return model.forward_cached(id, {position}, caches, {rotation_position(rotate_by, position, cfg.window)});
}

RollingCacheCheck check_rolling_cache(const nn::LMConfig& config, const std::vector<int64_t>& prompt,
                                      int64_t new_tokens, const std::vector<RotateBy>& wrong, int seeds,
                                      double tolerance) {
    ag::NoGradGuard no_grad;
    const int64_t total = static_cast<int64_t>(prompt.size()) + new_tokens;
    RollingCacheCheck check;
    check.wrong_error.assign(wrong.size(), 0.0);
    for (int seed = 0; seed < seeds; ++seed) {
        const nn::LanguageModel model(config, static_cast<uint64_t>(seed));
        RollingCacheRun run;
        // Greedy generation with the engine's rolling cache.
        run.ids = prompt;
        std::vector<ag::Tensor> engine_rows;
        std::vector<nn::KVCache> caches = model.new_caches(nn::CacheKind::Rolling);
        for (int64_t p = 0; p < total; ++p) {
            const ag::Tensor id = ag::Tensor::from({1, 1}, {static_cast<double>(run.ids[static_cast<size_t>(p)])});
            engine_rows.push_back(model.forward_cached(id, {p}, caches));
            check.most_slots = std::max(check.most_slots, caches[0].slots());
            if (static_cast<int64_t>(run.ids.size()) == p + 1 && p + 1 < total)
                run.ids.push_back(static_cast<int64_t>(ag::argmax(engine_rows.back(), -1).item()));
        }
        run.held = caches[0].positions;
        std::sort(run.held.begin(), run.held.end());
        const ag::Tensor full =
            model.forward(ag::Tensor::from({1, total}, std::vector<double>(run.ids.begin(), run.ids.end())));
        run.engine = compare(engine_rows, full, tolerance);
        check.engine_error = std::max(check.engine_error, run.engine.max_diff);

        // The same tokens again (teacher-forced: same inputs), each wrong
        // way of choosing the rotation angle.
        for (size_t v = 0; v < wrong.size(); ++v) {
            std::vector<nn::KVCache> own = model.new_caches(nn::CacheKind::Rolling);
            std::vector<ag::Tensor> logits;
            for (int64_t p = 0; p < total; ++p)
                logits.push_back(decode_rolling(model, run.ids[static_cast<size_t>(p)], p, wrong[v], own));
            const LogitsComparison c = compare(logits, full, tolerance);
            check.wrong_error[v] = std::max(check.wrong_error[v], c.max_diff);
            check.wrong_changed += c.argmax_changed, check.wrong_positions += total;
            run.wrong.push_back(c);
        }
        check.seeds.push_back(std::move(run));
    }
    return check;
}

}  // namespace lessons::sliding_window
