// The Catch2 main() of every exercise's grading tests, with a listener that
// tells the grader (tests/exercises/grade.cpp) what happened, one line of
// JSON per event through the report channel (report_channel.h):
//
//   {"event": "run", "registered": 6}             before the first test
//   {"event": "start", "test": "..."}
//   {"event": "failure", "test": "...", "check": "CHECK(x == Approx(0.5403))",
//    "expanded": "0.8415 == Approx(0.5403)", "messages": ["..."],
//    "not_implemented": false, "fatal": false, "file": "...", "line": 42}
//     ("fatal": Catch caught a signal such as SIGSEGV in that test)
//   {"event": "test", "test": "...", "passed": true}
//   {"event": "end", "registered": 6, "finished": 6}   after the last test
//
// The grader reads the lines as they come, so it knows where a program that
// crashes half way died; a run without its "end" event did not finish,
// whatever its exit status.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "lessons/common/json.h"
#include "report_channel.h"
#include "thrown_by.h"

namespace {

// The writing end of the report channel (report_channel.h), with internal
// linkage: the student's code cannot call it.
namespace channel {
using grading::report_channel::kKeyLength;
using grading::report_channel::kVariable;

// Plain data, valid before any constructor has run.
int descriptor = -1;
char key[kKeyLength];

// Reads the key the grader wrote into the socket, then forgets where the
// socket came from. Runs before main() and before the static initialisers
// of other files (priority 101), so before any of the student's code.
#if defined(__ELF__)
__attribute__((constructor(101)))
#else
__attribute__((constructor))
#endif
void open_channel() {
    const char* variable = std::getenv(kVariable);
    if (!variable) return;
    char* end = nullptr;
    const long fd = std::strtol(variable, &end, 10);
    unsetenv(kVariable);
    if (*end != '\0' || fd < 0) return;
    int got = 0;
    while (got < kKeyLength) {
        const ssize_t n = ::read(static_cast<int>(fd), key + got, static_cast<size_t>(kKeyLength - got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        got += static_cast<int>(n);
    }
    fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    descriptor = static_cast<int>(fd);
}

bool is_open() { return descriptor >= 0; }

// One event: the key, a space, `json` (one line), a newline.
void write(const std::string& json) {
    if (descriptor < 0) return;
    const std::string line = std::string(key, kKeyLength) + " " + json + "\n";
#if defined(MSG_NOSIGNAL)
    const int flags = MSG_NOSIGNAL;   // a grader that is gone is not a crash of the test
#else
    const int flags = 0;
#endif
    for (size_t sent = 0; sent < line.size();) {
        const ssize_t n = ::send(descriptor, line.data() + sent, line.size() - sent, flags);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        sent += static_cast<size_t>(n);
    }
}

}  // namespace channel

class GradeListener : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;

    bool assertionEnded(const Catch::AssertionStats& stats) override {
        const Catch::AssertionResult& result = stats.assertionResult;
        if (result.isOk() || !open()) return true;
        std::vector<std::string> messages;
        bool not_implemented = false;
        for (const Catch::MessageInfo& m : stats.infoMessages) {
            messages.push_back(lessons::json::string(m.message));
            if (m.message.rfind("not implemented:", 0) == 0) not_implemented = true;
        }
        // An exception that escaped: Catch's own line ("Unknown exception",
        // or its what()) becomes one that names who threw what.
        if (result.getResultType() == Catch::ResultWas::ThrewException && !not_implemented) {
            if (!messages.empty() && !stats.infoMessages.empty() && stats.infoMessages.back().message == result.getMessage())
                messages.pop_back();
            messages.push_back(lessons::json::string(exception_message(result.getMessage())));
        }
        const std::string check =
            result.hasExpression() ? result.getExpressionInMacro() : std::string(result.getTestMacroName());
        write(lessons::json::object({{"event", lessons::json::string("failure")},
                                     {"test", lessons::json::string(test_)},
                                     {"check", lessons::json::string(check)},
                                     {"expanded", lessons::json::string(result.hasExpandedExpression()
                                                                            ? result.getExpandedExpression()
                                                                            : std::string())},
                                     {"messages", lessons::json::array(messages)},
                                     {"not_implemented", lessons::json::boolean(not_implemented)},
                                     {"fatal", lessons::json::boolean(result.getResultType() ==
                                                                      Catch::ResultWas::FatalErrorCondition)},
                                     {"file", lessons::json::string(result.getSourceInfo().file)},
                                     {"line", lessons::json::integer(
                                                  static_cast<long long>(result.getSourceInfo().line))}}));
        return true;
    }

    void testRunStarting(const Catch::TestRunInfo& info) override {
        TestEventListenerBase::testRunStarting(info);
        registered_ = static_cast<long long>(
            Catch::filterTests(Catch::getAllTestCasesSorted(*m_config), m_config->testSpec(), *m_config).size());
        write(lessons::json::object(
            {{"event", lessons::json::string("run")}, {"registered", lessons::json::integer(registered_)}}));
    }

    void testCaseStarting(const Catch::TestCaseInfo& info) override {
        TestEventListenerBase::testCaseStarting(info);
        test_ = info.name;
        write(lessons::json::object({{"event", lessons::json::string("start")}, {"test", lessons::json::string(test_)}}));
    }

    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        ++finished_;
        write(lessons::json::object({{"event", lessons::json::string("test")},
                                     {"test", lessons::json::string(test_)},
                                     {"passed", lessons::json::boolean(stats.totals.assertions.allOk())}}));
        TestEventListenerBase::testCaseEnded(stats);
    }

    void testRunEnded(const Catch::TestRunStats& stats) override {
        write(lessons::json::object({{"event", lessons::json::string("end")},
                                     {"registered", lessons::json::integer(registered_)},
                                     {"finished", lessons::json::integer(finished_)}}));
        TestEventListenerBase::testRunEnded(stats);
    }

private:
    static bool open() { return channel::is_open(); }
    static void write(const std::string& line) { channel::write(line); }

    // An exception that escaped the student's code: which function threw
    // it, and for one that is no std::exception (throw 42) what to do.
    static std::string exception_message(const std::string& caught) {
        const grading::Thrown thrown = grading::last_thrown();
        const std::string who = thrown.function.empty() ? "your code" : thrown.function;
        if (grading::is_foreign_exception(caught, thrown.type))
            return who + " threw " + (thrown.type.empty() ? "something" : "an exception of type " + thrown.type) +
                   (caught == "Unknown exception" ? "" : " (\"" + caught + "\")") +
                   ", which is not a std::exception: throw std::invalid_argument(\"...\") or another std error "
                   "that says what is wrong";
        return who + " threw " + (thrown.type.empty() ? "an exception" : thrown.type) + ": " + caught;
    }

    long long registered_ = 0, finished_ = 0;
    std::string test_;
};

}  // namespace

CATCH_REGISTER_LISTENER(GradeListener)
