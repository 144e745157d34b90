// The Catch2 main() of every exercise's grading tests, with a listener that
// tells the grader (tests/exercises/grade.cpp) what happened: when the
// environment variable GRADE_REPORT names a file, each failed check and
// each test case's start and end are appended to it as one line of JSON,
//
//   {"event": "start", "test": "..."}
//   {"event": "failure", "test": "...", "check": "CHECK(x == Approx(0.5403))",
//    "expanded": "0.8415 == Approx(0.5403)", "messages": ["..."],
//    "not_implemented": false, "file": "...", "line": 42}
//   {"event": "test", "test": "...", "passed": true}
//
// and the grader reads the file even when the program crashes half way
// (every line is flushed as it is written).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include "lessons/common/json.h"

namespace {

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
                                     {"file", lessons::json::string(result.getSourceInfo().file)},
                                     {"line", lessons::json::integer(
                                                  static_cast<long long>(result.getSourceInfo().line))}}));
        return true;
    }

    void testCaseStarting(const Catch::TestCaseInfo& info) override {
        TestEventListenerBase::testCaseStarting(info);
        test_ = info.name;
        if (open())
            write(lessons::json::object(
                {{"event", lessons::json::string("start")}, {"test", lessons::json::string(test_)}}));
    }

    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        if (open())
            write(lessons::json::object({{"event", lessons::json::string("test")},
                                         {"test", lessons::json::string(test_)},
                                         {"passed", lessons::json::boolean(stats.totals.assertions.allOk())}}));
        TestEventListenerBase::testCaseEnded(stats);
    }

private:
    bool open() {
        if (!out_.is_open()) {
            const char* path = std::getenv("GRADE_REPORT");
            if (!path) return false;
            out_.open(path, std::ios::app);
        }
        return out_.good();
    }
    void write(const std::string& line) { out_ << line << std::endl; }

    std::ofstream out_;
    std::string test_;
};

}  // namespace

CATCH_REGISTER_LISTENER(GradeListener)
