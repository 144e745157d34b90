#pragma once
// Scratch files for the tests. Every path lives in one folder of the
// system's temp directory named after the test process (ag_tests_<pid>),
// which is removed when the process ends: running the tests leaves nothing
// behind, and two test processes (ctest -j, or two builds' tests at once)
// never share a file.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace test {

// This process's folder: made on first use, removed at exit (by the process
// that made it, not by a forked child that exits).
inline const std::filesystem::path& scratch_root() {
    struct Root {
        pid_t owner = ::getpid();
        std::filesystem::path path =
            std::filesystem::temp_directory_path() / ("ag_tests_" + std::to_string(static_cast<long>(owner)));
        Root() {
            std::filesystem::remove_all(path);
            std::filesystem::create_directories(path);
        }
        ~Root() {
            std::error_code ignored;
            if (::getpid() == owner) std::filesystem::remove_all(path, ignored);
        }
    };
    static const Root root;
    return root.path;
}

// A path in it with nothing there yet (whatever an earlier call left under
// the same name is removed).
inline std::filesystem::path scratch_path(const std::string& name) {
    const auto path = scratch_root() / name;
    std::filesystem::remove_all(path);
    return path;
}

// An empty directory that lives as long as the object: one test case's files.
struct ScratchDir {
    std::filesystem::path path;
    explicit ScratchDir(const std::string& name) : path(scratch_path(name)) {
        std::filesystem::create_directories(path);
    }
    ~ScratchDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    std::string file(const std::string& name) const { return (path / name).string(); }
};

// A folder that exists and takes no new file, not even from root (whom
// access(2) lets write anywhere): Linux's /proc, and where there is none
// (macOS) the read-only system volume's /System.
inline const std::string& unwritable_folder() {
    static const std::string folder = std::filesystem::is_directory("/proc/self") ? "/proc" : "/System";
    return folder;
}

}  // namespace test
