#include "server/http_agent_transport.hpp"

namespace schemagate::server {

exchange::AgentTransport::Reply HttpAgentTransport::post_json(
    const std::string& url, const std::string& body, std::chrono::milliseconds timeout,
    const std::vector<std::pair<std::string, std::string>>& extra) {
  try {
    std::vector<http::Header> headers{{"Content-Type", "application/json"},
                                      {"Accept", "application/json"}};
    for (const auto& [name, value] : extra)
      headers.push_back({name, value});
    const auto res = client_.request("POST", url, body, headers, timeout);
    const auto type = res.header("Content-Type");
    return Reply{res.status, type ? std::string(*type) : std::string(), res.body};
  } catch (const http::ClientError& e) {
    if (e.kind() == http::ClientError::Kind::timeout) throw exchange::AgentTimeout(e.what());
    throw exchange::AgentUnreachable(e.what());
  }
}

}  // namespace schemagate::server
