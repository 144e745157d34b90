#pragma once
// Writing a file so that nothing is ever half of one: checkpoints (and the
// lessons' model cache), the lesson book's pages and reports.
//
//     nn::write_file_atomically("out/gpt.safetensors", {length, header, data}, nn::Sync::Yes);
//
// The bytes go to a temporary file in the target's directory, created
// exclusively under a name no other writer uses (path + ".<pid>.<n>.tmp",
// n counting this process's temporary files), and only a complete file is
// renamed over the target: a reader, or a crash, sees the old file or the
// new one; a run stopped by SIGINT, SIGTERM or SIGHUP in the middle of a
// write removes its temporary file before it ends (the handler is put in
// place with each temporary file and hands the signal on to whatever was
// there before). Two writers of one target, other processes or other
// threads, each write their own temporary file and the last rename wins
// (issue 13: with one fixed name path + ".tmp", two runs saving the same
// cache file truncated or renamed away each other's).
#include <filesystem>
#include <string_view>
#include <vector>

namespace nn {

// Yes: fsync(2) the file before the rename, so that after a power cut the
// target is the new file, not an empty one. Worth it for what took long to
// make (a trained model); the book's pages can be written again.
enum class Sync { No, Yes };

// Writes `pieces` one after the other as the new contents of `path`. Throws
// std::runtime_error naming the file and the system's reason (its directory
// missing or not writable, the disk full, ...), leaving the old file as it
// was and no temporary file behind. A target that exists but is not a
// regular file (a directory, a FIFO, a device such as /dev/null) is refused
// before anything is written: the rename would replace it.
void write_file_atomically(const std::filesystem::path& path, const std::vector<std::string_view>& pieces,
                           Sync sync = Sync::No);

}  // namespace nn
