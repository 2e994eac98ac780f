#include "api/gateway_routes.hpp"

#include "api/auth.hpp"
#include "api/json_body.hpp"
#include "gateway/gateway_service.hpp"
#include "registry/registry_service.hpp"

#include <chrono>

namespace schemagate::api {

namespace {

class EventBody final : public http::BodyStream {
 public:
  explicit EventBody(std::unique_ptr<gateway::EventStream> events) : events_(std::move(events)) {}
  bool next(std::string& piece) override { return events_->next(piece); }

 private:
  std::unique_ptr<gateway::EventStream> events_;
};

// Seed 004 §6.3: `"stream": true` in the body or an Accept header that asks for events.
bool wants_stream(const http::Request& req, const boost::json::value& body) {
  if (const auto accept = req.header("Accept");
      accept && accept->find("text/event-stream") != std::string_view::npos) {
    return true;
  }
  const auto* flag = body.is_object() ? body.get_object().if_contains("stream") : nullptr;
  return flag && flag->is_bool() && flag->get_bool();
}

http::Response invoke(gateway::GatewayService& service, Auth& auth, const json::ParseLimits& limits,
                      http::Request& req, std::string_view operation) {
  const auto who = auth.require(req, gateway::Role::client);
  const auto start = std::chrono::steady_clock::now();
  const std::string target =
      req.param("id") + (operation.empty() ? "" : "/" + std::string(operation));
  auto audit = [&](int status) {
    auth.access().audit(
        who.client_id, "invoke", target, status,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  };
  const auto body = read_json_body(req, limits);
  const auto key = req.header("Idempotency-Key");
  try {
    if (wants_stream(req, body)) {
      if (key) {
        throw gateway::GatewayError(400, "InvalidInput",
                                    "a streamed invocation cannot be replayed: drop the "
                                    "Idempotency-Key header or the stream request");
      }
      http::Response r;
      r.stream = std::make_shared<EventBody>(
          service.invoke_stream(req.param("id"), operation, body, Auth::caller(who)));
      r.set_header("Content-Type", "text/event-stream");
      r.set_header("Cache-Control", "no-cache");
      audit(200);
      return r;
    }
    const auto out =
        service.invoke(req.param("id"), operation, body, Auth::caller(who), key ? *key : "");
    auto r = http::Response::json(out.status, out.body);
    if (out.replayed) r.set_header("Idempotent-Replayed", "true");
    audit(out.status);
    return r;
  } catch (const gateway::GatewayError& e) {
    audit(e.status());
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

void add_gateway_routes(http::Router& router, gateway::GatewayService& service, Auth& auth,
                        const json::ParseLimits& limits) {
  // Credentials towards the agent: write-only.
  router.add("PUT", "/agents/{id}/credentials", [&service, &auth, &limits](http::Request& req) {
    const auto who = auth.require(req, gateway::Role::publisher);
    const auto body = read_json_body(req, limits);
    const auto* headers = body.is_object() ? body.get_object().if_contains("headers") : nullptr;
    if (!headers || !headers->is_object()) {
      throw http::Error(400, "InvalidInput",
                        "the body must be {\"headers\": {\"Name\": \"value\"}}");
    }
    std::map<std::string, std::string> h;
    for (const auto& kv : headers->get_object()) {
      if (!kv.value().is_string())
        throw http::Error(400, "InvalidInput", "header values must be strings");
      h[std::string(kv.key())] = kv.value().get_string();
    }
    try {
      service.set_credentials(req.param("id"), h, Auth::caller(who));
    } catch (const gateway::GatewayError& e) {
      throw http::Error(e.status(), e.code(), e.what());
    }
    auth.access().audit(who.client_id, "set_credentials", req.param("id"), 204, 0);
    http::Response r;
    r.status = 204;
    return r;
  });

  router.add("POST", "/agents/{id}/invoke", [&service, &auth, &limits](http::Request& req) {
    return invoke(service, auth, limits, req, "");
  });
  router.add("POST", "/agents/{id}/operations/{op}/invoke",
             [&service, &auth, &limits](http::Request& req) {
               return invoke(service, auth, limits, req, req.param("op"));
             });
}

}  // namespace schemagate::api
