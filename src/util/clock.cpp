#include "util/clock.hpp"

#include <cctype>
#include <cstdio>
#include <ctime>

namespace schemagate::util {

std::string format_rfc3339(Clock::time_point t) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

std::optional<std::int64_t> parse_rfc3339_ms(std::string_view text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  const std::string t(text);
  int used = 0;
  if (std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &used) != 6 ||
      used != 19) {
    return std::nullopt;
  }
  std::size_t i = 19;
  std::int64_t ms = 0;
  if (i < t.size() && t[i] == '.') {
    int digits = 0;
    for (++i; i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])); ++i, ++digits) {
      if (digits < 3) ms = ms * 10 + (t[i] - '0');
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 3; ++digits)
      ms *= 10;
  }
  if (i + 1 != t.size() || (t[i] != 'Z' && t[i] != 'z')) return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return static_cast<std::int64_t>(timegm(&tm)) * 1000 + ms;
}

std::string format_http_date(std::int64_t unix_ms) {
  const std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

}  // namespace schemagate::util
