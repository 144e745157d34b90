// nn::write_file_atomically, the writer under checkpoints and the lesson
// book: whole files or none, a temporary file of its own, nothing left
// behind (a signal in the middle of a save included), and targets that a
// rename would destroy refused.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "catch.h"
#include "scratch.h"

#include "nn/atomic_file.h"

namespace fs = std::filesystem;

namespace {

// The names in a directory, sorted.
std::vector<std::string> names_in(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("write_file_atomically: the pieces in order, over the old file, nothing left behind", "[nn][atomic_file]") {
    const test::ScratchDir dir("atomic_file");
    const fs::path path = dir.path / "out.txt";
    nn::write_file_atomically(path, {"old"});
    nn::write_file_atomically(path, {"one ", "", "two"}, nn::Sync::Yes);
    CHECK(read_text(path) == "one two");
    CHECK(names_in(dir.path) == std::vector<std::string>{"out.txt"});
}

TEST_CASE("write_file_atomically: a target it cannot write is refused, naming it, and nothing is destroyed",
          "[nn][atomic_file]") {
    const test::ScratchDir dir("atomic_file");
    const fs::path nowhere = dir.path / "no" / "such" / "x.txt";
    CHECK_THROWS_WITH(nn::write_file_atomically(nowhere, {"x"}),
                      "cannot create a temporary file next to '" + nowhere.string() + "': No such file or directory");

    // A rename would replace a directory (if empty), a FIFO or a device
    // node with a regular file: /dev/null, for root.
    const fs::path sub = dir.path / "sub";
    fs::create_directory(sub);
    const fs::path fifo = dir.path / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    for (const fs::path& target : {sub, fifo}) {
        CHECK_THROWS_WITH(
            nn::write_file_atomically(target, {"x"}),
            "'" + target.string() + "' exists and is not a regular file: refused, writing would replace it");
    }
    CHECK(fs::is_directory(sub));
    CHECK(fs::is_fifo(fifo));
    CHECK(names_in(dir.path) == std::vector<std::string>{"fifo", "sub"});
}

// Ctrl-C or a kill while a model is being saved: the half-written
// temporary file goes too, the target stays whole, and the process still
// ends by that signal. The child saves 32 MB again and again until the
// signal comes, so it lands in the middle of a save (its temporary file
// was left behind before the handler).
TEST_CASE("write_file_atomically: a run stopped by SIGTERM or SIGINT leaves no temporary file", "[nn][atomic_file]") {
    for (const int signal : {SIGTERM, SIGINT}) {
        INFO("signal " << signal);
        const test::ScratchDir dir("atomic_file_signal");
        const fs::path path = dir.path / "model.bin";
        const std::string bytes(32 << 20, 'x');
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            ::signal(signal, SIG_DFL);  // as in a program of ours (not Catch2's handler, which reports and re-raises)
            try {
                for (;;) nn::write_file_atomically(path, {bytes});
            } catch (...) {  // a full disk, say: the child must not go on as a second test runner
            }
            ::_exit(3);
        }
        ::usleep(150'000);
        REQUIRE(::kill(child, signal) == 0);
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == signal);  // ended by the signal, as without the handler
        const std::vector<std::string> left = names_in(dir.path);
        CHECK(std::none_of(left.begin(), left.end(), [](const std::string& n) { return n.find(".tmp") != n.npos; }));
        if (fs::exists(path)) CHECK(fs::file_size(path) == bytes.size());  // whole, never half
    }
}
