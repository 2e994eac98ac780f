#include "api/gateway_routes.hpp"

#include "api/auth.hpp"
#include "api/json_body.hpp"
#include "api/version_envelope.hpp"
#include "gateway/gateway_service.hpp"
#include "registry/registry_service.hpp"
#include "util/text.hpp"
#include "util/trace.hpp"

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

http::Error to_http(const gateway::GatewayError& e) {
  http::Error err(
      e.status(), e.code(), e.what(),
      e.details().is_null() ? std::nullopt : std::optional<boost::json::value>(e.details()));
  if (e.retry_after_seconds() > 0) {
    err.extra_headers.push_back({"Retry-After", std::to_string(e.retry_after_seconds())});
  }
  return err;
}

// Records one invocation in the audit log when it ends.
struct InvokeAudit {
  Auth* auth;
  std::string client_id;
  std::string target;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  // Taken now: the fast path audits from the transport's thread, outside the request.
  std::string trace_id = util::current_trace() ? util::current_trace()->trace_id : std::string();
  void operator()(int status) const {
    auth->access().audit(
        client_id, "invoke", target, status,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
        trace_id);
  }
};

// The caller and body a declined fast path already established.
struct InvokeHandover {
  gateway::Principal who;
  boost::json::value body;
};

// Seed 003 §4.2 on invoke: the envelope body, or the operation's input with an optional
// Schema-Version header.
struct VersionedInput {
  exchange::VersionRequest version;
  boost::json::value input;
  bool envelope = false;
};

VersionedInput versioned_input(const http::Request& req, const boost::json::value& body) {
  VersionedInput v;
  if (is_version_envelope(body)) {
    const auto& o = body.get_object();
    v.version = read_version_request(o);
    v.input = o.at("payload");
    v.envelope = true;
    for (const char* k : {"operation", "stream"}) {
      if (const auto* x = o.if_contains(k); x && v.input.is_object()) v.input.get_object()[k] = *x;
    }
  } else {
    v.input = body;
  }
  if (const auto h = req.header("Schema-Version")) {
    const auto text = util::trim(*h);
    if (v.version.schema_version && *v.version.schema_version != text) {
      throw http::Error(400, "InvalidInput",
                        "the Schema-Version header and the body's schema_version disagree");
    }
    if (!text.empty()) v.version.schema_version = std::string(text);
  }
  return v;
}

// The reply, in the envelope when the request came in one, with the version's headers.
http::Response versioned_reply(gateway::GatewayService::Outcome out, bool envelope) {
  http::Response r;
  if (envelope && !out.schema_version.empty()) {
    boost::json::object env{{"schema_version", out.schema_version},
                            {"payload", std::move(out.body)}};
    if (!out.deprecation_warning.empty()) env["deprecation_warning"] = out.deprecation_warning;
    r = http::Response::json(out.status, env);
  } else if (!out.verbatim.empty()) {
    r = http::Response::text(out.status, std::move(out.verbatim), "application/json");
  } else {
    r = http::Response::json(out.status, out.body);
  }
  for (auto& [name, value] : out.headers)
    r.set_header(name, value);
  if (!out.deprecation_warning.empty())
    r.set_header("Deprecation-Warning", out.deprecation_warning);
  return r;
}

std::string invoke_target(http::Request& req, std::string_view operation) {
  return req.param("id") + (operation.empty() ? "" : "/" + std::string(operation));
}

// The non-blocking path for the common call (one input, no idempotency key, no stream): runs on
// the I/O thread and forwards without a thread waiting for the agent.
bool invoke_fast(gateway::GatewayService& service, Auth& auth, const json::ParseLimits& limits,
                 http::Request& req, std::string_view operation, const http::Responder& respond) {
  if (req.header("Idempotency-Key") || req.header("Schema-Version")) return false;
  const auto who = auth.require(req, gateway::Role::client);
  auto handover =
      std::make_shared<InvokeHandover>(InvokeHandover{who, read_json_body(req, limits)});
  req.handover = handover;
  if (wants_stream(req, handover->body) || is_version_envelope(handover->body)) return false;
  const InvokeAudit audit{&auth, who.client_id, invoke_target(req, operation)};
  try {
    return service.invoke_async(
        req.param("id"), operation, handover->body, req.body, Auth::caller(who),
        [audit, respond](gateway::GatewayService::Outcome out, std::exception_ptr error) {
          if (!error) {
            audit(out.status);
            respond(versioned_reply(std::move(out), false));
            return;
          }
          try {
            std::rethrow_exception(error);
          } catch (const gateway::GatewayError& e) {
            audit(e.status());
            respond(http::error_response(to_http(e)));
          } catch (const std::exception& e) {
            audit(500);
            respond(http::error_response(http::Error(500, "Internal", e.what())));
          }
        });
  } catch (const gateway::GatewayError& e) {
    audit(e.status());
    throw to_http(e);
  }
}

http::Response invoke(gateway::GatewayService& service, Auth& auth, const json::ParseLimits& limits,
                      http::Request& req, std::string_view operation) {
  const auto handover = std::static_pointer_cast<InvokeHandover>(req.handover);
  const auto who = handover ? handover->who : auth.require(req, gateway::Role::client);
  const InvokeAudit audit{&auth, who.client_id, invoke_target(req, operation)};
  const auto raw = handover ? handover->body : read_json_body(req, limits);
  const auto versioned = versioned_input(req, raw);
  const auto& body = versioned.input;
  const auto key = req.header("Idempotency-Key");
  try {
    if (wants_stream(req, body)) {
      if (key) {
        throw gateway::GatewayError(400, "InvalidInput",
                                    "a streamed invocation cannot be replayed: drop the "
                                    "Idempotency-Key header or the stream request");
      }
      http::Response r;
      r.stream = std::make_shared<EventBody>(service.invoke_stream(
          req.param("id"), operation, body, Auth::caller(who), versioned.version));
      r.set_header("Content-Type", "text/event-stream");
      r.set_header("Cache-Control", "no-cache");
      audit(200);
      return r;
    }
    auto out = service.invoke(req.param("id"), operation, body, Auth::caller(who), key ? *key : "",
                              versioned.version);
    const bool replayed = out.replayed;
    const int status = out.status;
    auto r = versioned_reply(std::move(out), versioned.envelope);
    if (replayed) r.set_header("Idempotent-Replayed", "true");
    audit(status);
    return r;
  } catch (const gateway::GatewayError& e) {
    audit(e.status());
    throw to_http(e);
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
  router.add_fast_path(
      "POST", "/agents/{id}/invoke",
      [&service, &auth, &limits](http::Request& req, const http::Responder& respond) {
        return invoke_fast(service, auth, limits, req, "", respond);
      });
  router.add_fast_path(
      "POST", "/agents/{id}/operations/{op}/invoke",
      [&service, &auth, &limits](http::Request& req, const http::Responder& respond) {
        return invoke_fast(service, auth, limits, req, req.param("op"), respond);
      });
}

}  // namespace schemagate::api
