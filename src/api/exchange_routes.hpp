#pragma once

#include "http/router.hpp"
#include "json/parse.hpp"

namespace schemagate::exchange {
class ExchangeService;
}

namespace schemagate::api {

class Auth;

// Seed 000 over HTTP: the REST twins under /scenarios and JSON-RPC 2.0 at POST /sdsi.
void add_exchange_routes(http::Router& router, exchange::ExchangeService& service, Auth& auth,
                         const json::ParseLimits& limits);

}  // namespace schemagate::api
