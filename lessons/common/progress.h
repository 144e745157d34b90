#pragma once
// Progress of a long training run, on stderr (a lesson's tables and numbers
// go to stdout, so redirecting stdout keeps the results clean).
//
// On a terminal, one line rewritten in place with '\r', at most about ten
// times a second:
//     epoch 2/5  step 312/625  loss 1.8342  12,345 tok/s  1m12s left
// and, when an epoch ends, that line is replaced by the epoch's summary and
// a newline. Piped to a file or another program, only the summaries are
// written: exactly one line per epoch,
//     epoch 2/5  loss 1.8342  12,345 tok/s  17.3 s
//
//     Progress progress;                          // stderr, terminal or not
//     progress.begin(epochs, steps_per_epoch);
//     ... progress.step(epoch, step, loss, tokens_per_second);   // often
//     ... progress.epoch_done(epoch, train_loss, tokens_per_second, seconds);
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace lessons {

class Progress {
public:
    // stderr, as a terminal when isatty(fileno(stderr)).
    Progress();
    // Any stream, told whether it is a terminal (the tests use this).
    Progress(std::FILE* out, bool terminal);

    bool terminal() const { return terminal_; }
    // Least time between two '\r' updates on a terminal (0: every step).
    double min_interval_seconds = 0.1;

    // A run of `epochs` epochs of `steps_per_epoch` steps starts now; the
    // time left is extrapolated from the time since this call.
    void begin(int64_t epochs, int64_t steps_per_epoch);
    // Step `step` (1-based) of epoch `epoch` (1-based) is done.
    void step(int64_t epoch, int64_t step, double loss, double tokens_per_second);
    // Epoch `epoch` (1-based) is done: its summary line.
    void epoch_done(int64_t epoch, double train_loss, double tokens_per_second, double seconds);
    // A line of its own (a run that trained beside others: lessons::cached_lms).
    void line(const std::string& text);

private:
    using Clock = std::chrono::steady_clock;
    void rewrite(const std::string& line, bool final);

    std::FILE* out_;
    bool terminal_;
    int64_t epochs_ = 0, steps_per_epoch_ = 0;
    Clock::time_point start_, last_update_;
    bool updated_ = false;    // a '\r' line has been written since begin()
    size_t shown_width_ = 0;  // length of the '\r' line on screen, to blank it
};

// "17.3 s", "4m05s", "1h02m": a duration as a person reads it.
std::string format_duration(double seconds);
// 12345.6 -> "12,346": counts and throughputs with thousands separators.
std::string group_thousands(double x);

}  // namespace lessons
