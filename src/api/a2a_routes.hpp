#pragma once

#include "http/router.hpp"
#include "json/parse.hpp"

#include <string>

namespace schemagate::a2a {
class A2AService;
}

namespace schemagate::api {

class Auth;

struct A2ARouteOptions {
  json::ParseLimits limits;
  // Where clients reach this server (the agent cards' interface URLs). Empty: the request's
  // Host header, with http or https as this server serves.
  std::string public_url;
  bool tls = false;
};

// The A2A face (seeds 001, 002; A2A v1.0 with 0.3 compatibility), per registered agent:
//   GET  /a2a/{agent}/.well-known/agent-card.json   the agent card (ETag, Cache-Control)
//   POST /a2a/{agent}                               JSON-RPC (v1.0 methods; 0.3 aliases)
//   POST /a2a/{agent}/message:send | message:stream, GET /a2a/{agent}/tasks[/{id}],
//   POST /a2a/{agent}/tasks/{id}:cancel, GET|POST /a2a/{agent}/tasks/{id}:subscribe (HTTP+JSON)
void add_a2a_routes(http::Router& router, a2a::A2AService& service, Auth& auth,
                    const A2ARouteOptions& options);

}  // namespace schemagate::api
