#include "grading.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "nn/json.h"

namespace grading {

std::string Exercise::id() const { return fmt::format("ex{:02d}", number); }

const std::vector<Exercise>& exercises() {
    static const std::vector<Exercise> all{
        {1, "rope_by_hand", "§4.4", "§4.4 and exercise 1: rotate q by tθ and k by jθ, counter-clockwise; the score is their dot product"},
        {2, "rope_frequencies", "§4.5", "§4.5 and exercise 2: θ_i = base^(-2i/d) for i = 0 … d/2-1; a pair's period is 2π/θ_i positions"},
        {3, "kv_cache", "§5.1, §6.4", "§5.3 and exercise 3: per token, K and V (2) × layers × KV heads × head dim × bytes per number"},
        {4, "attention_params", "§5.2", "exercise 4: W_q and W_o are d × d; W_k and W_v are d × (KV heads × head dim)"},
        {5, "window_fractions", "§6.2", "exercise 5: count the scores each implementation computes, divided by T²"},
        {6, "receptive_field", "§6.3", "§6.3: each layer reaches W-1 tokens further back, so L layers reach L(W-1)"},
        {7, "wrong_rope", "§4.3", "§4.3 and exercise 7: rotations are orthogonal, RᵀR = I"},
        {8, "swiglu_hidden", "§3.2", "exercise 8: 3·d·d_ff = 2·d·4d, then round up to the multiple"},
        {9, "norms", "§3.2", "exercise 9: RMSNorm divides by sqrt(mean(x²) + eps); LayerNorm subtracts the mean first and uses the biased variance"},
        {10, "probe_params", "§2.8", "exercise 10: a linear probe trains only the head's weight and bias; full fine-tuning trains every parameter"},
        {11, "rope_apply", "§4.6", "§4.6: pair i with i + d/2 (half) or 2i with 2i+1 (interleaved); the angle is position × θ_i, positions start at 0"},
        {12, "rms_norm_backward", "§3.2", "§3.2: with r = 1/rms, dx = r·(g⊙dy) - x·r³·mean(g⊙dy⊙x); dg sums dy⊙x·r over rows"},
        {13, "swiglu", "§3.2", "§3.2: W_down(SiLU(W_gate x) ⊙ W_up x), SiLU(x) = x·σ(x), no biases"},
        {14, "gqa_attention", "§5.2", "§5.2: query head h uses KV head floor(h / g), g = query heads / KV heads"},
        {15, "sliding_window", "§6.1, §6.2", "§6.1: position t sees j with t - W < j ≤ t (W tokens, itself included)"},
        {16, "rolling_cache", "§6.4, §4.7", "§6.4: position p lives in slot p mod (W-1); keys are rotated by their absolute position, never the slot"},
        {17, "uptrain_gqa", "§5.4", "§5.4: the new KV head j is the mean of old heads j·g … j·g + g-1 (consecutive groups)"},
        {18, "autoencoder", "§2.4", "§2.4: z = h(W x + b), x' = h(W' z + b'), loss = mean squared error; stack by encoding with the trained layers"},
    };
    return all;
}

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
                "no exercise matches '{}' (give a number 1-18, ex07, a range 3-9, or part of a name such as rope)", arg));
    }
    std::sort(chosen.begin(), chosen.end(), [](const Exercise& a, const Exercise& b) { return a.number < b.number; });
    return chosen;
}

std::string to_string(Status s) {
    switch (s) {
        case Status::passed: return "passed";
        case Status::failed: return "FAILED";
        case Status::not_started: return "not started";
    }
    return "?";
}

namespace {

std::string signal_name(int sig) {
    switch (sig) {
        case SIGSEGV: return "SIGSEGV, a segmentation fault: memory out of bounds or a null pointer";
        case SIGABRT: return "SIGABRT, an abort: an assert or an uncaught error";
        case SIGFPE: return "SIGFPE, an arithmetic error such as an integer division by zero";
        case SIGBUS: return "SIGBUS, a bus error";
        case SIGILL: return "SIGILL, an illegal instruction";
        default: return fmt::format("signal {} ({})", sig, strsignal(sig));
    }
}

struct Report {
    std::vector<json::Value> failures;
    int passed = 0, run = 0;
    std::string last_started;
    bool unfinished = false;   // a test started and never ended: the program died in it
};

Report read_report(const std::string& path) {
    Report report;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        json::Value v;
        try {
            v = json::parse(line);
        } catch (const std::exception&) {
            continue;   // a line cut short by a crash
        }
        const std::string& event = v.at("event").as_string();
        if (event == "start") {
            report.last_started = v.at("test").as_string();
            report.unfinished = true;
        }
        if (event == "failure") report.failures.push_back(v);
        if (event == "test") {
            report.unfinished = false;
            ++report.run;
            if (v.at("passed").as_bool()) ++report.passed;
        }
    }
    return report;
}

std::vector<std::string> describe(const json::Value& failure) {
    std::vector<std::string> lines{fmt::format("in test \"{}\"", failure.at("test").as_string())};
    const std::string check = failure.at("check").as_string(), expanded = failure.at("expanded").as_string();
    if (!check.empty()) lines.push_back("check:    " + check);
    if (!expanded.empty() && expanded != check) lines.push_back("got:      " + expanded);
    for (const json::Value& m : failure.at("messages").as_array()) {
        std::istringstream text(m.as_string());
        for (std::string line; std::getline(text, line);) lines.push_back(line);
    }
    return lines;
}

}  // namespace

