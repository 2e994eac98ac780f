#include "api/mcp_routes.hpp"

#include "api/json_body.hpp"
#include "mcp/mcp_service.hpp"
#include "util/json_text.hpp"

#include <algorithm>

namespace schemagate::api {

namespace {

namespace bj = boost::json;
using gateway::Role;

// A transport-level refusal, still in JSON-RPC form so that MCP clients can read it.
http::Response rpc_failure(int status, int code, const std::string& message) {
  return http::Response::json(
      status, bj::object{{"jsonrpc", "2.0"},
                         {"id", nullptr},
                         {"error", bj::object{{"code", code}, {"message", message}}}});
}

// MCP's transport rules: a browser page on another origin must not drive a local server (DNS
// rebinding), and a protocol version the server does not speak is refused.
std::optional<http::Response> refuse(const http::Request& req) {
  if (const auto origin = req.header("Origin")) {
    const auto host = req.header("Host");
    const std::string o(*origin);
    const bool same =
        host && (o == "http://" + std::string(*host) || o == "https://" + std::string(*host));
    if (!same) {
      return rpc_failure(403, -32000, "requests from origin " + o + " are not accepted");
    }
  }
  if (const auto v = req.header("MCP-Protocol-Version")) {
    if (std::find(mcp::kProtocolVersions.begin(), mcp::kProtocolVersions.end(), std::string(*v)) ==
        mcp::kProtocolVersions.end()) {
      return rpc_failure(400, -32000,
                         "MCP-Protocol-Version " + std::string(*v) + " is not supported");
    }
  }
  return std::nullopt;
}

std::string session_of(const http::Request& req) {
  const auto s = req.header("Mcp-Session-Id");
  return s ? std::string(*s) : std::string();
}

// The session's notifications as server-sent events; a comment every 15 s keeps proxies from
// closing an idle stream. Ends when the session does.
class NotificationStream final : public http::BodyStream {
 public:
  NotificationStream(mcp::McpService& service, std::string session, registry::Caller caller,
                     std::vector<bj::value> first)
      : service_(service),
        session_(std::move(session)),
        caller_(std::move(caller)),
        first_(std::move(first)) {}
  bool next(std::string& piece) override {
    std::vector<bj::value> messages = std::move(first_);
    first_.clear();
    if (messages.empty()) {
      try {
        messages = service_.next_notifications(session_, caller_, std::chrono::seconds(15));
      } catch (const mcp::McpTransportError&) {
        return false;
      }
    }
    if (messages.empty()) {
      piece = ": keep-alive\n\n";
      return true;
    }
    for (const auto& m : messages)
      piece += "event: message\ndata: " + util::json_text(m) + "\n\n";
    return true;
  }

 private:
  mcp::McpService& service_;
  std::string session_;
  registry::Caller caller_;
  std::vector<bj::value> first_;
};

}  // namespace

void add_mcp_routes(http::Router& router, mcp::McpService& service, Auth& auth,
                    const json::ParseLimits& limits) {
  router.add("POST", "/mcp", [&service, &auth, &limits](http::Request& req) {
    if (auto refused = refuse(req)) return std::move(*refused);
    const auto who = auth.require(req, Role::client);
    bj::value message;
    try {
      message = read_json_body(req, limits);
    } catch (const http::Error& e) {
      if (e.status() != 400) throw;
      return rpc_failure(400, -32700, e.what());  // parse error
    }
    try {
      auto reply = service.handle(message, session_of(req), Auth::caller(who));
      if (!reply.message) return http::Response{202, {}, {}, nullptr};
      auto r = http::Response::json(200, *reply.message);
      if (!reply.new_session.empty()) r.set_header("Mcp-Session-Id", reply.new_session);
      return r;
    } catch (const mcp::McpTransportError& e) {
      return rpc_failure(e.status(), -32000, e.what());
    }
  });
  router.add("GET", "/mcp", [&service, &auth](http::Request& req) {
    if (auto refused = refuse(req)) return std::move(*refused);
    const auto who = auth.require(req, Role::client);
    const auto accept = req.header("Accept");
    if (!accept || accept->find("text/event-stream") == std::string_view::npos) {
      return rpc_failure(406, -32000,
                         "GET /mcp is the notification stream: Accept: text/event-stream");
    }
    const std::string session = session_of(req);
    if (session.empty()) return rpc_failure(400, -32000, "Mcp-Session-Id is required");
    try {
      // Checks the session before the 200 goes out; anything already pending is sent first.
      auto first =
          service.next_notifications(session, Auth::caller(who), std::chrono::milliseconds(0));
      http::Response r;
      r.stream = std::make_shared<NotificationStream>(service, session, Auth::caller(who),
                                                      std::move(first));
      r.set_header("Content-Type", "text/event-stream");
      r.set_header("Cache-Control", "no-cache");
      return r;
    } catch (const mcp::McpTransportError& e) {
      return rpc_failure(e.status(), -32000, e.what());
    }
  });
  router.add("DELETE", "/mcp", [&service, &auth](http::Request& req) {
    if (auto refused = refuse(req)) return std::move(*refused);
    const auto who = auth.require(req, Role::client);
    const std::string session = session_of(req);
    if (session.empty()) return rpc_failure(400, -32000, "Mcp-Session-Id is required");
    if (!service.end_session(session, Auth::caller(who))) {
      return rpc_failure(404, -32000, "no MCP session " + session);
    }
    return http::Response{204, {}, {}, nullptr};
  });
}

}  // namespace schemagate::api
