#include "api/a2a_routes.hpp"

#include "a2a/a2a_service.hpp"
#include "api/auth.hpp"
#include "api/json_body.hpp"
#include "registry/registry_service.hpp"
#include "util/hash.hpp"
#include "util/json_text.hpp"
#include "util/text.hpp"

#include <spdlog/spdlog.h>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <cstdio>

namespace schemagate::api {

namespace bj = boost::json;
using a2a::A2AError;
using Kind = a2a::A2AError::Kind;

namespace {

enum class Op { send, stream, get, list, cancel, subscribe, push_config, extended_card };

struct Method {
  Op op;
  bool legacy;  // a 0.3 method name: 0.3 shapes in and out
};

std::optional<Method> method_of(std::string_view name) {
  static const std::pair<std::string_view, Method> table[] = {
      {"SendMessage", {Op::send, false}},
      {"SendStreamingMessage", {Op::stream, false}},
      {"GetTask", {Op::get, false}},
      {"ListTasks", {Op::list, false}},
      {"CancelTask", {Op::cancel, false}},
      {"SubscribeToTask", {Op::subscribe, false}},
      {"CreateTaskPushNotificationConfig", {Op::push_config, false}},
      {"GetTaskPushNotificationConfig", {Op::push_config, false}},
      {"ListTaskPushNotificationConfigs", {Op::push_config, false}},
      {"DeleteTaskPushNotificationConfig", {Op::push_config, false}},
      {"GetExtendedAgentCard", {Op::extended_card, false}},
      {"message/send", {Op::send, true}},
      {"message/stream", {Op::stream, true}},
      {"tasks/get", {Op::get, true}},
      {"tasks/cancel", {Op::cancel, true}},
      {"tasks/resubscribe", {Op::subscribe, true}},
      {"tasks/pushNotificationConfig/set", {Op::push_config, true}},
      {"tasks/pushNotificationConfig/get", {Op::push_config, true}},
      {"tasks/pushNotificationConfig/list", {Op::push_config, true}},
      {"tasks/pushNotificationConfig/delete", {Op::push_config, true}},
      {"agent/getAuthenticatedExtendedCard", {Op::extended_card, true}},
  };
  for (const auto& [n, m] : table) {
    if (n == name) return m;
  }
  return std::nullopt;
}

std::optional<std::string_view> version_param(const http::Request& req) {
  if (auto h = req.header("A2A-Version")) return h;
  return req.query_param("A2A-Version");
}

// The extensions the request activates that this server implements (echoed back, spec §4.6).
std::string activated_extensions(const http::Request& req) {
  for (const char* name : {"A2A-Extensions", "X-A2A-Extensions"}) {
    const auto h = req.header(name);
    if (!h) continue;
    std::string_view list = *h;
    while (!list.empty()) {
      const auto comma = list.find(',');
      const std::string_view item = util::trim(list.substr(0, comma));
      if (item == a2a::kSchemasExtension) return std::string(item);
      list = comma == std::string_view::npos ? "" : list.substr(comma + 1);
    }
  }
  return {};
}

std::string base_url(const http::Request& req, const A2ARouteOptions& o) {
  if (!o.public_url.empty()) {
    return o.public_url.back() == '/' ? o.public_url.substr(0, o.public_url.size() - 1)
                                      : o.public_url;
  }
  const auto host = req.header("Host");
  return std::string(o.tls ? "https://" : "http://") +
         (host ? std::string(*host) : std::string("127.0.0.1"));
}

std::string_view grpc_status(Kind k) {
  switch (k) {
    case Kind::task_not_found:
      return "NOT_FOUND";
    case Kind::method_not_found:
      return "UNIMPLEMENTED";
    case Kind::internal:
    case Kind::invalid_agent_response:
      return "INTERNAL";
    case Kind::parse_error:
    case Kind::invalid_request:
    case Kind::invalid_params:
    case Kind::content_type_not_supported:
      return "INVALID_ARGUMENT";
    default:
      return "FAILED_PRECONDITION";
  }
}

// One A2A call, whichever binding carried it.
struct Outcome {
  bj::object result;  // v1.0 shape
  std::unique_ptr<a2a::EventSource> events;
};

Outcome dispatch(a2a::A2AService& service, Op op, const std::string& agent, const bj::value& params,
                 const registry::Caller& caller) {
  Outcome out;
  switch (op) {
    case Op::send:
      out.result = service.send_message(agent, params, caller);
      break;
    case Op::stream:
      out.events = service.stream_message(agent, params, caller);
      break;
    case Op::get:
      out.result = service.get_task(agent, params, caller);
      break;
    case Op::list:
      out.result = service.list_tasks(agent, params, caller);
      break;
    case Op::cancel:
      out.result = service.cancel_task(agent, params, caller);
      break;
    case Op::subscribe:
      out.events = service.subscribe(agent, params, caller);
      break;
    case Op::push_config:
      throw A2AError(
          Kind::push_notification_not_supported,
          "push notifications are not supported (capabilities.pushNotifications is false); "
          "use SendStreamingMessage, SubscribeToTask or GetTask");
    case Op::extended_card:
      throw A2AError(Kind::unsupported_operation,
                     "there is no extended agent card (capabilities.extendedAgentCard is not set)");
  }
  return out;
}

// A result in the shape of the method's protocol version.
bj::value shaped(Op op, const bj::object& result, bool legacy) {
  if (!legacy) return result;
  if (op == Op::send) {
    if (const auto* t = result.if_contains("task")) return a2a::task_v03(t->as_object());
    return a2a::message_v03(result.at("message").as_object());
  }
  return a2a::task_v03(result);  // GetTask, CancelTask
}

// Server-sent events: one StreamResponse per event, wrapped in a JSON-RPC response when the call
// came by JSON-RPC.
class EventBody final : public http::BodyStream {
 public:
  EventBody(std::unique_ptr<a2a::EventSource> events, std::optional<bj::value> rpc_id, bool legacy)
      : events_(std::move(events)), rpc_id_(std::move(rpc_id)), legacy_(legacy) {}
  bool next(std::string& piece) override {
    bj::object sr;
    bj::value payload;
    try {
      if (!events_->next(sr)) return false;
      payload = legacy_ ? bj::value(a2a::stream_event_v03(sr)) : bj::value(std::move(sr));
      if (rpc_id_)
        payload = bj::object{{"jsonrpc", "2.0"}, {"id", *rpc_id_}, {"result", std::move(payload)}};
    } catch (const A2AError& e) {
      bj::object err{
          {"code", e.json_rpc_code()}, {"message", e.what()}, {"data", e.wire_details()}};
      payload = rpc_id_ ? bj::value(bj::object{
                              {"jsonrpc", "2.0"}, {"id", *rpc_id_}, {"error", std::move(err)}})
                        : bj::value(bj::object{{"error", std::move(err)}});
      piece = "data: " + util::json_text(payload) + "\n\n";
      return false;
    }
    piece = "data: " + util::json_text(payload) + "\n\n";
    return true;
  }

