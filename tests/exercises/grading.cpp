#include "grading.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nn/json_strict.h"
#include "report_channel.h"

namespace grading {

using Json = nlohmann::ordered_json;

const std::vector<Exercise>& exercises() { return lessons::course::exercises(); }

std::vector<Exercise> select(const std::vector<std::string>& args) {
    if (args.empty()) return exercises();
    std::vector<Exercise> chosen;
    for (const std::string& arg : args) {
        // "7", "ex07", "3-9" (a range) or part of a name.
        const std::string digits = arg.rfind("ex", 0) == 0 ? arg.substr(2) : arg;
        const size_t dash = digits.find('-');
        const std::string lo = digits.substr(0, dash), hi = dash == std::string::npos ? lo : digits.substr(dash + 1);
        const auto is_number = [](const std::string& t) {
            return !t.empty() && t.size() < 4 && t.find_first_not_of("0123456789") == std::string::npos;
        };
        const bool numeric = is_number(lo) && is_number(hi);
        bool found = false;
        if (arg.empty())  // part of every name: not what anyone means
            throw std::invalid_argument(
                "an empty exercise name (give a number 1-18, ex07, a range 3-9, or part of a name such as rope)");
        for (const Exercise& e : exercises()) {
            const bool match = numeric ? std::stoi(lo) <= e.number && e.number <= std::stoi(hi)
                                       : e.name.find(arg) != std::string::npos;
            if (!match) continue;
            found = true;
            if (std::none_of(chosen.begin(), chosen.end(), [&](const Exercise& c) { return c.number == e.number; }))
                chosen.push_back(e);
        }
        if (!found)
            throw std::invalid_argument(fmt::format(
                "no exercise matches '{}' (give a number 1-18, ex07, a range 3-9, or part of a name such as rope)",
                arg));
    }
    std::sort(chosen.begin(), chosen.end(), [](const Exercise& a, const Exercise& b) { return a.number < b.number; });
    return chosen;
}

std::string to_string(Status s) {
    switch (s) {
        case Status::passed:
            return "passed";
        case Status::failed:
            return "FAILED";
        case Status::not_started:
            return "not started";
    }
    return "?";
}

namespace {

std::string signal_name(int sig) {
    switch (sig) {
        case SIGSEGV:
            return "SIGSEGV, a segmentation fault: memory out of bounds or a null pointer";
        case SIGABRT:
            return "SIGABRT, an abort: an assert or an uncaught error";
        case SIGFPE:
            return "SIGFPE, an arithmetic error such as an integer division by zero";
        case SIGBUS:
            return "SIGBUS, a bus error";
        case SIGILL:
            return "SIGILL, an illegal instruction";
        default:
            return fmt::format("signal {} ({})", sig, strsignal(sig));
    }
}

// What the listener said, line by line. Every line must start with the
// run's key; one that does not was written by someone else.
struct Report {
    std::vector<Json> failures;
    int passed = 0, finished = 0;
    int registered = -1;  // from the "run" event; -1: the program died before its first test
    bool ended = false;   // the "end" event arrived, with counts that agree
    std::string last_started;
    bool unfinished = false;  // a test started and never ended: the program died in it
    std::string forged;       // the first line that is not the listener's
};

Report read_report(const std::string& text, const std::string& key) {
    Report report;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (in.eof()) break;  // the last line without its newline: cut short when the program died
        if (line.size() < key.size() + 1 || line.compare(0, key.size(), key) != 0 || line[key.size()] != ' ') {
            if (report.forged.empty()) report.forged = line.empty() ? "(an empty line)" : line.substr(0, 120);
            continue;
        }
        Json v;
        std::string event;
        try {
            v = nn::parse_strict_json(line.substr(key.size() + 1));
            event = v.at("event").get<std::string>();
        } catch (const std::exception&) {
            if (report.forged.empty()) report.forged = line.substr(key.size() + 1, 120);
            continue;
        }
        if (event == "run") report.registered = v.at("registered").get<int>();
        if (event == "start") {
            report.last_started = v.at("test").get<std::string>();
            report.unfinished = true;
        }
        if (event == "failure") report.failures.push_back(v);
        if (event == "test") {
            report.unfinished = false;
            ++report.finished;
            if (v.at("passed").get<bool>()) ++report.passed;
        }
        if (event == "end")
            report.ended =
                v.at("registered").get<int>() == report.registered && v.at("finished").get<int>() == report.finished;
    }
    return report;
}

std::vector<std::string> describe(const Json& failure) {
    std::vector<std::string> lines{fmt::format("in test \"{}\"", failure.at("test").get<std::string>())};
    const std::string check = failure.at("check").get<std::string>(),
                      expanded = failure.at("expanded").get<std::string>();
    if (!check.empty() && check != "FAIL") lines.push_back("check:    " + check);  // a FAIL is all in its message
    if (!expanded.empty() && expanded != check) lines.push_back("got:      " + expanded);
    for (const Json& m : failure.at("messages")) {
        std::istringstream text(m.get<std::string>());
        for (std::string line; std::getline(text, line);) lines.push_back(line);
    }
    return lines;
}

// A fresh key for one run: 32 hexadecimal digits.
std::string random_key() {
    std::random_device device;
    std::string key;
    while (static_cast<int>(key.size()) < report_channel::kKeyLength)
        key += fmt::format("{:08x}", static_cast<uint32_t>(device()));
    return key.substr(0, static_cast<size_t>(report_channel::kKeyLength));
}

// Resident memory of a process, in bytes; 0 where /proc is not there.
int64_t resident_bytes(pid_t pid) {
    std::ifstream statm(fmt::format("/proc/{}/statm", pid));
    int64_t size = 0, resident = 0;
    if (!(statm >> size >> resident)) return 0;
    return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

// Reads what is there without blocking; false at end of file.
bool drain(int fd, std::string& into) {
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0) {
            into.append(buffer, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
}

std::string mebibytes(int64_t bytes) { return fmt::format("{:g} MiB", static_cast<double>(bytes) / (1 << 20)); }

// Why the grader stopped a program: not at all, or one of its limits.
enum class Stopped { no, time, output, memory };

// Whether the program's output holds a sanitizer's report (a build with
// -fsanitize: the sanitizer catches the error and exits with a status).
bool sanitizer_report(const std::string& log_path) {
    std::ifstream log(log_path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(log)), {});
    return text.find("Sanitizer") != std::string::npos || text.find("runtime error:") != std::string::npos;
}

// What stopped the run before it could end by itself, or "" when it ended
// by itself (with whatever status). "crashed" is said only of a signal, or
// a sanitizer's stop, during a test; a signal before the first test, between
// two tests or after the last one is named as such, and so is a report
// channel that the student's code closed.
std::string how_it_stopped(Stopped stopped, const Limits& limits, int status, const Report& report,
                           const std::string& log_path) {
    const std::string where = report.last_started.empty() ? "" : fmt::format(" in test \"{}\"", report.last_started);
    switch (stopped) {
        case Stopped::time:
            return fmt::format("timed out after {:g} s{} (an endless loop?)", limits.seconds, where);
        case Stopped::output:
            return fmt::format("your code printed too much{}: more than {} of output (see {})", where,
                               mebibytes(limits.output_bytes), log_path);
        case Stopped::memory:
            return fmt::format(
                "your code used too much memory{}: more than {} (a tensor far larger than the inputs, or memory "
                "kept in a loop?)",
                where, mebibytes(limits.memory_bytes));
        case Stopped::no:
            break;
    }
    // Catch's own signal handler may report a crash as a failure of the
    // test it happened in before the program dies.
    const auto fatal = std::find_if(report.failures.begin(), report.failures.end(),
                                    [](const Json& f) { return f.at("fatal").get<bool>(); });
    if (fatal != report.failures.end()) {
        const Json& messages = fatal->at("messages");
        std::string what = messages.empty() ? "a fatal signal" : messages.back().get<std::string>();
        const std::pair<int, const char*> named[] = {
            {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGFPE, "SIGFPE"}, {SIGBUS, "SIGBUS"}, {SIGILL, "SIGILL"}};
        for (const auto& [sig, name] : named)
            if (what.rfind(name, 0) == 0) what = signal_name(sig);
        return fmt::format("crashed in test \"{}\": {}", fatal->at("test").get<std::string>(), what);
    }
    if (WIFSIGNALED(status)) {
        const std::string signal = signal_name(WTERMSIG(status));
        if (report.unfinished) return fmt::format("crashed{}: {}", where, signal);
        if (report.last_started.empty())
            return fmt::format(
                "the program was killed by {} before its first test (your code ran when the program started: a "
                "static object's constructor?)",
                signal);
        if (report.ended)
            return fmt::format(
                "every test ran to its end ({} of {} passed), then the program was killed by {} as it shut down "
                "(your code ran at exit: a static object's destructor or an atexit handler?)",
                report.passed, report.registered, signal);
        return fmt::format(
            "the program was killed by {} between two tests, after test \"{}\" had ended (a thread "
            "your code started?)",
            signal, report.last_started);
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == report_channel::kLostStatus && !report.ended)
        return fmt::format(
            "the grading report went silent{}: your code closed or replaced the grader's report channel (a "
            "file descriptor it did not open), so the rest of the run could not be reported; close, dup2 onto "
            "or write to only the descriptors your code opened",
            where);
    if (report.unfinished && code != 0 && sanitizer_report(log_path))
        return fmt::format("crashed{}: a sanitizer found an error and stopped the program with exit status {} (see {})",
                           where, code, log_path);
    return "";
}

}  // namespace

Result run_exercise(const Exercise& exercise, const std::vector<std::string>& command, const Limits& limits,
                    const std::string& log_path) {
    Result result;
    result.exercise = exercise;

    // The report channel (a socket pair, the key written into our end) and
    // a pipe for the program's output.
    int channel[2], out_pipe[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, channel) != 0 || pipe(out_pipe) != 0)
        throw std::runtime_error(std::string("grade: cannot open the report channel: ") + std::strerror(errno));
    const std::string key = random_key();
    if (::write(channel[0], key.data(), key.size()) != static_cast<ssize_t>(key.size()))
        throw std::runtime_error("grade: cannot write the report channel's key");

    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("grade: fork failed: ") + std::strerror(errno));
    if (pid == 0) {  // the child: its own process group, output to the pipe, then the test program
        setpgid(0, 0);
        dup2(out_pipe[1], 1);
        dup2(out_pipe[1], 2);
        close(out_pipe[0]);
        close(out_pipe[1]);
        close(channel[0]);
        setenv(report_channel::kVariable, std::to_string(channel[1]).c_str(), 1);
        std::vector<char*> argv;
        for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        std::fprintf(stderr, "cannot run %s: %s\n", argv[0], std::strerror(errno));
        _exit(127);
    }
    close(channel[1]);
    close(out_pipe[1]);
    for (const int fd : {channel[0], out_pipe[0]}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);

    // Read both as they come until the program exits or breaks a limit.
    std::ofstream log(log_path, std::ios::binary | std::ios::trunc);
    std::string report_text, printed;
    int64_t printed_total = 0;
    const auto keep_output = [&] {  // into the log, up to the limit
        printed.clear();
        drain(out_pipe[0], printed);
        const int64_t room = std::max<int64_t>(0, limits.output_bytes - printed_total);
        log.write(printed.data(),
                  static_cast<std::streamsize>(std::min<int64_t>(room, static_cast<int64_t>(printed.size()))));
        printed_total += static_cast<int64_t>(printed.size());
    };
    Stopped stopped = Stopped::no;
    const auto start = std::chrono::steady_clock::now();
    int status = 0;
    bool exited = false;
    while (!exited) {
        pollfd fds[2] = {{channel[0], POLLIN, 0}, {out_pipe[0], POLLIN, 0}};
        poll(fds, 2, 20);
        drain(channel[0], report_text);
        keep_output();
        exited = waitpid(pid, &status, WNOHANG) == pid;
        if (exited) break;
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (seconds > limits.seconds)
            stopped = Stopped::time;
        else if (printed_total > limits.output_bytes)
            stopped = Stopped::output;
        else if (resident_bytes(pid) > limits.memory_bytes)
            stopped = Stopped::memory;
        if (stopped != Stopped::no) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            exited = true;
        }
    }
    kill(-pid, SIGKILL);  // anything the program left behind
    drain(channel[0], report_text);
    keep_output();
    close(channel[0]);
    close(out_pipe[0]);

    log.flush();

    const Report report = read_report(report_text, key);
    result.tests_passed = report.passed;
    result.tests_registered = std::max(report.registered, 0);

    if (!report.forged.empty()) {
        result.why =
            "the grading report holds a line that the grading listener did not write: your code wrote into "
            "the grader's channel (the exercise fails however its tests went)";
        result.detail = {"the line: " + report.forged};
        return result;
    }

    // A test case that met a stub (not_implemented) says nothing about the
    // student's other code: its later failures are consequences. The first
    // real failure is the first check that failed in a test case without a
    // stub. It comes before whatever stopped the run (a crash, a limit): the
    // report is in the order things happened, and what went wrong first is
    // told first, the same on every run, however a later test ends.
    std::vector<std::string> stubbed;
    for (const Json& f : report.failures)
        if (f.at("not_implemented").get<bool>()) stubbed.push_back(f.at("test").get<std::string>());
    const auto real = std::find_if(report.failures.begin(), report.failures.end(), [&](const Json& f) {
        return !f.at("fatal").get<bool>() &&
               std::find(stubbed.begin(), stubbed.end(), f.at("test").get<std::string>()) == stubbed.end();
    });
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const std::string stopped_by = how_it_stopped(stopped, limits, status, report, log_path);
    if (real != report.failures.end()) {
        result.why = fmt::format("{} of {} tests passed; the first failing check:", report.passed, report.registered);
        result.detail = describe(*real);
        if (!stopped_by.empty()) result.detail.push_back("later: " + stopped_by);
        return result;
    }
    if (!stopped_by.empty()) {
        result.why = stopped_by;
        return result;
    }
    const std::string where = report.last_started.empty() ? "" : fmt::format(" in test \"{}\"", report.last_started);
    if (report.registered < 0) {
        result.why = code == 127 ? fmt::format("could not run {} (see {})", command[0], log_path)
                                 : fmt::format(
                                       "the test program ended with status {} before its first test (your "
                                       "code ran when the program started? see {})",
                                       code, log_path);
        return result;
    }
    if (!report.ended) {
        result.why = fmt::format(
            "your code ended the program early{} (exit status {}): {} of {} tests ran, the rest "
            "never did; do not call exit() or similar in an exercise",
            where, code, report.finished, report.registered);
        return result;
    }
    if (!report.failures.empty()) {
        // Every failure is a stub's not_implemented.
        result.status = report.passed == 0 ? Status::not_started : Status::failed;
        if (result.status == Status::failed) {
            result.why = "partly done: some functions are still stubs";
            result.detail = describe(report.failures.front());
        }
        return result;
    }
    if (code == 0 && report.registered > 0 && report.passed == report.registered) {
        result.status = Status::passed;
        return result;
    }
    result.why =
        fmt::format("the test program exited with status {} without reporting a failure (see {})", code, log_path);
    return result;
}

