#include "lessons/sliding_window/rolling_cache.h"

#include <algorithm>
#include <stdexcept>

namespace lessons::sliding_window {

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

}  // namespace lessons::sliding_window