 private:
  std::unique_ptr<a2a::EventSource> events_;
  std::optional<bj::value> rpc_id_;
  bool legacy_;
};

http::Response event_stream(std::unique_ptr<a2a::EventSource> events,
                            std::optional<bj::value> rpc_id, bool legacy) {
  http::Response r;
  r.stream = std::make_shared<EventBody>(std::move(events), std::move(rpc_id), legacy);
  r.set_header("Content-Type", "text/event-stream");
  r.set_header("Cache-Control", "no-cache");
  return r;
}

bj::object rpc_error(const bj::value& id, int code, const std::string& message, bj::array data) {
  bj::object err{{"code", code}, {"message", message}};
  if (!data.empty()) err["data"] = std::move(data);
  return bj::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(err)}};
}

bj::object rpc_error(const bj::value& id, const A2AError& e) {
  return rpc_error(id, e.json_rpc_code(), e.what(), e.wire_details());
}

// An error of the HTTP layer (authentication, rate limit) as a JSON-RPC error with its status.
http::Response rpc_http_error(const bj::value& id, const http::Error& e) {
  const char* reason = e.status() == 401   ? "UNAUTHENTICATED"
                       : e.status() == 403 ? "PERMISSION_DENIED"
                       : e.status() == 429 ? "RESOURCE_EXHAUSTED"
                                           : "INVALID_REQUEST";
  bj::array data{bj::object{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
                            {"reason", reason},
                            {"domain", "schemagate"},
                            {"metadata", bj::object{{"code", e.code()}}}}};
  auto r = http::Response::json(e.status(), rpc_error(id, -32600, e.what(), std::move(data)));
  for (const auto& h : e.extra_headers)
    r.set_header(h.name, h.value);
  return r;
}

http::Response rest_error(const A2AError& e) {
  return http::Response::json(e.http_status(),
                              bj::object{{"error", bj::object{{"code", e.http_status()},
                                                              {"status", grpc_status(e.kind())},
                                                              {"message", e.what()},
                                                              {"details", e.wire_details()}}}});
}

http::Error agent_not_found(const registry::RegistryError& e) {
  return http::Error(404, "NotFound", e.what());
}

