#pragma once

#include "http/router.hpp"
#include "json/parse.hpp"

namespace schemagate::registry {
class RegistryService;
class CardFetcher;
}  // namespace schemagate::registry

namespace schemagate::api {

class Auth;

// Seed 004 §4-5: GET /agents, GET|PUT|DELETE /agents/{id}, POST /agents, POST /agents/search.
void add_registry_routes(http::Router& router, registry::RegistryService& service, Auth& auth,
                         registry::CardFetcher& fetcher, const json::ParseLimits& limits);

}  // namespace schemagate::api
