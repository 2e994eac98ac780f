#include "api/evolution_routes.hpp"

#include "api/auth.hpp"
#include "api/json_body.hpp"
#include "evolution/evolution_engine.hpp"

namespace schemagate::api {

void add_evolution_routes(http::Router& router, evolution::EvolutionEngine& engine, Auth& auth,
                          const json::ParseLimits& limits) {
  using gateway::Role;
  // The audit API: a person's verdict on sampled values of an experimental key.
  router.add(
      "POST", "/scenarios/{scenario}/evolution/keys/{key}/verdicts",
      [&engine, &auth, &limits](http::Request& req) {
        const auto who = auth.require(req, Role::publisher);
        const auto body = read_json_body(req, limits);
        const auto* c = body.is_object() ? body.get_object().if_contains("correct") : nullptr;
        if (!c || !c->is_bool()) {
          throw http::Error(400, "InvalidInput", "the body must be {\"correct\": true|false}");
        }
        auto out = engine.record_verdict(req.param("scenario"), req.param("key"), c->get_bool());
        auth.access().audit(who.client_id, "verdict",
                            req.param("scenario") + "/" + req.param("key"), 200, 0);
        return http::Response::json(200, out);
      });
  // The pools hold what clients wrote in `other`: publishers only.
  router.add("GET", "/scenarios/{scenario}/evolution", [&engine, &auth](http::Request& req) {
    auth.require(req, Role::publisher);
    return http::Response::json(200, engine.state(req.param("scenario")));
  });
  for (const bool approve : {true, false}) {
    router.add("POST",
               std::string("/scenarios/{scenario}/evolution/clusters/{cluster}/") +
                   (approve ? "approve" : "reject"),
               [&engine, &auth, approve](http::Request& req) {
                 const auto who = auth.require(req, Role::admin);
                 auto out = engine.decide(req.param("scenario"), req.param("cluster"), approve);
                 auth.access().audit(who.client_id, approve ? "approve_key" : "reject_key",
                                     req.param("scenario") + "/" + req.param("cluster"), 200, 0);
                 return http::Response::json(200, out);
               });
  }
}

}  // namespace schemagate::api