struct Audit {
  Auth* auth;
  std::string client;
  std::string action;
  std::string target;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  void operator()(int status) const {
    auth->access().audit(
        client, action, target, status,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
};

http::Response with_extensions(http::Response r, const http::Request& req) {
  if (const auto ext = activated_extensions(req); !ext.empty()) r.set_header("A2A-Extensions", ext);
  return r;
}

http::Response json_rpc(a2a::A2AService& service, Auth& auth, const A2ARouteOptions& o,
                        http::Request& req) {
  const std::string agent = req.param("agent");
  bj::value body;
  try {
    body = read_json_body(req, o.limits);
  } catch (const http::Error& e) {
    if (e.status() != 400) throw;
    return http::Response::json(200, rpc_error(nullptr, -32700, e.what(), {}));
  }
  if (!body.is_object()) {
    return http::Response::json(
        200, rpc_error(nullptr, -32600,
                       body.is_array() ? "A2A does not use JSON-RPC batches: send one request"
                                       : "a JSON-RPC request must be an object",
                       {}));
  }
  const auto& rpc = body.get_object();
  const auto* idp = rpc.if_contains("id");
  const bj::value id = idp ? *idp : bj::value(nullptr);
  if (idp && !(idp->is_string() || idp->is_number() || idp->is_null())) {
    return http::Response::json(
        200, rpc_error(nullptr, -32600, "id must be a string, a number or null", {}));
  }
  const auto* jv = rpc.if_contains("jsonrpc");
  const auto* mv = rpc.if_contains("method");
  if (!jv || !jv->is_string() || jv->get_string() != "2.0" || !mv || !mv->is_string()) {
    return http::Response::json(
        200, rpc_error(id, -32600,
                       "a JSON-RPC 2.0 request needs \"jsonrpc\": \"2.0\" and a method name", {}));
  }
  const std::string method_name(mv->get_string());
  bj::value params = bj::object{};
  if (const auto* pv = rpc.if_contains("params"); pv && !pv->is_null()) {
    if (!pv->is_object()) {
      return http::Response::json(200, rpc_error(id, -32602, "params must be an object", {}));
    }
    params = *pv;
  }
  if (!a2a::parse_wire_version(version_param(req))) {
    const A2AError e(Kind::version_not_supported,
                     "A2A-Version \"" + std::string(*version_param(req)) +
                         "\" is not supported: this server speaks 1.0 and 0.3",
                     {}, bj::object{{"supportedVersions", "1.0, 0.3"}});
    return with_extensions(http::Response::json(200, rpc_error(id, e)), req);
  }
  gateway::Principal who;
  try {
    who = auth.require(req, gateway::Role::client);
  } catch (const http::Error& e) {
    return rpc_http_error(id, e);
  }
  const Audit audit{&auth, who.client_id, "a2a/" + method_name, agent};
  const auto method = method_of(method_name);
  if (!method) {
    audit(404);
    return http::Response::json(
        200, rpc_error(id, -32601,
                       "method \"" + method_name +
                           "\" not found; A2A 1.0 methods are SendMessage, SendStreamingMessage, "
                           "GetTask, ListTasks, CancelTask, SubscribeToTask (0.3: message/send, "
                           "message/stream, tasks/get, tasks/cancel, tasks/resubscribe)",
                       {}));
  }
  try {
    auto out = dispatch(service, method->op, agent, params, Auth::caller(who));
    audit(200);
    if (out.events)
      return with_extensions(event_stream(std::move(out.events), id, method->legacy), req);
    if (!idp) {  // a notification: no answer
      http::Response r;
      r.status = 204;
      return r;
    }
    return with_extensions(
        http::Response::json(
            200, bj::object{{"jsonrpc", "2.0"},
                            {"id", id},
                            {"result", shaped(method->op, out.result, method->legacy)}}),
        req);
  } catch (const A2AError& e) {
    audit(e.http_status());
    return with_extensions(http::Response::json(200, rpc_error(id, e)), req);
  } catch (const registry::RegistryError& e) {
    audit(404);
    throw agent_not_found(e);
  } catch (const std::exception& e) {
    // The store or something else below failed: still a JSON-RPC answer, with the request's id.
    spdlog::error("a2a {} on {}: {}", method_name, agent, e.what());
    audit(500);
    return http::Response::json(500,
                                rpc_error(id, -32603, "internal error; the server logged it", {}));
  }
}

// The HTTP+JSON binding: the same calls, with parameters from the path, query and body.
http::Response rest(a2a::A2AService& service, Auth& auth, http::Request& req, Op op,
                    bj::value params) {
  const std::string agent = req.param("agent");
  if (!a2a::parse_wire_version(version_param(req))) {
    return rest_error(A2AError(Kind::version_not_supported,
                               "A2A-Version \"" + std::string(*version_param(req)) +
                                   "\" is not supported: this server speaks 1.0 and 0.3"));
  }
  const auto who = auth.require(req, gateway::Role::client);
  const Audit audit{&auth, who.client_id, "a2a/rest", agent};
  try {
    auto out = dispatch(service, op, agent, params, Auth::caller(who));
    audit(200);
    if (out.events)
      return with_extensions(event_stream(std::move(out.events), std::nullopt, false), req);
    auto r = http::Response::json(200, out.result);
    r.set_header("Content-Type", "application/a2a+json");
    return with_extensions(std::move(r), req);
  } catch (const A2AError& e) {
    audit(e.http_status());
    return rest_error(e);
  } catch (const registry::RegistryError& e) {
    audit(404);
    throw agent_not_found(e);
  }
}

bj::value body_params(const http::Request& req, const json::ParseLimits& limits) {
  if (req.body.empty()) return bj::object{};
  try {
    return read_json_body(req, limits);
  } catch (const http::Error& e) {
    if (e.status() != 400) throw;
    throw A2AError(Kind::parse_error, e.what());
  }
}

// "abc:cancel" -> {"abc", "cancel"}.
std::pair<std::string, std::string> task_action(const std::string& segment) {
  const auto colon = segment.rfind(':');
  if (colon == std::string::npos) return {segment, ""};
  return {segment.substr(0, colon), segment.substr(colon + 1)};
}

}  // namespace

void add_a2a_routes(http::Router& router, a2a::A2AService& service, Auth& auth,
                    const A2ARouteOptions& options) {
  const A2ARouteOptions* o = &options;
  router.add(
      "GET", "/a2a/{agent}/.well-known/agent-card.json", [&service, &auth, o](http::Request& req) {
        const auto version = a2a::parse_wire_version(version_param(req));
        if (!version) {
          return rest_error(A2AError(Kind::version_not_supported,
                                     "A2A-Version \"" + std::string(*version_param(req)) +
                                         "\" is not supported: this server speaks 1.0 and 0.3"));
        }
        const auto who = auth.identify(req);
        a2a::A2AService::Card card;
        try {
          // Absent A2A-Version means 0.3, but a client that says nothing gets the v1.0 card (every
          // v1.0 field) with the 0.3 fields beside it; one that asks for 0.3 gets the 0.3 card.
          const bool asked_03 =
              version_param(req).has_value() && *version == a2a::WireVersion::v0_3;
          card = service.card(
              req.param("agent"), Auth::caller(who),
              a2a::CardContext{base_url(req, *o), !auth.access().open(), !version_param(req)},
              asked_03 ? a2a::WireVersion::v0_3 : a2a::WireVersion::v1_0);
        } catch (const registry::RegistryError& e) {
          throw agent_not_found(e);
        }
        const std::string text = util::json_text(card.body);
        const std::string tag = util::etag_of_bytes(text);
        auto r = http::conditional(
            req, tag, [&] { return http::Response::text(200, text, "application/json"); });
        r.set_header("Cache-Control",
                     std::string(card.is_public ? "public" : "private") + ", max-age=60");
        r.set_header("Vary", "A2A-Version, Authorization");
        return r;
      });

  router.add("POST", "/a2a/{agent}",
             [&service, &auth, o](http::Request& req) { return json_rpc(service, auth, *o, req); });

  router.add("POST", "/a2a/{agent}/message:send", [&service, &auth, o](http::Request& req) {
    try {
      return rest(service, auth, req, Op::send, body_params(req, o->limits));
    } catch (const A2AError& e) {
      return rest_error(e);
    }
  });
  router.add("POST", "/a2a/{agent}/message:stream", [&service, &auth, o](http::Request& req) {
    try {
      return rest(service, auth, req, Op::stream, body_params(req, o->limits));
    } catch (const A2AError& e) {
      return rest_error(e);
    }
  });
  router.add("GET", "/a2a/{agent}/tasks", [&service, &auth, o](http::Request& req) {
    bj::object params;
    for (const auto& [k, v] : req.query)
      params[k] = v;
    return rest(service, auth, req, Op::list, std::move(params));
  });
  const auto task_route = [&service, &auth, o](http::Request& req) {
    const auto [id, action] = task_action(req.param("task"));
    bj::object params{{"id", id}};
    for (const auto& [k, v] : req.query)
      params[k] = v;
    Op op = Op::get;
    if (action == "cancel" && req.method == "POST") {
      op = Op::cancel;
    } else if (action == "subscribe") {
      op = Op::subscribe;
    } else if (!action.empty() || req.method != "GET") {
      throw http::Error(
          404, "NotFound",
          "no A2A operation \"" + req.param("task") +
              "\": use GET tasks/{id}, POST tasks/{id}:cancel or tasks/{id}:subscribe");
    }
    return rest(service, auth, req, op, std::move(params));
  };
  router.add("GET", "/a2a/{agent}/tasks/{task}", task_route);
  router.add("POST", "/a2a/{agent}/tasks/{task}", task_route);
}

}  // namespace schemagate::api
