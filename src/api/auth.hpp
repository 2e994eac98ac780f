#pragma once

#include "gateway/access.hpp"
#include "http/router.hpp"
#include "json/parse.hpp"
#include "registry/registry_service.hpp"

namespace schemagate::api {

// Bearer API keys on requests (seed 004 §7): 401 for a missing or unknown key where one is
// needed, 403 for a role too low, 429 (+ Retry-After) past the client's rate limit.
class Auth {
 public:
  explicit Auth(gateway::AccessControl& access) : access_(access) {}

  // Anyone may ask: no key means anonymous (an admin while the server is open).
  gateway::Principal identify(const http::Request& req) const;
  // At least `role`, with a valid key (unless the server is open); counts against the rate limit.
  gateway::Principal require(const http::Request& req, gateway::Role role);
  static registry::Caller caller(const gateway::Principal& p);
  static bool anonymous(const gateway::Principal& p) { return p.client_id.empty(); }

  gateway::AccessControl& access() { return access_; }

 private:
  gateway::AccessControl& access_;
};

// POST /keys (admin): a new API key, shown once. DELETE /keys/{client} (admin): revokes every
// key of a client. GET /audit (admin): the latest audit entries.
void add_access_routes(http::Router& router, Auth& auth, const json::ParseLimits& limits);

}  // namespace schemagate::api