Result run_exercise(const Exercise& exercise, const std::vector<std::string>& command, double timeout_seconds,
                    const std::string& log_path) {
    Result result;
    result.exercise = exercise;
    const std::string report_path = log_path + ".report";
    std::remove(report_path.c_str());

    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("grade: fork failed: ") + std::strerror(errno));
    if (pid == 0) {   // the child: its own process group, output to the log, then the test program
        setpgid(0, 0);
        const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        setenv("GRADE_REPORT", report_path.c_str(), 1);
        std::vector<char*> argv;
        for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        std::fprintf(stderr, "cannot run %s: %s\n", argv[0], std::strerror(errno));
        _exit(127);
    }

    // Wait, polling, until it exits or its time is up.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    int status = 0;
    bool timed_out = false;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            timed_out = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }

    const Report report = read_report(report_path);
    result.tests_passed = report.passed;
    result.tests_run = report.run;
    const std::string where = report.last_started.empty() ? "" : fmt::format(" in test \"{}\"", report.last_started);

    if (timed_out) {
        result.why = fmt::format("timed out after {:g} s{} (an endless loop?)", timeout_seconds, where);
        return result;
    }
    if (WIFSIGNALED(status)) {
        result.why = fmt::format("crashed{}: {}", where, signal_name(WTERMSIG(status)));
        return result;
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (report.unfinished && code != 0) {   // e.g. a sanitizer caught the crash and exited
        result.why = fmt::format("crashed{}: exit status {} (see {})", where, code, log_path);
        return result;
    }
    if (code == 127 && report.run == 0) {
        result.why = fmt::format("could not run {} (see {})", command[0], log_path);
        return result;
    }

    // A test case that met a stub (not_implemented) says nothing about the
    // student's other code: its later failures are consequences. The first
    // real failure is the first one in a test case without a stub.
    std::vector<std::string> stubbed;
    for (const json::Value& f : report.failures)
        if (f.at("not_implemented").as_bool()) stubbed.push_back(f.at("test").as_string());
    const auto real = std::find_if(report.failures.begin(), report.failures.end(), [&](const json::Value& f) {
        return std::find(stubbed.begin(), stubbed.end(), f.at("test").as_string()) == stubbed.end();
    });
    if (code == 0 && report.failures.empty() && report.run > 0) {
        result.status = Status::passed;
        return result;
    }
    if (real == report.failures.end() && !report.failures.empty()) {
        // Every failure is a stub's not_implemented.
        result.status = report.passed == 0 ? Status::not_started : Status::failed;
        if (result.status == Status::failed) {
            result.why = "partly done: some functions are still stubs";
            result.detail = describe(report.failures.front());
        }
        return result;
    }
    if (real != report.failures.end()) {
        result.why = fmt::format("{} of {} tests passed; the first failing check:", report.passed, report.run);
        result.detail = describe(*real);
        return result;
    }
    result.why = fmt::format("the test program exited with status {} without reporting a failure (see {})", code,
                             log_path);
    return result;
}

std::string build_exercise(const Exercise& exercise, const std::string& build_dir, const std::string& log_path) {
    const std::string command = fmt::format("cmake --build \"{}\" --target {}_tests > \"{}\" 2>&1", build_dir,
                                            exercise.id(), log_path);
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
        const std::string tests = r.tests_run ? fmt::format("{}/{}", r.tests_passed, r.tests_run) : "";
        out += fmt::format("{:>3}  {:<18} {:<11} {:<12} {}\n", r.exercise.number, r.exercise.name,
                           r.exercise.section, to_string(r.status), tests);
        if (r.status == Status::failed) {
            if (!r.why.empty()) out += "       " + r.why + "\n";
            for (const std::string& line : r.detail) out += "         " + line + "\n";
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
    json::Array rows;
    for (const Result& r : results) {
        json::Value row;
        row["number"] = r.exercise.number;
        row["name"] = r.exercise.name;
        row["section"] = r.exercise.section;
        row["status"] = r.status == Status::passed ? "passed" : r.status == Status::failed ? "failed" : "not started";
        row["tests_passed"] = r.tests_passed;
        row["tests_run"] = r.tests_run;
        row["why"] = r.why;
        row["detail"] = json::Array(r.detail.begin(), r.detail.end());
        rows.push_back(std::move(row));
    }
    json::Value out;
    out["exercises"] = std::move(rows);
    return json::dump(out, 2);
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
        if (m.find.empty()) throw std::runtime_error(fmt::format("{}: ex{:02d} '{}' has no '- ' line", path, m.number, m.what));
    return mutants;
}

std::string apply(const Mutant& mutant, const std::string& solution) {
    const size_t at = solution.find(mutant.find);
    if (at == std::string::npos || solution.find(mutant.find, at + 1) != std::string::npos)
        throw std::runtime_error(fmt::format("mutant ex{:02d} '{}': its text occurs {} in the solution", mutant.number,
                                             mutant.what, at == std::string::npos ? "nowhere" : "more than once"));
    return solution.substr(0, at) + mutant.replace + solution.substr(at + mutant.find.size());
}

}  // namespace grading
