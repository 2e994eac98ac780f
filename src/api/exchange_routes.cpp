#include "api/exchange_routes.hpp"

#include "api/auth.hpp"
#include "api/json_body.hpp"
#include "api/version_envelope.hpp"
#include "exchange/exchange_service.hpp"
#include "util/contract_error.hpp"
#include "util/text.hpp"

#include <charconv>

namespace schemagate::api {

namespace bj = boost::json;
using exchange::ExchangeError;
using Kind = ExchangeError::Kind;

namespace {

struct UnknownMethod : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// JSON-RPC codes per kind; HTTP status and contract code come from exchange::contract_of.
int rpc_code(Kind kind) {
  switch (kind) {
    case Kind::invalid_input:
    case Kind::invalid_payload:
    case Kind::invalid_template:
      return -32602;
    case Kind::not_found:
      return -32004;
    case Kind::conflict:
      return -32009;
    case Kind::agent_unreachable:
      return -32052;
    case Kind::agent_timeout:
      return -32054;
    case Kind::agent_error:
      return -32050;
    case Kind::invalid_agent_response:
      return -32051;
  }
  return -32603;
}

http::Error to_http(const ExchangeError& e) {
  const auto m = exchange::contract_of(e.kind());
  return http::Error(m.status, m.code, e.what(),
                     e.details().is_null() ? std::nullopt : std::optional<bj::value>(e.details()));
}

// Runs a service call and turns its domain errors into HTTP ones.
template <typename F>
auto call(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const ExchangeError& e) {
    throw to_http(e);
  }
}

// The body a declined fast path already read (and its caller already checked).
struct PayloadHandover {
  bj::value body;
};

// A submit_payload request over REST: {"schema_id"?, "payload", "client_id"?} and the version
// envelope's fields. Points into `body`.
struct PayloadRequest {
  std::string_view schema_id;
  const bj::value* payload = nullptr;
  std::string client_id;
  exchange::VersionRequest version;
};

PayloadRequest read_payload_request(const http::Request& req, const bj::value& body) {
  if (!body.is_object()) {
    throw ExchangeError(Kind::invalid_input,
                        "the body must be {\"schema_id\", \"payload\", \"client_id\"?}");
  }
  const auto& o = body.get_object();
  PayloadRequest p;
  const auto* id = o.if_contains("schema_id");
  if (id && !id->is_string())
    throw ExchangeError(Kind::invalid_input, "schema_id must be a string");
  if (id) p.schema_id = id->get_string();
  p.payload = o.if_contains("payload");
  if (!p.payload) throw ExchangeError(Kind::invalid_input, "payload is required");
  const auto* client = o.if_contains("client_id");
  p.client_id = client && client->is_string() ? std::string(client->get_string())
                : req.header("X-Client-Id")   ? std::string(*req.header("X-Client-Id"))
                                              : std::string();
  p.version = read_version_request(o);
  return p;
}

std::string string_param(const bj::object& params, std::string_view name, bool required) {
  const auto* v = params.if_contains(name);
  if (!v || v->is_null()) {
    if (required) {
      throw ExchangeError(Kind::invalid_input, "params." + std::string(name) + " is required");
    }
    return {};
  }
  if (!v->is_string()) {
    throw ExchangeError(Kind::invalid_input, "params." + std::string(name) + " must be a string");
  }
  return std::string(v->get_string());
}

std::optional<std::int64_t> since_param(std::optional<std::string_view> text) {
  if (!text || text->empty()) return std::nullopt;
  std::int64_t v = 0;
  const auto res = std::from_chars(text->data(), text->data() + text->size(), v);
  if (res.ec != std::errc{} || res.ptr != text->data() + text->size()) {
    throw ExchangeError(Kind::invalid_input,
                        "since must be a timestamp in milliseconds since 1970 (a patch's "
                        "timestamp_ms), got \"" +
                            std::string(*text) + "\"");
  }
  return v;
}

std::vector<std::string> version_list(const bj::value* v) {
  std::vector<std::string> out;
  if (!v || v->is_null()) return out;
  if (!v->is_array()) {
    throw ExchangeError(Kind::invalid_input, "supported_versions must be an array of versions");
  }
  for (const auto& x : v->get_array()) {
    if (!x.is_string()) throw ExchangeError(Kind::invalid_input, "versions must be strings");
    out.push_back(std::string(x.get_string()));
  }
  return out;
}

// JSON-RPC code for a contract error's HTTP status.
int rpc_code_of_status(int status) {
  switch (status) {
    case 400:
    case 422:
      return -32602;
    case 403:
      return -32003;
    case 404:
      return -32004;
    case 409:
      return -32009;
    default:
      return -32603;
  }
}

// The three seed-000 methods, shared by both JSON-RPC styles.
bj::value dispatch_method(exchange::ExchangeService& service, std::string_view method,
                          const bj::value& params_value, bool may_submit) {
  if (!params_value.is_object()) {
    throw ExchangeError(Kind::invalid_input, "params must be an object");
  }
  const auto& params = params_value.get_object();
  if (method == "get_schema_template") {
    const auto scenario = string_param(params, "scenario", true);
    const auto version = string_param(params, "schema_version", false);
    return service
        .negotiate(scenario, string_param(params, "preferred_language", false),
                   version.empty() ? std::nullopt : std::optional<std::string>(version),
                   version_list(params.if_contains("supported_versions")))
        .body;
  }
  if (method == "submit_payload") {
    if (!may_submit) {
      http::Error e(401, "Unauthorized",
                    "submit_payload needs an API key: send Authorization: Bearer <key>");
      e.extra_headers.push_back({"WWW-Authenticate", "Bearer"});
      throw e;
    }
    const auto* payload = params.if_contains("payload");
    if (!payload) throw ExchangeError(Kind::invalid_input, "params.payload is required");
    const auto versions = read_version_request(params);
    const auto scenario = string_param(params, "scenario", false);
    return service.submit(string_param(params, "schema_id", scenario.empty()), *payload,
                          string_param(params, "client_id", false), scenario, versions);
  }
  if (method == "get_schema_updates") {
    std::optional<std::int64_t> since;
    if (const auto* s = params.if_contains("since"); s && s->is_number()) {
      since = s->to_number<std::int64_t>();
    }
    return service.updates(string_param(params, "scenario", true),
                           string_param(params, "client_id", false), since);
  }
  throw UnknownMethod(std::string(method));
}

bj::value rpc_error(int code, std::string message, const bj::value& id, bj::value data = nullptr) {
  bj::object err{{"code", code}, {"message", std::move(message)}};
  if (!data.is_null()) err["data"] = std::move(data);
  return bj::object{{"jsonrpc", "2.0"}, {"error", std::move(err)}, {"id", id}};
}

// One JSON-RPC 2.0 request object -> its response (null for a notification).
bj::value handle_rpc(exchange::ExchangeService& service, const bj::value& request,
                     bool may_submit) {
  if (!request.is_object()) return rpc_error(-32600, "a request must be an object", nullptr);
  const auto& r = request.get_object();
  const bj::value id = r.contains("id") ? r.at("id") : bj::value(nullptr);
  const bool notification = !r.contains("id");
  const auto* method = r.if_contains("method");
  if (!method || !method->is_string() || r.at("jsonrpc") != "2.0") {
    return rpc_error(-32600, "invalid request: jsonrpc must be \"2.0\" and method a string", id);
  }
  const bj::value params = r.contains("params") ? r.at("params") : bj::value(bj::object{});
  try {
    bj::value result = dispatch_method(service, method->get_string(), params, may_submit);
    if (notification) return nullptr;
    return bj::object{{"jsonrpc", "2.0"}, {"result", std::move(result)}, {"id", id}};
  } catch (const ExchangeError& e) {
    if (notification) return nullptr;
    bj::object data{{"code", exchange::contract_of(e.kind()).code}};
    if (!e.details().is_null()) data["details"] = e.details();
    return rpc_error(rpc_code(e.kind()), e.what(), id, std::move(data));
  } catch (const http::Error& e) {
    if (notification || e.status() == 401) throw;
    bj::object data{{"code", e.code()}};
    if (e.details()) data["details"] = *e.details();
    return rpc_error(rpc_code_of_status(e.status()), e.what(), id, std::move(data));
  } catch (const util::ContractError& e) {
    if (notification) return nullptr;
    bj::object data{{"code", e.code()}};
    if (!e.details().is_null()) data["details"] = e.details();
    return rpc_error(rpc_code_of_status(e.status()), e.what(), id, std::move(data));
  } catch (const UnknownMethod&) {
    if (notification) return nullptr;
    return rpc_error(-32601,
                     "method \"" + std::string(method->get_string()) +
                         "\" not found (get_schema_template, submit_payload, get_schema_updates)",
                     id);
  }
}

}  // namespace

