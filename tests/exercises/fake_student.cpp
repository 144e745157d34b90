// The "student's" code of the fake exercise (fake_exercise.cpp): namespace
// ex99, compiled as a candidate is, each function misbehaving on purpose.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "exercises/not_implemented.h"

// The "student's" functions: namespace ex99, as an exercise's are.
namespace ex99 {

double score(double x) { return x * 0.5; }
double stub(double) { throw exercises::not_implemented("ex99 fake: stub"); }
double throws_an_int(double x) {
    if (x > 0) throw 42;
    return x;
}
double throws_out_of_range(double x) {
    const std::vector<double> values{x};
    return values.at(3);
}
// A student who went looking for the grader's channel: every socket among
// the open descriptors gets a report line of its own making.
void forge_a_pass() {
    for (int fd = 3; fd < 256; ++fd) {
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
        const std::string lines = R"({"event": "test", "test": "forged", "passed": true})"
                                  "\n"
                                  R"({"event": "end", "registered": 1, "finished": 1})"
                                  "\n";
        (void)!::write(fd, lines.data(), lines.size());
    }
}

// Code that runs at exit and crashes: the tests have all ended by then.
void abort_at_exit() {
    std::atexit([] { std::abort(); });
}

// A student who tidies up descriptors it never opened: every socket among
// them is closed, or has /dev/null put in its place (dup2), so the grader's
// channel goes silent while the tests go on.
void silence_the_report(bool close_it) {
    const int null = ::open("/dev/null", O_WRONLY);
    for (int fd = 3; fd < 256; ++fd) {
        struct stat st;
        if (fd == null || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
        if (close_it)
            ::close(fd);
        else
            ::dup2(null, fd);
    }
    if (null >= 0) ::close(null);
}

}  // namespace ex99
