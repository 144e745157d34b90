#include "nn/atomic_file.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>

#include <fmt/format.h>

namespace nn {

namespace fs = std::filesystem;

namespace {

std::string system_reason(int error) { return std::generic_category().message(error); }

// ---- a temporary file is not left behind by Ctrl-C --------------------------
//
// A run stopped by SIGINT, SIGTERM or SIGHUP while it writes (a lesson's
// model, a 1 MB checkpoint) would leave its half-written temporary file
// beside the target. So the temporary files being written are listed in a
// fixed table that a signal handler can read: it unlinks them (unlink(2) is
// async-signal-safe), puts back the handler that was there before and
// raises the signal again, so the process ends (or the program's own
// handler runs) as it would have. The handlers are (re)installed with each
// temporary file, and only for signals that are not ignored.
constexpr int kSlots = 16;  // files written at once; beyond that one is just not listed
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct Slot {
    std::atomic<int> state{0};  // 0 free, 1 being filled, 2 a file being written
    char path[PATH_MAX];
};
Slot slots[kSlots];
struct sigaction previous[std::size(kSignals)];

void remove_temporary_files(int signal) {
    const int saved_errno = errno;  // unlink may change it under the code the signal interrupted
    for (Slot& slot : slots)
        if (slot.state.load(std::memory_order_acquire) == 2) ::unlink(slot.path);
    for (size_t i = 0; i < std::size(kSignals); ++i)
        if (kSignals[i] == signal) ::sigaction(signal, &previous[i], nullptr);
    ::raise(signal);
    errno = saved_errno;  // when the previous handler returned
}

// Checked with every temporary file, not once: a program (or a test
// framework) may have put its own handler back since, and after a handler
// that returns ours is no longer there.
void install_handlers() {
    static std::mutex installing;
    const std::lock_guard<std::mutex> lock(installing);
    for (size_t i = 0; i < std::size(kSignals); ++i) {
        struct sigaction current = {};
        ::sigaction(kSignals[i], nullptr, &current);
        if (current.sa_handler == SIG_IGN || current.sa_handler == remove_temporary_files) continue;  // nohup: ignored
        previous[i] = current;
        struct sigaction action = {};
        action.sa_handler = remove_temporary_files;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        ::sigaction(kSignals[i], &action, nullptr);
    }
}

// The slot listing `path`, or -1 when every slot is taken (or the path is too long).
int list(const std::string& path) {
    if (path.size() >= PATH_MAX) return -1;
    for (int i = 0; i < kSlots; ++i) {
        int expected = 0;  // free
        if (slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
            std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
            slots[i].state.store(2, std::memory_order_release);
            return i;
        }
    }
    return -1;
}
void unlist(int slot) {
    if (slot >= 0) slots[slot].state.store(0, std::memory_order_release);
}

// A temporary file of this writer's own: created with O_EXCL, so even a
// file left by a crashed process that had the same pid is never reused,
// and removed when this goes out of scope unless it was renamed.
class TempFile {
public:
    explicit TempFile(const fs::path& target) {
        static std::atomic<uint64_t> made{0};  // across threads
        install_handlers();
        do {
            // Listed before it exists: a signal between the open and the
            // listing would leave it (unlinking a name not made yet is harmless).
            unlist(slot_);
            path_ = target.string() + fmt::format(".{}.{}.tmp", ::getpid(), made++);
            slot_ = list(path_);
            fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // 0666 less the umask
        } while (fd_ < 0 && errno == EEXIST);
        if (fd_ < 0) {
            const int error = errno;
            unlist(slot_);
            throw std::runtime_error(
                fmt::format("cannot create a temporary file next to '{}': {}", target.string(), system_reason(error)));
        }
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() {
        if (fd_ >= 0) ::close(fd_);
        if (!renamed_) ::unlink(path_.c_str());
        unlist(slot_);
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
        unlist(slot_);  // from here on the name may be the target's: a signal must not unlink it
        slot_ = -1;
        const int result = ::rename(path_.c_str(), target.c_str());
        renamed_ = result == 0;
        return result;
    }

private:
    std::string path_;
    int fd_ = -1;
    int slot_ = -1;  // in the signal handler's table
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
