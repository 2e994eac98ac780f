#pragma once

#include "http/router.hpp"

namespace schemagate::evolution {
class EvolutionEngine;
}

namespace schemagate::api {

class Auth;

// Seed 000 §6.2 over HTTP:
//   GET  /scenarios/{s}/evolution                                  pools, keys, limits (publisher)
//   POST /scenarios/{s}/evolution/clusters/{id}/approve | /reject  an admin's decision (§7)
void add_evolution_routes(http::Router& router, evolution::EvolutionEngine& engine, Auth& auth);

}  // namespace schemagate::api
