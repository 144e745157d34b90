#include "report_channel.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace grading::report_channel {

namespace {

// Plain data, valid before any constructor has run.
int descriptor = -1;
char key[kKeyLength];

// Reads the key the grader wrote into the socket, then forgets where the
// socket came from. Runs before main() and before the static initialisers
// of other files (priority 101), so before any of the student's code.
#if defined(__ELF__)
__attribute__((constructor(101)))
#else
__attribute__((constructor))
#endif
void open_channel() {
    const char* variable = std::getenv(kVariable);
    if (!variable) return;
    char* end = nullptr;
    const long fd = std::strtol(variable, &end, 10);
    unsetenv(kVariable);
    if (*end != '\0' || fd < 0) return;
    int got = 0;
    while (got < kKeyLength) {
        const ssize_t n = ::read(static_cast<int>(fd), key + got, static_cast<size_t>(kKeyLength - got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        got += static_cast<int>(n);
    }
    fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    descriptor = static_cast<int>(fd);
}

}  // namespace

bool is_open() { return descriptor >= 0; }

void write(const std::string& json) {
    if (descriptor < 0) return;
    const std::string line = std::string(key, kKeyLength) + " " + json + "\n";
#if defined(MSG_NOSIGNAL)
    const int flags = MSG_NOSIGNAL;   // a grader that is gone is not a crash of the test
#else
    const int flags = 0;
#endif
    for (size_t sent = 0; sent < line.size();) {
        const ssize_t n = ::send(descriptor, line.data() + sent, line.size() - sent, flags);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        sent += static_cast<size_t>(n);
    }
}

}  // namespace grading::report_channel
