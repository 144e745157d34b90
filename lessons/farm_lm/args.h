#pragma once
// farm_lm's command line after the command word: flags with a value
// (`--epochs 5` or `--epochs=5`), switches (`--greedy`) and positional
// arguments (the checkpoint). Every mistake is an InputError naming the
// flag and what was wrong with it (a UsageError).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace lessons::farm_lm {

// Something the user gave is wrong (a flag, a file, a word): farm_lm
// prints the message on one line and exits with status 2.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// A mistake on the command line itself (a flag, its value, the command):
// the message also points to --help.
struct UsageError : InputError {
    using InputError::InputError;
};

class Args {
public:
    // `valued`: the flags that take a value; `switches`: those that do not.
    // Throws InputError on an unknown or repeated flag or a missing value.
    Args(const std::vector<std::string>& args, const std::set<std::string>& valued,
         const std::set<std::string>& switches);

    const std::vector<std::string>& positional() const { return positional_; }
    bool has(const std::string& flag) const { return values_.count(flag) > 0; }

    // The flag's value, or `fallback` when it was not given.
    std::string text(const std::string& flag, const std::string& fallback) const;
    // A whole number in [min, max].
    int64_t integer(const std::string& flag, int64_t fallback, int64_t min, int64_t max) const;
    // A non-negative whole number (seeds).
    uint64_t seed(const std::string& flag, uint64_t fallback) const;
    // A finite real number > 0.
    double positive(const std::string& flag, double fallback) const;

private:
    std::optional<std::string> value(const std::string& flag) const;

    std::map<std::string, std::string> values_;  // switches map to ""
    std::vector<std::string> positional_;
};

}  // namespace lessons::farm_lm