void add_exchange_routes(http::Router& router, exchange::ExchangeService& service, Auth& auth,
                         const json::ParseLimits& limits) {
  using gateway::Role;
  router.add("GET", "/scenarios", [&service](http::Request&) {
    return http::Response::json(
        200, bj::object{{"scenarios", call([&] { return service.list_scenarios(); })}});
  });

  router.add("PUT", "/scenarios/{scenario}/versions/{version}",
             [&service, &auth, &limits](http::Request& req) {
               auth.require(req, Role::publisher);
               const auto body = read_json_body(req, limits);
               const auto published = call([&] {
                 return service.publish(req.param("scenario"), req.param("version"), body);
               });
               return http::Response::json(published.created ? 201 : 200, published.template_json);
             });

  router.add("GET", "/scenarios/{scenario}/versions/{version}", [&service](http::Request& req) {
    const auto n = call([&] {
      return service.negotiate(req.param("scenario"), "",
                               std::optional<std::string>(req.param("version")), {}, false);
    });
    return http::Response::json(200, n.body);
  });

  router.add("GET", "/scenarios/{scenario}/versions/{version}/json-schema",
             [&service](http::Request& req) {
               return http::Response::json(200, call([&] {
                                             return service.json_schema(req.param("scenario"),
                                                                        req.param("version"));
                                           }));
             });

  router.add("GET", "/scenarios/{scenario}/template", [&service](http::Request& req) {
    const auto lang = req.query_param("preferred_language");
    const auto version = req.query_param("schema_version");
    std::vector<std::string> supported;
    if (const auto list = req.query_param("supported_versions")) {
      std::string_view rest = *list;
      while (!rest.empty()) {
        const auto comma = rest.find(',');
        const auto v = util::trim(rest.substr(0, comma));
        if (!v.empty()) supported.push_back(std::string(v));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      }
    }
    const auto n = call([&] {
      return service.negotiate(
          req.param("scenario"), lang ? *lang : std::string_view{},
          version ? std::optional<std::string>(std::string(*version)) : std::nullopt, supported);
    });
    return http::conditional(req, n.etag, [&] {
      auto r = http::Response::json(200, n.body);
      r.set_header("Content-Language", std::string(n.body.at("language").as_string()));
      return r;
    });
  });

  router.add("POST", "/scenarios/{scenario}/payloads",
             [&service, &auth, &limits](http::Request& req) {
               const auto handover = std::static_pointer_cast<PayloadHandover>(req.handover);
               if (!handover) auth.require(req, Role::client);
               const auto body = handover ? handover->body : read_json_body(req, limits);
               const auto result = call([&] {
                 const auto p = read_payload_request(req, body);
                 return service.submit(p.schema_id, *p.payload, p.client_id, req.param("scenario"),
                                       p.version);
               });
               return http::Response::json(200, result);
             });
  // The same without a thread waiting for the scenario's agent.
  router.add_fast_path(
      "POST", "/scenarios/{scenario}/payloads",
      [&service, &auth, &limits](http::Request& req, const http::Responder& respond) {
        auth.require(req, Role::client);
        auto handover =
            std::make_shared<PayloadHandover>(PayloadHandover{read_json_body(req, limits)});
        req.handover = handover;
        return call([&] {
          const auto p = read_payload_request(req, handover->body);
          return service.submit_async(
              p.schema_id, *p.payload, p.client_id, req.param("scenario"), p.version,
              [respond](bj::object result, std::exception_ptr error) {
                if (!error) {
                  respond(http::Response::json(200, result));
                  return;
                }
                try {
                  std::rethrow_exception(error);
                } catch (const ExchangeError& e) {
                  respond(http::error_response(to_http(e)));
                } catch (const std::exception& e) {
                  respond(http::error_response(http::Error(500, "Internal", e.what())));
                }
              });
        });
      });

  // Seed 003 §3.4: what publishing a version would change, without publishing it.
  router.add("POST", "/scenarios/{scenario}/compatibility",
             [&service, &limits](http::Request& req) {
               const auto body = read_json_body(req, limits);
               return http::Response::json(
                   200, call([&] { return service.compatibility(req.param("scenario"), body); }));
             });

  router.add("GET", "/scenarios/{scenario}/endpoint", [&service](http::Request& req) {
    return http::Response::json(
        200, call([&] {
          const auto b = service.binding_of(req.param("scenario"));
          return bj::object{
              {"scenario", req.param("scenario")},
              {"endpoint", b.endpoint.empty() ? bj::value(nullptr) : bj::value(b.endpoint)},
              {"accepts_patch_keys", b.accepts_patch_keys}};
        }));
  });

  router.add(
      "PUT", "/scenarios/{scenario}/endpoint", [&service, &auth, &limits](http::Request& req) {
        auth.require(req, Role::publisher);
        const auto body = read_json_body(req, limits);
        const auto* e = body.is_object() ? body.get_object().if_contains("endpoint") : nullptr;
        if (!e || !(e->is_string() || e->is_null())) {
          throw http::Error(400, "InvalidInput",
                            "the body must be {\"endpoint\": \"http://...\", "
                            "\"accepts_patch_keys\"?: bool} (endpoint null to unbind)");
        }
        const auto* a = body.get_object().if_contains("accepts_patch_keys");
        if (a && !a->is_bool()) {
          throw http::Error(400, "InvalidInput", "accepts_patch_keys must be true or false");
        }
        const bool accepts = a && a->get_bool();
        call([&] {
          service.bind_endpoint(req.param("scenario"),
                                e->is_string() ? std::string_view(e->get_string()) : "", accepts);
          return 0;
        });
        return http::Response::json(200, bj::object{{"scenario", req.param("scenario")},
                                                    {"endpoint", *e},
                                                    {"accepts_patch_keys", accepts}});
      });

  router.add("POST", "/scenarios/{scenario}/patches",
             [&service, &auth, &limits](http::Request& req) {
               auth.require(req, Role::publisher);
               const auto body = read_json_body(req, limits);
               return http::Response::json(
                   201, call([&] { return service.post_patch(req.param("scenario"), body); }));
             });

  router.add("GET", "/scenarios/{scenario}/updates", [&service](http::Request& req) {
    const auto client = req.query_param("client_id");
    return http::Response::json(200, call([&] {
                                  return service.updates(req.param("scenario"),
                                                         client ? *client : std::string_view{},
                                                         since_param(req.query_param("since")));
                                }));
  });

  // JSON-RPC 2.0 (single or batch). A bare {"method", "params"} object without "jsonrpc", as
  // in seed 000 Appendix A, is answered with the bare result (or an HTTP error envelope).
  router.add("POST", "/sdsi", [&service, &auth, &limits](http::Request& req) {
    // Negotiation is open to anyone; submit_payload needs a client key (checked per method).
    const bool may_submit = !Auth::anonymous(auth.identify(req));
    bj::value body;
    try {
      body = read_json_body(req, limits);
    } catch (const http::Error& e) {
      if (e.status() != 400) throw;
      return http::Response::json(200, rpc_error(-32700, e.what(), nullptr));
    }
    if (body.is_array()) {
      if (body.get_array().empty()) {
        return http::Response::json(200, rpc_error(-32600, "empty batch", nullptr));
      }
      bj::array responses;
      for (const auto& r : body.get_array()) {
        auto res = handle_rpc(service, r, may_submit);
        if (!res.is_null()) responses.push_back(std::move(res));
      }
      if (responses.empty()) {
        http::Response r;
        r.status = 204;
        return r;
      }
      return http::Response::json(200, responses);
    }
    if (body.is_object() && !body.get_object().contains("jsonrpc")) {
      const auto* method = body.get_object().if_contains("method");
      if (!method || !method->is_string()) {
        throw http::Error(400, "InvalidInput", "the body needs a \"method\" string");
      }
      const bj::value params = body.get_object().contains("params") ? body.get_object().at("params")
                                                                    : bj::value(bj::object{});
      try {
        return http::Response::json(200, call([&] {
                                      return dispatch_method(service, method->get_string(), params,
                                                             may_submit);
                                    }));
      } catch (const UnknownMethod&) {
        throw http::Error(404, "NotFound",
                          "method \"" + std::string(method->get_string()) + "\" not found");
      }
    }
    auto res = handle_rpc(service, body, may_submit);
    if (res.is_null()) {
      http::Response r;
      r.status = 204;
      return r;
    }
    return http::Response::json(200, res);
  });
}

}  // namespace schemagate::api
