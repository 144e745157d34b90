#pragma once
// Checkpoints in the safetensors format (Hugging Face), F64 only:
//
//   8 bytes     N, the header length, unsigned little-endian
//   N bytes     a JSON object, padded with spaces to a multiple of 8:
//               {"__metadata__": {"model": "gpt", "config": "{...}"},
//                "tok_emb.weight": {"dtype": "F64", "shape": [68, 64],
//                                   "data_offsets": [0, 34816]}, ...}
//   the rest    the data: each tensor row-major, little-endian, at
//               [begin, end) counted from the first byte after the header;
//               together the tensors cover it exactly, without overlap.
//
// The names are the module's dotted names, as in PyTorch's state_dict(), so
// the PyTorch twin of a model (docs/models.md) opens a checkpoint directly:
//
//   from safetensors.torch import load_file
//   state = load_file("out/gpt.safetensors")  # {name: torch.float64 tensor}
//   model = GPT(config)                        # the same model in PyTorch
//   model.double()                             # F64 parameters, like the file
//   model.load_state_dict(state)               # strict: names and shapes match
//
// (the metadata is safe_open(path, "pt").metadata() in Python).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"

namespace nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Writes the tensors in the order given, and the CRC-32 of their bytes into
// the metadata ("data_crc32", 8 hex digits: zlib.crc32 in Python) with the
// CRC-32 of the other metadata entries ("metadata_crc32", docs/models.md),
// through nn::write_file_atomically (a temporary file of this save's own,
// fsynced, renamed over `path` once complete): a crash leaves either the old
// file or the new one, never half of one, and two saves of one file at once
// never share a temporary file.
// Throws std::runtime_error on an I/O error or a target that is not a
// regular file, std::invalid_argument on an empty, repeated or reserved
// ("__metadata__") name, or a metadata key "data_crc32" or "metadata_crc32".
void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata = {});

struct Checkpoint {
    std::map<std::string, std::string> metadata;
    NamedTensors tensors;  // in header order; fresh tensors, no grad
};

// Reads and checks a whole file. Anything that is not a well-formed F64
// safetensors file is refused with a std::runtime_error that names the file
// and the problem: missing or short file, header length past the end,
// malformed JSON (a key twice in one object too), a bad tensor entry,
// another dtype, offsets that do not match the shape, overlap, run past the
// end (a truncated file) or leave bytes unaccounted for, data or metadata
// whose CRC-32 is not the one save recorded (keys "data_crc32" and
// "metadata_crc32", each checked when present, neither in the returned
// metadata), and a NaN or an infinity, naming the tensor and the index.
// Zero-size tensors load.
Checkpoint load_safetensors(const std::string& path);

// save_safetensors of m.named_parameters().
void save(const Module& m, const std::string& path, const std::map<std::string, std::string>& metadata = {});

// Copies the checkpoint's values into m's parameters, in place (the module
// keeps its tensor handles). Every name and shape is checked first, and a
// mismatch throws std::runtime_error in one line, e.g.
//   "checkpoint: missing layers.1.attn.wq.weight; unexpected foo.weight;
//    layers.0.mlp.w_up.weight has shape [100,64], the model has [172,64]"
// leaving the model untouched. Past five of a kind it names the first five
// and counts the rest: "missing a, b, c, d, e, and 7987 more (7992 in all)".
void load_into(Module& m, const Checkpoint& ckpt);

}  // namespace nn
