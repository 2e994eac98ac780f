#pragma once

#include <chrono>
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
  virtual ~AgentTransport() = default;
  // POSTs a JSON body. Throws AgentTimeout or AgentUnreachable.
  // `headers` are extra request headers (credentials the gateway holds for this agent).
  virtual Reply post_json(const std::string& url, const std::string& body,
                          std::chrono::milliseconds timeout,
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
