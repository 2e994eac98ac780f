#pragma once

#include "http/router.hpp"
#include "json/parse.hpp"

namespace schemagate::gateway {
class GatewayService;
}

namespace schemagate::api {

class Auth;

// POST /agents/{id}/invoke and POST /agents/{id}/operations/{op}/invoke.
void add_gateway_routes(http::Router& router, gateway::GatewayService& service, Auth& auth,
                        const json::ParseLimits& limits);

}  // namespace schemagate::api
