#pragma once
// JSON from files a user can hand the project (a checkpoint's header and
// metadata, the model cache, the grader's event lines), read strictly.
// nlohmann accepts a key repeated in one object and keeps the last value,
// so {"vocab": 68, ..., "vocab": 999} would rebuild a model nobody saved;
// here it is an error, and so is nesting deep enough to exhaust memory, or
// an object too large to read in reasonable time.
#include <cstddef>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace nn {

// Deeper nesting than any file of the project has is refused as it is read,
// and so is an object of more keys than any of its files has (a checkpoint
// lists a few dozen tensors, a lesson report a few hundred values): an
// ordered object finds each new key by a linear search, so 300,000 keys
// took 136 s to read.
constexpr int kMaxJsonDepth = 256;
constexpr std::size_t kMaxJsonKeys = 10000;

// The text as JSON, objects in the text's order. Throws std::invalid_argument
// saying what is wrong: nlohmann's parse error (without its
// "[json.exception...]" prefix), `duplicate key "vocab"`, or
// `nested deeper than 256 arrays/objects` or `an object with more than 10000
// keys`.
nlohmann::ordered_json parse_strict_json(std::string_view text);

}  // namespace nn