std::string build_target(const std::string& target, const std::string& build_dir, const std::string& log_path) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const std::string command =
        fmt::format("cmake --build \"{}\" --parallel {} --target {} > \"{}\" 2>&1", build_dir, cores, target, log_path);
    if (std::system(command.c_str()) == 0) return "";
    std::ifstream log(log_path);
    std::string errors;
    int shown = 0;
    for (std::string line; std::getline(log, line) && shown < 4;)
        if (line.find("error") != std::string::npos) {
            errors += (shown ? "\n" : "") + line;
            ++shown;
        }
    return errors.empty() ? "the build failed (see " + log_path + ")" : errors;
}

std::string scoreboard(const std::vector<Result>& results) {
    std::string out = fmt::format("{:>3}  {:<18} {:<11} {:<12} {}\n", "#", "exercise", "section", "result", "tests");
    int passed = 0;
    for (const Result& r : results) {
        const std::string tests = r.tests_registered ? fmt::format("{}/{}", r.tests_passed, r.tests_registered) : "";
        out += fmt::format("{:>3}  {:<18} {:<11} {:<12} {}\n", r.exercise.number, r.exercise.name, r.exercise.section,
                           to_string(r.status), tests);
        if (r.status == Status::failed) {
            // Every line of a message keeps the column it starts in.
            const auto indented = [&](const std::string& text, const char* indent) {
                std::istringstream lines(text);
                for (std::string line; std::getline(lines, line);) out += indent + line + "\n";
            };
            indented(r.why, "       ");
            for (const std::string& line : r.detail) indented(line, "         ");
            out += "       hint: " + r.exercise.hint + "\n";
        }
        if (r.status == Status::passed) ++passed;
    }
    out += fmt::format("\n{} of {} passed.", passed, results.size());
    if (passed < static_cast<int>(results.size()))
        out += " Edit exercises/exNN_<name>.cpp, then run ./grade NN again; the solutions are in solutions/.";
    return out + "\n";
}

