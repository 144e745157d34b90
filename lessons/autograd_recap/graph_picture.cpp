#include "lessons/autograd_recap/graph_picture.h"

#include <spawn.h>
#include <sys/wait.h>

#include <fstream>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace lessons::autograd_recap {

bool draw_graph(const std::string& dot, const std::filesystem::path& dot_path, const std::filesystem::path& svg_path) {
    {
        std::ofstream out(dot_path);
        out << dot;
        if (!out.flush()) throw std::runtime_error("cannot write " + dot_path.string());
    }
    // dot -Tsvg <dot_path> -o <svg_path>, found on PATH; no shell, so any
    // file name is passed as it is.
    std::string in = dot_path.string(), out = svg_path.string();
    std::vector<char*> argv{
        const_cast<char*>("dot"), const_cast<char*>("-Tsvg"), in.data(), const_cast<char*>("-o"), out.data(), nullptr};
    pid_t pid = 0;
    if (posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ) != 0) return false;
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
    return std::filesystem::exists(svg_path);
}

}  // namespace lessons::autograd_recap
