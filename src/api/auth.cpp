#include "api/auth.hpp"

#include "api/json_body.hpp"
#include "http/router.hpp"

#include <charconv>

namespace schemagate::api {

namespace bj = boost::json;
using gateway::Principal;
using gateway::Role;

namespace {

std::string_view bearer(const http::Request& req) {
  const auto h = req.header("Authorization");
  if (!h) return {};
  std::string_view v = *h;
  if (v.size() > 7 && (v.substr(0, 7) == "Bearer " || v.substr(0, 7) == "bearer "))
    return v.substr(7);
  return {};
}

}  // namespace

Principal Auth::identify(const http::Request& req) const {
  if (access_.open()) return Principal{"local", Role::admin, {}, {}};
  const auto key = bearer(req);
  if (key.empty()) return Principal{};
  auto p = access_.authenticate(key);
  if (!p) {
    http::Error e(401, "Unauthorized", "the API key is not valid");
    e.extra_headers.push_back({"WWW-Authenticate", "Bearer"});
    throw e;
  }
  return *p;
}

Principal Auth::require(const http::Request& req, Role role) {
  Principal p = identify(req);
  if (anonymous(p)) {
    http::Error e(401, "Unauthorized", "this needs an API key: send Authorization: Bearer <key>");
    e.extra_headers.push_back({"WWW-Authenticate", "Bearer"});
    throw e;
  }
  if (p.role < role) {
    throw http::Error(403, "Forbidden",
                      "client \"" + p.client_id + "\" has role " +
                          std::string(gateway::to_string(p.role)) + "; this needs " +
                          std::string(gateway::to_string(role)));
  }
  if (const int wait = access_.take_quota(p); wait > 0) {
    http::Error e(429, "QuotaExceeded",
                  "client \"" + p.client_id + "\" has used its " +
                      std::to_string(p.rate.requests_per_day) + " requests for today (UTC)");
    e.extra_headers.push_back({"Retry-After", std::to_string(wait)});
    throw e;
  }
  if (const int wait = access_.take_token(p); wait > 0) {
    http::Error e(429, "RateLimited", "client \"" + p.client_id + "\" is over its rate limit");
    e.extra_headers.push_back({"Retry-After", std::to_string(wait)});
    throw e;
  }
  return p;
}

registry::Caller Auth::caller(const Principal& p) {
  return registry::Caller{p.client_id, p.groups, p.role == Role::admin};
}

void add_access_routes(http::Router& router, Auth& auth, const json::ParseLimits& limits) {
  router.add("POST", "/keys", [&auth, &limits](http::Request& req) {
    const auto who = auth.require(req, Role::admin);
    const auto body = read_json_body(req, limits);
    const auto* o = body.if_object();
    const auto* client = o ? o->if_contains("client_id") : nullptr;
    const auto* role_v = o ? o->if_contains("role") : nullptr;
    if (!client || !client->is_string() || client->get_string().empty()) {
      throw http::Error(400, "InvalidInput", "client_id is required");
    }
    const auto role =
        role_v && role_v->is_string() ? gateway::role_from(role_v->get_string()) : std::nullopt;
    if (!role) throw http::Error(400, "InvalidInput", "role must be admin, publisher or client");
    std::vector<std::string> groups;
    if (const auto* g = o->if_contains("groups")) {
      if (!g->is_array())
        throw http::Error(400, "InvalidInput", "groups must be an array of strings");
      for (const auto& x : g->get_array()) {
        if (!x.is_string())
          throw http::Error(400, "InvalidInput", "groups must be an array of strings");
        groups.emplace_back(x.get_string());
      }
    }
    gateway::RateLimit rate;
    if (const auto* r = o->if_contains("rate_limit"); r && r->is_object()) {
      if (const auto* v = r->get_object().if_contains("requests_per_second"); v && v->is_number()) {
        rate.requests_per_second = v->to_number<double>();
      }
      if (const auto* v = r->get_object().if_contains("burst"); v && v->is_number())
        rate.burst = v->to_number<double>();
      if (const auto* v = r->get_object().if_contains("requests_per_day"); v && v->is_number()) {
        rate.requests_per_day = v->to_number<std::uint64_t>();
      }
    }
    const auto created =
        auth.access().create_key(std::string(client->get_string()), *role, groups, rate);
    auth.access().audit(who.client_id, "create_key", created.principal.client_id, 201, 0);
    bj::array gs;
    for (const auto& g : created.principal.groups)
      gs.push_back(bj::value(g));
    return http::Response::json(
        201, bj::object{{"key", created.key},
                        {"client_id", created.principal.client_id},
                        {"role", gateway::to_string(created.principal.role)},
                        {"groups", std::move(gs)},
                        {"rate_limit", bj::object{{"requests_per_second", rate.requests_per_second},
                                                  {"burst", rate.burst},
                                                  {"requests_per_day", rate.requests_per_day}}}});
  });
  router.add("DELETE", "/keys/{client}", [&auth](http::Request& req) {
    const auto who = auth.require(req, Role::admin);
    const auto& client = req.param("client");
    if (auth.access().revoke_keys(client) == 0) {
      throw http::Error(404, "NotFound", "client \"" + client + "\" has no API key");
    }
    auth.access().audit(who.client_id, "revoke_keys", client, 204, 0);
    http::Response r;
    r.status = 204;
    return r;
  });
  router.add("GET", "/audit", [&auth](http::Request& req) {
    auth.require(req, Role::admin);
    std::size_t limit = 100;
    if (const auto l = req.query_param("limit"))
      std::from_chars(l->data(), l->data() + l->size(), limit);
    return http::Response::json(
        200,
        bj::object{{"entries", auth.access().audit_tail(std::min<std::size_t>(limit, 10000))}});
  });
}

}  // namespace schemagate::api
