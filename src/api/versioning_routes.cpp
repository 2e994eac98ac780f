#include "api/versioning_routes.hpp"

#include "api/auth.hpp"
#include "api/json_body.hpp"
#include "signing/key_store.hpp"
#include "util/contract_error.hpp"
#include "versioning/versioning_service.hpp"

namespace schemagate::api {

namespace bj = boost::json;
using gateway::Role;

namespace {

std::string text_member(const bj::value& body, std::string_view name, bool required) {
  const auto* v = body.is_object() ? body.get_object().if_contains(name) : nullptr;
  if (!v || v->is_null()) {
    if (required) throw http::Error(400, "InvalidInput", std::string(name) + " is required");
    return {};
  }
  if (!v->is_string())
    throw http::Error(400, "InvalidInput", std::string(name) + " must be a string");
  return std::string(v->get_string());
}

}  // namespace

void add_versioning_routes(http::Router& router, versioning::VersioningService& service, Auth& auth,
                           const json::ParseLimits& limits) {
  router.add("GET", "/.well-known/schema-manifest.json", [&service](http::Request& req) {
    const auto m = service.manifest();
    auto r = http::conditional(req, m.etag, [&] { return http::Response::json(200, m.body); });
    r.set_header("Cache-Control", "public, max-age=60");
    return r;
  });

  router.add("GET", "/.well-known/jwks.json", [&service](http::Request&) {
    auto r = http::Response::json(200, service.keys().jwks());
    r.set_header("Cache-Control", "public, max-age=300");
    return r;
  });

  router.add("GET", "/contracts/{contract}/compatibility", [&service](http::Request& req) {
    return http::Response::json(200, service.profile(req.param("contract")));
  });

  router.add("POST", "/contracts/{contract}/compatibility",
             [&service, &limits](http::Request& req) {
               const auto body = read_json_body(req, limits);
               std::optional<versioning::Policy> policy;
               if (const auto p = text_member(body, "policy", false); !p.empty()) {
                 policy = versioning::parse_policy(p);
                 if (!policy) {
                   throw http::Error(400, "InvalidInput", "policy must be strict or lenient");
                 }
               }
               return http::Response::json(
                   200, service.compare(req.param("contract"), text_member(body, "from", true),
                                        text_member(body, "to", true), policy));
             });

  router.add("POST", "/contracts/{contract}/handshake", [&service, &limits](http::Request& req) {
    const auto body = read_json_body(req, limits);
    const auto* list =
        body.is_object() ? body.get_object().if_contains("supported_versions") : nullptr;
    if (!list || !list->is_array()) {
      throw http::Error(400, "InvalidInput",
                        "the body must be {\"supported_versions\": [\"1.0.0\", ...]}");
    }
    std::vector<std::string> versions;
    for (const auto& v : list->get_array()) {
      if (!v.is_string()) throw http::Error(400, "InvalidInput", "versions must be strings");
      versions.push_back(std::string(v.get_string()));
    }
    return http::Response::json(200, service.handshake(req.param("contract"), versions));
  });

  router.add("PUT", "/contracts/{contract}/versions/{version}/deprecation",
             [&service, &auth, &limits](http::Request& req) {
               const auto who = auth.require(req, Role::publisher);
               const auto body = read_json_body(req, limits);
               auto out = service.deprecate(req.param("contract"), req.param("version"),
                                            text_member(body, "deprecation_date", true));
               auth.access().audit(who.client_id, "deprecate",
                                   req.param("contract") + "/" + req.param("version"), 200, 0);
               return http::Response::json(200, out);
             });

  router.add("GET", "/mappings/{contract}/{from}/{to}", [&service](http::Request& req) {
    return http::Response::json(
        200, service.get_mapping(req.param("contract"), req.param("from"), req.param("to")));
  });

  router.add(
      "PUT", "/mappings/{contract}/{from}/{to}", [&service, &auth, &limits](http::Request& req) {
        const auto who = auth.require(req, Role::publisher);
        const auto body = read_json_body(req, limits);
        const auto stored =
            service.put_mapping(req.param("contract"), req.param("from"), req.param("to"), body);
        auth.access().audit(who.client_id, "put_mapping",
                            req.param("contract") + "/" + req.param("from") + "/" + req.param("to"),
                            stored.created ? 201 : 200, 0);
        return http::Response::json(stored.created ? 201 : 200, stored.document);
      });

  router.add("POST", "/signing/keys/rotate", [&service, &auth](http::Request& req) {
    const auto who = auth.require(req, Role::admin);
    const auto key = service.keys().rotate();
    auth.access().audit(who.client_id, "rotate_signing_key", key.kid, 200, 0);
    return http::Response::json(200, bj::object{{"kid", key.kid}, {"jwks", service.keys().jwks()}});
  });

  router.add("GET", "/signing/trusted-keys", [&service, &auth](http::Request& req) {
    auth.require(req, Role::admin);
    return http::Response::json(200, bj::object{{"keys", service.keys().trusted()}});
  });

  router.add("PUT", "/signing/trusted-keys", [&service, &auth, &limits](http::Request& req) {
    const auto who = auth.require(req, Role::admin);
    const auto body = read_json_body(req, limits);
    const auto* jwk = body.is_object() ? body.get_object().if_contains("jwk") : nullptr;
    if (!jwk) {
      throw http::Error(400, "InvalidInput",
                        "the body must be {\"jwk\": {\"kty\": \"OKP\", \"crv\": \"Ed25519\", "
                        "\"x\": ...}, \"note\"?: \"...\"}");
    }
    try {
      auto entry = service.keys().trust(*jwk, text_member(body, "note", false));
      service.forget_all();  // mappings it signed may be used now
      auth.access().audit(who.client_id, "trust_key", std::string(entry.at("kid").as_string()), 200,
                          0);
      return http::Response::json(200, entry);
    } catch (const std::invalid_argument& e) {
      throw http::Error(400, "InvalidInput", std::string("jwk: ") + e.what());
    }
  });

  router.add("DELETE", "/signing/trusted-keys/{kid}", [&service, &auth](http::Request& req) {
    const auto who = auth.require(req, Role::admin);
    if (!service.keys().distrust(req.param("kid"))) {
      throw http::Error(404, "NotFound", "no trusted key " + req.param("kid"));
    }
    auth.access().audit(who.client_id, "distrust_key", req.param("kid"), 204, 0);
    service.forget_all();  // mappings signed by that key stop being used at once
    http::Response r;
    r.status = 204;
    return r;
  });
}

}  // namespace schemagate::api
