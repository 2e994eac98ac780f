#pragma once

#include "exchange/agent_transport.hpp"
#include "http/client.hpp"
#include "http/server.hpp"

namespace schemagate::server {

// The exchange's way out to agents, over the pooled HTTP client.
class HttpAgentTransport final : public exchange::AgentTransport {
 public:
  explicit HttpAgentTransport(http::Client& client) : client_(client) {}
  // From then on post_json_async runs on the server's I/O threads instead of blocking.
  void use_async_client(http::AsyncClient* client) { async_ = client; }
  Reply post_json(const std::string& url, const std::string& body,
                  std::chrono::milliseconds timeout,
                  const std::vector<std::pair<std::string, std::string>>& headers) override;
  void post_json_async(const std::string& url, const std::string& body,
                       std::chrono::milliseconds timeout,
                       const std::vector<std::pair<std::string, std::string>>& headers,
                       ReplyCallback done) override;
  std::unique_ptr<Stream> post_for_stream(
      const std::string& url, const std::string& body, std::chrono::milliseconds timeout,
      const std::vector<std::pair<std::string, std::string>>& headers) override;

 private:
  http::Client& client_;
  http::AsyncClient* async_ = nullptr;
};

}  // namespace schemagate::server