std::string to_json(const std::vector<Result>& results) {
    Json rows = Json::array();
    for (const Result& r : results)
        rows.push_back({{"number", r.exercise.number},
                        {"name", r.exercise.name},
                        {"section", r.exercise.section},
                        {"status", r.status == Status::passed   ? "passed"
                                   : r.status == Status::failed ? "failed"
                                                                : "not started"},
                        {"tests_passed", r.tests_passed},
                        {"tests_registered", r.tests_registered},
                        {"why", r.why},
                        {"detail", r.detail}});
    return Json{{"exercises", std::move(rows)}}.dump(2, ' ', false, Json::error_handler_t::replace);
}

std::vector<Mutant> read_mutants(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("grade: cannot read " + path);
    std::vector<Mutant> mutants;
    int line_number = 0;
    for (std::string line; std::getline(in, line);) {
        ++line_number;
        const auto fail = [&](const std::string& why) {
            return std::runtime_error(fmt::format("{}:{}: {}", path, line_number, why));
        };
        if (line.empty() || line[0] == '#') continue;
        if (line.rfind("ex", 0) == 0) {
            const size_t space = line.find(' ');
            Mutant m;
            try {
                m.number = std::stoi(line.substr(2, space - 2));
            } catch (const std::exception&) {
                throw fail("expected 'exNN what it breaks'");
            }
            m.what = space == std::string::npos ? "" : line.substr(space + 1);
            mutants.push_back(m);
        } else if (line.rfind("- ", 0) == 0 || line.rfind("+ ", 0) == 0 || line == "+") {
            if (mutants.empty()) throw fail("a '- ' or '+ ' line before any 'exNN' line");
            std::string& text = line[0] == '-' ? mutants.back().find : mutants.back().replace;
            text += (text.empty() ? "" : "\n") + (line.size() > 2 ? line.substr(2) : "");
        } else {
            throw fail("expected 'exNN …', '- text' or '+ text'");
        }
    }
    for (const Mutant& m : mutants)
        if (m.find.empty())
            throw std::runtime_error(fmt::format("{}: ex{:02d} '{}' has no '- ' line", path, m.number, m.what));
    return mutants;
}

std::string apply(const Mutant& mutant, const std::string& solution) {
    const size_t at = solution.find(mutant.find);
    if (at == std::string::npos || solution.find(mutant.find, at + 1) != std::string::npos)
        throw std::runtime_error(fmt::format("mutant ex{:02d} '{}': its text occurs {} in the solution", mutant.number,
                                             mutant.what, at == std::string::npos ? "nowhere" : "more than once"));
    return solution.substr(0, at) + mutant.replace + solution.substr(at + mutant.find.size());
}

bool memory_limit_enforced() { return resident_bytes(::getpid()) > 0; }

std::string declared_message(const std::string& attempt) {
    static const std::string marker = "// grade says: ";
    std::istringstream lines(attempt);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(marker, 0) == 0) {
            const std::string text = line.substr(marker.size());
            const size_t end = text.find_last_not_of(" \t\r");
            return end == std::string::npos ? "" : text.substr(0, end + 1);
        }
    return "";
}

std::string full_text(const Result& result) {
    std::string text = result.why;
    for (const std::string& line : result.detail) text += "\n" + line;
    return text;
}

}  // namespace grading
