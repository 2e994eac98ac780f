#pragma once

#include "http/router.hpp"
#include "json/parse.hpp"

namespace schemagate::evolution {
class EvolutionEngine;
}

namespace schemagate::api {

class Auth;

// Seed 000 §6.2 over HTTP:
//   GET  /scenarios/{s}/evolution                                  pools, keys, limits (publisher)
//   POST /scenarios/{s}/evolution/clusters/{id}/approve | /reject  an admin's decision (§7)
//   POST /scenarios/{s}/evolution/keys/{key}/verdicts {correct}   the audit API (§6.2.3)
void add_evolution_routes(http::Router& router, evolution::EvolutionEngine& engine, Auth& auth,
                          const json::ParseLimits& limits);

}  // namespace schemagate::api
