#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace schemagate::util {

// Domain code reads time only through a Clock so that tests can simulate weeks in milliseconds.
class Clock {
 public:
  using time_point = std::chrono::system_clock::time_point;
  virtual ~Clock() = default;
  virtual time_point now() const = 0;

  std::int64_t now_unix_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now().time_since_epoch()).count();
  }
};

class SystemClock final : public Clock {
 public:
  time_point now() const override { return std::chrono::system_clock::now(); }
};

// A clock that moves only when told to.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(time_point start = time_point{std::chrono::seconds{1'700'000'000}})
      : ticks_(start.time_since_epoch().count()) {}
  time_point now() const override { return time_point{time_point::duration{ticks_.load()}}; }
  void advance(std::chrono::system_clock::duration d) { ticks_ += d.count(); }
  void set(time_point t) { ticks_ = t.time_since_epoch().count(); }

 private:
  std::atomic<time_point::rep> ticks_;
};

// RFC 3339 UTC timestamp with millisecond precision, e.g. 2026-11-21T08:04:00.123Z.
std::string format_rfc3339(Clock::time_point t);
// The milliseconds since the epoch of an RFC 3339 timestamp in UTC ("Z", fractions optional);
// nullopt when the text is not one.
std::optional<std::int64_t> parse_rfc3339_ms(std::string_view text);
// RFC 9110 §5.6.7 IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") of a moment.
std::string format_http_date(std::int64_t unix_ms);

}  // namespace schemagate::util
