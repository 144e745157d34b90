#pragma once
// §1 the computational graph as a picture (ag::to_dot, micrograd's
// draw_dot): its DOT text, and the SVG Graphviz draws from it.
#include <filesystem>
#include <string>

namespace lessons::autograd_recap {

// Writes `dot` into dot_path, then runs Graphviz (`dot -Tsvg`) to draw
// svg_path. Returns false, leaving only the DOT file, when Graphviz is not
// installed or fails; throws std::runtime_error when dot_path cannot be
// written.
bool draw_graph(const std::string& dot, const std::filesystem::path& dot_path, const std::filesystem::path& svg_path);

}  // namespace lessons::autograd_recap
