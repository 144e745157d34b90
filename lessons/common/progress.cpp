#include "lessons/common/progress.h"

#include <unistd.h>

#include <cmath>

#include <fmt/format.h>

namespace lessons {
std::string group_thousands(double x) {
    const std::string digits = fmt::format("{:.0f}", std::fabs(x));
    std::string out = x <= -0.5 ? "-" : "";
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string format_duration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return "?";
    if (seconds < 60) return fmt::format("{:.1f} s", seconds);
    const auto whole = static_cast<int64_t>(std::lround(seconds));
    if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
    return fmt::format("{}h{:02}m", whole / 3600, whole % 3600 / 60);
}

Progress::Progress() : Progress(stderr, ::isatty(::fileno(stderr)) == 1) {}

Progress::Progress(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {}

void Progress::begin(int64_t epochs, int64_t steps_per_epoch) {
    epochs_ = epochs;
    steps_per_epoch_ = steps_per_epoch;
    start_ = Clock::now();
    updated_ = false;
    shown_width_ = 0;
}

void Progress::step(int64_t epoch, int64_t step, double loss, double tokens_per_second) {
    if (!terminal_) return;
    const Clock::time_point now = Clock::now();
    if (updated_ && std::chrono::duration<double>(now - last_update_).count() < min_interval_seconds) return;
    last_update_ = now;
    updated_ = true;

    // Time left: the mean time per step so far, times the steps still to go
    // (over all epochs, so it counts the epochs after this one too).
    const int64_t done = (epoch - 1) * steps_per_epoch_ + step;
    const int64_t total = epochs_ * steps_per_epoch_;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double left = elapsed / static_cast<double>(done) * static_cast<double>(total - done);
    rewrite(fmt::format("epoch {}/{}  step {}/{}  loss {:.4f}  {} tok/s  {} left", epoch, epochs_, step,
                        steps_per_epoch_, loss, group_thousands(tokens_per_second), format_duration(left)),
            false);
}

void Progress::epoch_done(int64_t epoch, double train_loss, double tokens_per_second, double seconds) {
    rewrite(fmt::format("epoch {}/{}  loss {:.4f}  {} tok/s  {}", epoch, epochs_, train_loss,
                        group_thousands(tokens_per_second), format_duration(seconds)),
            true);
}

void Progress::line(const std::string& text) { rewrite(text, true); }

// On a terminal, go back to the start of the line and overwrite it, blanking
// what is left of a longer previous line; a final line ends with a newline.
// Piped, only final lines are written.
void Progress::rewrite(const std::string& line, bool final) {
    if (terminal_) {
        const std::string blank(shown_width_ > line.size() ? shown_width_ - line.size() : 0, ' ');
        fmt::print(out_, "\r{}{}{}", line, blank, final ? "\n" : "");
        shown_width_ = final ? 0 : line.size();
    } else {
        fmt::print(out_, "{}\n", line);
    }
    std::fflush(out_);
}

}  // namespace lessons
