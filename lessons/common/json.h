#pragma once
// A tiny JSON writer: enough to write what a lesson reports (report.h).
// Values are built as JSON text and composed; nothing is parsed.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lessons::json {

// "text" with quotes, backslashes and control characters escaped.
std::string string(std::string_view text);
// 17 significant digits (reads back as the same double); NaN and ±Inf,
// which JSON cannot hold, become null.
std::string number(double x);
std::string integer(long long n);
std::string boolean(bool b);
// Compose already-written JSON values; members keep their order.
std::string array(const std::vector<std::string>& items);
std::string object(const std::vector<std::pair<std::string, std::string>>& members);

}  // namespace lessons::json
