#pragma once

#include "http/router.hpp"
#include "json/parse.hpp"

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
};

// GET /healthz, GET /readyz, GET /metrics, POST /jcs.
void add_ops_routes(http::Router& router, const OpsDependencies& deps);

}  // namespace schemagate::api
