#include "nn/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <system_error>

#include <fmt/format.h>

namespace nn {

namespace fs = std::filesystem;

namespace {

std::string system_reason(int error) { return std::generic_category().message(error); }

// A temporary file of this writer's own: created with O_EXCL, so even a
// file left by a crashed process that had the same pid is never reused,
// and removed when this goes out of scope unless it was renamed.
class TempFile {
public:
    explicit TempFile(const fs::path& target) {
        static std::atomic<uint64_t> made{0};  // across threads
        do {
            path_ = target.string() + fmt::format(".{}.{}.tmp", ::getpid(), made++);
            fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // 0666 less the umask
        } while (fd_ < 0 && errno == EEXIST);
        if (fd_ < 0)
            throw std::runtime_error(
                fmt::format("cannot create a temporary file next to '{}': {}", target.string(), system_reason(errno)));
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() {
        if (fd_ >= 0) ::close(fd_);
        if (!renamed_) ::unlink(path_.c_str());
    }

    // -1 and errno on failure; a signal or a partial write just goes on.
    int write(std::string_view bytes) {
        while (!bytes.empty()) {
            const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return -1;
            bytes.remove_prefix(static_cast<size_t>(n));
        }
        return 0;
    }
    int sync() { return ::fsync(fd_); }
    int close() {  // a delayed write error (NFS, a full disk) shows here
        const int result = ::close(fd_);
        fd_ = -1;
        return result;
    }
    int rename_to(const fs::path& target) {
        const int result = ::rename(path_.c_str(), target.c_str());
        renamed_ = result == 0;
        return result;
    }

private:
    std::string path_;
    int fd_ = -1;
    bool renamed_ = false;
};

}  // namespace

void write_file_atomically(const fs::path& path, const std::vector<std::string_view>& pieces, Sync sync) {
    std::error_code ignored;
    const fs::file_status target = fs::status(path, ignored);
    if (fs::exists(target) && !fs::is_regular_file(target))
        throw std::runtime_error(
            fmt::format("'{}' exists and is not a regular file: refused, writing would replace it", path.string()));

    TempFile temp(path);
    const auto failed = [&](const char* what) {
        return std::runtime_error(fmt::format("{} '{}' failed: {}", what, path.string(), system_reason(errno)));
    };
    for (const std::string_view piece : pieces)
        if (temp.write(piece) != 0) throw failed("writing");
    if (sync == Sync::Yes && temp.sync() != 0) throw failed("writing");
    if (temp.close() != 0) throw failed("writing");
    if (temp.rename_to(path) != 0) throw failed("renaming the temporary file over");  // atomic within a file system
}

}  // namespace nn
