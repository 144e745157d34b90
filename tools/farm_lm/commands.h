#pragma once
// farm_lm, a command-line playground for the farm-language models: train a
// GPT (lecture 2) or a ModernLM (§7) with any of the lecture's options,
// measure a checkpoint (perplexity, agreement per k) and continue prompts.
// usage() is the full manual (CLI11's help of every command);
// main.cpp is the program's main().
//
// The data: farm::make_corpora(data_seed) gives the training and test
// sentences, farm::make_agreement_sets(data_seed + 1) the agreement
// prefixes (each maker gets a seed of its own, farm_language.h).
//
// Exit status: 0 done; 2 for a mistake in what the user gave (a flag, a
// missing or corrupt checkpoint, a config that does not parse, a data file,
// an unknown word, an output that cannot be written or is one of the
// inputs, a learning rate that makes training diverge), with one line on
// the error stream saying what and where; 1 for anything else (a write
// that fails after the checks, a full disk say). --help (or the command
// help) prints the help on `out` and exits 0. The lessons follow the same
// rule (lesson.h).
#include <cstdio>
#include <string>
#include <vector>

namespace farm_lm {

std::string usage();

// The whole program: args without the program name. Results go to `out`;
// progress and error messages to `err` (a terminal gets '\r' progress).
int run(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace farm_lm
