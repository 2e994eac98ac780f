#include "api/gateway_routes.hpp"

#include "api/json_body.hpp"
#include "gateway/gateway_service.hpp"
#include "registry/registry_service.hpp"

namespace schemagate::api {

namespace {

http::Response invoke(gateway::GatewayService& service, const json::ParseLimits& limits,
                      http::Request& req, std::string_view operation) {
  const auto body = read_json_body(req, limits);
  const auto key = req.header("Idempotency-Key");
  registry::Caller caller;  // anonymous until API keys exist
  try {
    const auto out = service.invoke(req.param("id"), operation, body, caller, key ? *key : "");
    auto r = http::Response::json(out.status, out.body);
    if (out.replayed) r.set_header("Idempotent-Replayed", "true");
    return r;
  } catch (const gateway::GatewayError& e) {
    http::Error err(
        e.status(), e.code(), e.what(),
        e.details().is_null() ? std::nullopt : std::optional<boost::json::value>(e.details()));
    if (e.retry_after_seconds() > 0) {
      err.extra_headers.push_back({"Retry-After", std::to_string(e.retry_after_seconds())});
    }
    throw err;
  }
}

}  // namespace

void add_gateway_routes(http::Router& router, gateway::GatewayService& service,
                        const json::ParseLimits& limits) {
  router.add("POST", "/agents/{id}/invoke",
             [&service, &limits](http::Request& req) { return invoke(service, limits, req, ""); });
  router.add("POST", "/agents/{id}/operations/{op}/invoke",
             [&service, &limits](http::Request& req) {
               return invoke(service, limits, req, req.param("op"));
             });
}

}  // namespace schemagate::api
