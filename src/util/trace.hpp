#pragma once

// W3C Trace Context (https://www.w3.org/TR/trace-context/): the trace a request belongs to, so
// that one invocation can be followed from the client through schemagate to the agent, in the
// access log and the audit entries of each hop.

#include <optional>
#include <string>
#include <string_view>

namespace schemagate::util {

struct TraceContext {
  std::string trace_id;   // 32 lower-case hex digits
  std::string span_id;    // 16 hex digits: this server's hop, the parent of what it calls
  std::string parent_id;  // the caller's span from `traceparent`; empty when the trace starts here
  std::string flags = "00";
  std::string tracestate;  // passed on unchanged

  // The `traceparent` this hop sends on: version 00, its trace, its own span, the flags.
  std::string traceparent() const { return "00-" + trace_id + "-" + span_id + "-" + flags; }
};

// A request's context from its headers. A missing or malformed `traceparent` (wrong lengths,
// upper-case or non-hex digits, an all-zero id, version ff) starts a new trace, as the
// specification says; `tracestate` is kept only with a valid parent.
TraceContext trace_from_headers(std::optional<std::string_view> traceparent,
                                std::optional<std::string_view> tracestate);

// The trace of the request this thread is serving (set by the HTTP server around handlers);
// null outside one. Outgoing HTTP requests carry it on.
const TraceContext* current_trace();

class TraceScope {
 public:
  explicit TraceScope(const TraceContext* trace);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  const TraceContext* previous_;
};

}  // namespace schemagate::util
