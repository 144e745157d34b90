// The Catch2 listener linked into every exercise's grading tests (beside
// the shared main(), tests/main.cpp): it tells the grader (grade.cpp) what
// happened, one line of JSON per event through the report channel
// (report_channel.h):
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
// Version 2 declares what a listener needs only when asked to, outside
// the file of its main().
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include "catch.h"
#if AG_CATCH2_MAJOR >= 3
#include <catch2/catch_test_case_info.hpp>
#include <catch2/interfaces/catch_interfaces_config.hpp>
#include <catch2/internal/catch_test_case_registry_impl.hpp>
#include <catch2/reporters/catch_reporter_event_listener.hpp>
#include <catch2/reporters/catch_reporter_registrars.hpp>
#endif

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report_channel.h"
#include "thrown_by.h"

namespace {

// The writing end of the report channel (report_channel.h), with internal
// linkage: the student's code cannot call it.
namespace channel {
using grading::report_channel::kKeyLength;
using grading::report_channel::kLostStatus;
using grading::report_channel::kVariable;

// Plain data, valid before any constructor has run.
int descriptor = -1;
char key[kKeyLength];
dev_t device = 0;  // which socket the descriptor names (fstat), to notice another file put in its place
ino_t inode = 0;

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
    struct stat st;
    if (fstat(static_cast<int>(fd), &st) != 0) return;
    fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    device = st.st_dev;
    inode = st.st_ino;
    descriptor = static_cast<int>(fd);
}

// The student's code closed the channel, shut it down or put another file
// on its descriptor: nothing more can be reported, so the program ends now,
// with the status that tells the grader why (report_channel.h).
[[noreturn]] void lost() { _exit(kLostStatus); }

bool is_open() { return descriptor >= 0; }

// One event: the key, a space, the event as one line of JSON, a newline.
// Text that is not UTF-8 (a student's message may hold any bytes) is
// written with U+FFFD in place of the bad bytes.
void write(const nlohmann::ordered_json& event) {
    if (descriptor < 0) return;
    struct stat st;
    if (fstat(descriptor, &st) != 0 || st.st_dev != device || st.st_ino != inode) lost();
    const std::string line = std::string(key, kKeyLength) + " " +
                             event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
#if defined(MSG_NOSIGNAL)
    const int flags = MSG_NOSIGNAL;  // a channel shut down ends the program with kLostStatus, not SIGPIPE
#else
    const int flags = 0;
#endif
    for (size_t sent = 0; sent < line.size();) {
        const ssize_t n = ::send(descriptor, line.data() + sent, line.size() - sent, flags);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) lost();
        sent += static_cast<size_t>(n);
    }
}

}  // namespace channel

// Catch2 version 3 renamed the listeners' base class, and its
// assertionEnded returns nothing.
#if AG_CATCH2_MAJOR >= 3
using ListenerBase = Catch::EventListenerBase;
#else
using ListenerBase = Catch::TestEventListenerBase;
#endif

class GradeListener : public ListenerBase {
public:
    using ListenerBase::ListenerBase;

#if AG_CATCH2_MAJOR >= 3
    void assertionEnded(const Catch::AssertionStats& stats) override { report_failure(stats); }
#else
    bool assertionEnded(const Catch::AssertionStats& stats) override {
        report_failure(stats);
        return true;
    }
#endif

    void report_failure(const Catch::AssertionStats& stats) {
        const Catch::AssertionResult& result = stats.assertionResult;
        if (result.isOk() || !open()) return;
        std::vector<std::string> messages;
        bool not_implemented = false;
        for (const Catch::MessageInfo& m : stats.infoMessages) {
            messages.push_back(m.message);
            if (m.message.rfind("not implemented:", 0) == 0) not_implemented = true;
        }
        // An exception that escaped: Catch's own line ("Unknown exception",
        // or its what()) becomes one that names who threw what.
        if (result.getResultType() == Catch::ResultWas::ThrewException && !not_implemented) {
            const std::string caught(result.getMessage());  // a StringRef in version 3
            if (!messages.empty() && !stats.infoMessages.empty() && stats.infoMessages.back().message == caught)
                messages.pop_back();
            messages.push_back(exception_message(caught));
        }
        const std::string check =
            result.hasExpression() ? result.getExpressionInMacro() : std::string(result.getTestMacroName());
        write({{"event", "failure"},
               {"test", test_},
               {"check", check},
               {"expanded", result.hasExpandedExpression() ? result.getExpandedExpression() : std::string()},
               {"messages", messages},
               {"not_implemented", not_implemented},
               {"fatal", result.getResultType() == Catch::ResultWas::FatalErrorCondition},
               {"file", result.getSourceInfo().file},
               {"line", result.getSourceInfo().line}});
    }

    void testRunStarting(const Catch::TestRunInfo& info) override {
        ListenerBase::testRunStarting(info);
        registered_ = static_cast<long long>(
            Catch::filterTests(Catch::getAllTestCasesSorted(*m_config), m_config->testSpec(), *m_config).size());
        write({{"event", "run"}, {"registered", registered_}});
    }

    void testCaseStarting(const Catch::TestCaseInfo& info) override {
        ListenerBase::testCaseStarting(info);
        test_ = info.name;
        write({{"event", "start"}, {"test", test_}});
    }

    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        ++finished_;
        write({{"event", "test"}, {"test", test_}, {"passed", stats.totals.assertions.allOk()}});
        ListenerBase::testCaseEnded(stats);
    }

    void testRunEnded(const Catch::TestRunStats& stats) override {
        write({{"event", "end"}, {"registered", registered_}, {"finished", finished_}});
        ListenerBase::testRunEnded(stats);
    }

private:
    static bool open() { return channel::is_open(); }
    static void write(const nlohmann::ordered_json& event) { channel::write(event); }

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
