#pragma once

#include "exchange/agent_transport.hpp"
#include "http/client.hpp"

namespace schemagate::server {

// The exchange's way out to agents, over the pooled HTTP client.
class HttpAgentTransport final : public exchange::AgentTransport {
 public:
  explicit HttpAgentTransport(http::Client& client) : client_(client) {}
  Reply post_json(const std::string& url, const std::string& body,
                  std::chrono::milliseconds timeout,
                  const std::vector<std::pair<std::string, std::string>>& headers) override;
  std::unique_ptr<Stream> post_for_stream(
      const std::string& url, const std::string& body, std::chrono::milliseconds timeout,
      const std::vector<std::pair<std::string, std::string>>& headers) override;

 private:
  http::Client& client_;
};

}  // namespace schemagate::server
