#pragma once

// Server-agent SDK: an agent that serves one seed-000 scenario in-process. It validates what it
// receives with the same engine as the gateway, so it is safe to expose directly too.

#include "exchange/template.hpp"

#include <boost/json/value.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace schemagate::sdk {

struct AgentOptions {
  std::string host = "127.0.0.1";
  unsigned short port = 0;  // 0: a free port, see start()
  unsigned threads = 1;
};

class AgentServer {
 public:
  // Receives a payload already validated and completed with defaults; returns the result.
  using Handler = std::function<boost::json::value(const boost::json::object& payload)>;

  // One server-sent event of a streamed reply.
  struct Event {
    std::string name;
    boost::json::value data;
  };
  // Called in turn until it returns nothing; it may block between events (it runs on one of the
  // agent's handler threads, so each open stream holds one).
  using EventSource = std::function<std::optional<Event>()>;
  // The events that answer a validated payload, for callers that ask for a stream
  // (`Accept: text/event-stream`, as the gateway does for a streamed invocation).
  using StreamHandler = std::function<EventSource(const boost::json::object& payload)>;

  // Throws std::invalid_argument listing every problem of the template.
  AgentServer(const boost::json::value& template_json, Handler handler, AgentOptions options = {});
  ~AgentServer();  // stops serving
  AgentServer(const AgentServer&) = delete;
  AgentServer& operator=(const AgentServer&) = delete;

  // Answers callers that ask for a stream with events (set before start()). Without it they get
  // the JSON reply, which the gateway relays as one `result` event.
  void stream_with(StreamHandler handler);

  // Binds and serves on background threads; returns the port.
  unsigned short start();
  void stop();

  // Where a gateway forwards executed payloads (POST, JSON): http://host:port/execute.
  std::string execute_url() const;
  const exchange::Template& schema_template() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace schemagate::sdk
