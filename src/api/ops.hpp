#pragma once

#include "http/router.hpp"
#include "json/parse.hpp"

#include <string>

namespace schemagate::store {
class Store;
}
namespace schemagate::util {
class MetricsRegistry;
}

namespace schemagate::api {

struct OpsDependencies {
  store::Store& store;
  util::MetricsRegistry& metrics;
  const json::ParseLimits& json_limits;
  std::string search_embedder;  // the embedding model of hybrid search; empty: lexical only
};

// GET /healthz, GET /readyz, GET /metrics, POST /jcs.
void add_ops_routes(http::Router& router, const OpsDependencies& deps);

}  // namespace schemagate::api
