// farm_lm: a command-line playground for the farm-language models. Train a
// GPT or a ModernLM with any of the lecture's options, measure a checkpoint,
// continue a prompt; `farm_lm --help` lists everything. The commands live
// in commands.cpp, where tests/lessons runs them too.
#include <string>
#include <vector>

#include "tools/farm_lm/commands.h"

int main(int argc, char** argv) {
    return farm_lm::run(std::vector<std::string>(argv + 1, argv + argc), stdout, stderr);
}
