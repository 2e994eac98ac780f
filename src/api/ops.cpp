#include "api/ops.hpp"

#include "api/json_body.hpp"
#include "json/jcs.hpp"
#include "store/store.hpp"
#include "util/metrics.hpp"

#include <spdlog/spdlog.h>

namespace schemagate::api {

void add_ops_routes(http::Router& router, const OpsDependencies& deps) {
  router.add("GET", "/healthz", [](http::Request&) {
    return http::Response::json(200, boost::json::object{{"status", "ok"}});
  });

  router.add(
      "GET", "/readyz", [&store = deps.store, embedder = deps.search_embedder](http::Request&) {
        try {
          store.ping();
        } catch (const std::exception& e) {
          spdlog::warn("readiness check failed: {}", e.what());
          throw http::Error(503, "Unavailable", std::string("store unreachable: ") + e.what());
        }
        const auto info = store.info();
        return http::Response::json(
            200,
            boost::json::object{
                {"status", "ready"},
                {"store", {{"backend", info.backend}, {"schema_version", info.schema_version}}},
                // Lexical-only search is a degraded start (no word vectors found): say so.
                {"search", embedder.empty() ? boost::json::object{{"ranking", "lexical"}}
                                            : boost::json::object{{"ranking", "hybrid"},
                                                                  {"embedder", embedder}}}});
      });

  router.add("GET", "/metrics", [&metrics = deps.metrics](http::Request&) {
    return http::Response::text(200, metrics.render_prometheus(),
                                "text/plain; version=0.0.4; charset=utf-8");
  });

  // The RFC 8785 canonical form of a JSON body: the exact bytes signatures are computed over.
  router.add("POST", "/jcs", [&limits = deps.json_limits](http::Request& req) {
    const auto doc = read_json_body(req, limits);
    try {
      return http::Response::text(200, json::canonicalize(doc), "application/json");
    } catch (const json::CanonicalizationError& e) {
      throw http::Error(400, "InvalidInput", e.what());
    }
  });
}

}  // namespace schemagate::api
