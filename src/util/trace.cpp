#include "util/trace.hpp"

#include <random>

namespace schemagate::util {

namespace {

thread_local const TraceContext* current = nullptr;

bool lower_hex(std::string_view s, std::size_t n) {
  if (s.size() != n) return false;
  for (const char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return s.find_first_not_of('0') != std::string_view::npos;  // all zeros is invalid
}

std::string random_hex(std::size_t digits) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  while (out.size() < digits) {
    auto r = rng();
    for (int i = 0; i < 16 && out.size() < digits; ++i, r >>= 4)
      out += kHex[r & 0xF];
  }
  if (out.find_first_not_of('0') == std::string::npos) out.back() = '1';
  return out;
}

}  // namespace

TraceContext trace_from_headers(std::optional<std::string_view> traceparent,
                                std::optional<std::string_view> tracestate) {
  TraceContext t;
  t.span_id = random_hex(16);
  if (traceparent) {
    const std::string_view v = *traceparent;
    // version "-" trace-id "-" parent-id "-" flags. Version 00 is exactly that; a later
    // version may append "-" and more, which this reader ignores.
    const auto hex = [](std::string_view x) {
      return x.find_first_not_of("0123456789abcdef") == std::string_view::npos;
    };
    const auto version = v.substr(0, 2);
    const bool shaped = v.size() >= 55 && v[2] == '-' && v[35] == '-' && v[52] == '-' &&
                        hex(version) && version != "ff" &&
                        (version == "00" ? v.size() == 55 : v.size() == 55 || v[55] == '-');
    if (shaped && hex(v.substr(53, 2)) && lower_hex(v.substr(3, 32), 32) &&
        lower_hex(v.substr(36, 16), 16)) {
      t.trace_id = v.substr(3, 32);
      t.parent_id = v.substr(36, 16);
      t.flags = v.substr(53, 2);
      if (tracestate) t.tracestate = *tracestate;
      return t;
    }
  }
  t.trace_id = random_hex(32);
  return t;
}

const TraceContext* current_trace() {
  return current;
}

TraceScope::TraceScope(const TraceContext* trace) : previous_(current) {
  current = trace;
}

TraceScope::~TraceScope() {
  current = previous_;
}

}  // namespace schemagate::util
