#pragma once

// The Model Context Protocol face: the registry as MCP tools. `search_agents` and `get_agent`,
// every agent operation the caller may see, and every published scenario, each a tool whose
// inputSchema (and outputSchema, for object replies) is its JSON Schema. Calls go through the
// gateway (or the exchange, for a scenario), so they are validated, rate-limited and audited
// like any invocation. JSON-RPC in, JSON-RPC out; the HTTP transport is api/mcp_routes.

#include "registry/registry_service.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace schemagate::gateway {
class GatewayService;
}
namespace schemagate::exchange {
class ExchangeService;
}

namespace schemagate::mcp {

// The protocol revisions spoken, newest first: a client asking for one of them gets it, any
// other client is offered the newest.
inline const std::vector<std::string> kProtocolVersions = {"2025-11-25", "2025-06-18",
                                                           "2025-03-26"};

// A request the transport must refuse before JSON-RPC (no session, an unknown one): the HTTP
// status to answer with.
class McpTransportError : public std::runtime_error {
 public:
  McpTransportError(int status, std::string message)
      : std::runtime_error(std::move(message)), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

struct McpOptions {
  std::string server_version = "0.1.0";
  std::size_t agents_per_page = 50;  // tools/list pages by agents
  std::size_t max_sessions = 10000;  // the oldest idle session goes first
  std::chrono::minutes session_idle{60};
  // Each tool call that reaches an agent or a scenario, for the audit log: (client, target as
  // "<agent>/<operation>" or "scenario/<name>", HTTP-equivalent status, milliseconds).
  std::function<void(const std::string&, const std::string&, int, double)> audit;
};

class McpService {
 public:
  // The JSON Schema of a scenario's published template (null when none is published).
  using ScenarioSchema = std::function<boost::json::value(const std::string& scenario)>;
  McpService(registry::RegistryService& registry, gateway::GatewayService& gateway,
             exchange::ExchangeService& exchange, ScenarioSchema scenario_schema,
             McpOptions options = {});

  struct Reply {
    std::optional<boost::json::value> message;  // none: a notification or response (HTTP 202)
    std::string new_session;                    // set by initialize: the Mcp-Session-Id
  };
  // One JSON-RPC message. `session` is the Mcp-Session-Id header (empty for initialize).
  // Throws McpTransportError for a missing (400) or unknown (404) session.
  Reply handle(const boost::json::value& message, const std::string& session,
               const registry::Caller& caller);

  // DELETE /mcp. False when there is no such session for this caller.
  bool end_session(const std::string& session, const registry::Caller& caller);

  // The session's server-to-client messages (the GET stream): waits up to `wait` for one.
  // Throws McpTransportError 404 when the session is gone.
  std::vector<boost::json::value> next_notifications(const std::string& session,
                                                     const registry::Caller& caller,
                                                     std::chrono::milliseconds wait);

  // The tool list changed (an agent registered, replaced or removed; a template published):
  // every open session is told once (notifications/tools/list_changed).
  void tools_changed();

  // Wakes and ends every waiting stream (server shutdown).
  void stop();

 private:
  struct Session {
    std::string client_id;
    std::string protocol_version;
    bool list_changed = false;
    std::chrono::steady_clock::time_point last_seen;
  };
  struct Target {
    std::string agent, operation, scenario;
  };

  boost::json::value initialize(const boost::json::object& params, const registry::Caller& caller,
                                std::string& new_session);
  boost::json::object list_tools(const boost::json::object& params, const registry::Caller& caller);
  boost::json::object call_tool(const boost::json::object& params, const registry::Caller& caller);
  boost::json::object search_agents(const boost::json::object& args,
                                    const registry::Caller& caller);
  boost::json::object get_agent(const boost::json::object& args, const registry::Caller& caller);
  void add_agent_tools(const registry::AgentCard& card, boost::json::array& tools);
  std::optional<Target> find_tool(const std::string& name, const registry::Caller& caller);
  void touch_session(const std::string& id, const registry::Caller& caller);

  registry::RegistryService& registry_;
  gateway::GatewayService& gateway_;
  exchange::ExchangeService& exchange_;
  ScenarioSchema scenario_schema_;
  McpOptions options_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::unordered_map<std::string, Session> sessions_;
  // Tool names handed out -> what they call (names are made from ids and may be shortened).
  std::unordered_map<std::string, Target> tools_;
};

}  // namespace schemagate::mcp
