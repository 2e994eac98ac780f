#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace schemagate::exchange {

// How the exchange reaches an agent's own HTTP endpoint. The server wires an HTTP client in;
// the exchange room itself never includes http/.
class AgentTransport {
 public:
  struct Reply {
    int status = 0;
    std::string content_type;
    std::string body;
  };
  // A reply read as it arrives (an agent's server-sent events).
  class Stream {
   public:
    virtual ~Stream() = default;
    int status = 0;
    std::string content_type;
    // Appends the next piece of the body to `out`; false once it is complete. Throws
    // AgentTimeout when nothing arrives within the call's timeout, AgentUnreachable when the
    // connection breaks.
    virtual bool read(std::string& out) = 0;
  };
  virtual ~AgentTransport() = default;
  // POSTs a JSON body. Throws AgentTimeout or AgentUnreachable.
  // `headers` are extra request headers (credentials the gateway holds for this agent).
  virtual Reply post_json(const std::string& url, const std::string& body,
                          std::chrono::milliseconds timeout,
                          const std::vector<std::pair<std::string, std::string>>& headers = {}) = 0;
  // post_json without waiting: `done` gets the reply, or an AgentTimeout / AgentUnreachable in
  // the exception_ptr, possibly on another thread. This default calls post_json inline.
  using ReplyCallback = std::function<void(Reply, std::exception_ptr)>;
  virtual void post_json_async(const std::string& url, const std::string& body,
                               std::chrono::milliseconds timeout,
                               const std::vector<std::pair<std::string, std::string>>& headers,
                               ReplyCallback done) {
    Reply reply;
    try {
      reply = post_json(url, body, timeout, headers);
    } catch (...) {
      done(Reply{}, std::current_exception());
      return;
    }
    done(std::move(reply), nullptr);
  }
  // POSTs a JSON body asking for an event stream (Accept: text/event-stream) and returns once
  // the reply's header is in. Throws AgentTimeout or AgentUnreachable.
  virtual std::unique_ptr<Stream> post_for_stream(
      const std::string& url, const std::string& body, std::chrono::milliseconds timeout,
      const std::vector<std::pair<std::string, std::string>>& headers = {}) = 0;
};

class AgentTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class AgentUnreachable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace schemagate::exchange
