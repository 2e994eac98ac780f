#include "api/evolution_routes.hpp"

#include "api/auth.hpp"
#include "evolution/evolution_engine.hpp"

namespace schemagate::api {

void add_evolution_routes(http::Router& router, evolution::EvolutionEngine& engine, Auth& auth) {
  using gateway::Role;
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
