#pragma once

#include "api/auth.hpp"
#include "http/router.hpp"
#include "json/parse.hpp"

namespace schemagate::mcp {
class McpService;
}

namespace schemagate::api {

// MCP Streamable HTTP at /mcp: POST one JSON-RPC message (JSON answer, or 202 for a
// notification), GET the session's notification stream (text/event-stream), DELETE to end the
// session. The same API keys as the REST API; the session is bound to the key's client.
void add_mcp_routes(http::Router& router, mcp::McpService& service, Auth& auth,
                    const json::ParseLimits& limits);

}  // namespace schemagate::api
