#include "sdk/client.hpp"

#include "http/client.hpp"
#include "json/parse.hpp"
#include "jsonschema/schema.hpp"
#include "signing/jws.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>

namespace schemagate::sdk {

namespace bj = boost::json;

struct SchemaClient::Impl {
  ClientOptions options;
  http::Client http;
  struct Cached {
    std::string etag;
    bj::object body;
  };
  std::map<std::string, Cached> templates;  // by scenario
  struct Local {
    std::string schema_id;
    bj::object schema;
    std::shared_ptr<jsonschema::Schema> compiled;
  };
  std::map<std::string, Local> schemas;  // by scenario
  std::optional<bj::value> suggestion;
  Stats stats;
  bj::object jwks;  // kid -> JWK, fetched on first need and again for an unknown kid

  void load_jwks() {
    const auto r = call("GET", "/.well-known/jwks.json");
    throw_if_error(r);
    jwks = signing::keys_by_kid(parse_body(r));
  }

  // Checks `jws` over `document` (its "signature" member left out) against the server's keys,
  // fetching them again once for a key it has not seen (a rotation).
  void verify(const bj::value& document, const bj::value* jws, const std::string& what) {
    if (!jws) {
      if (options.require_signatures) throw IntegrityError(what + " is not signed");
      return;
    }
    if (!jws->is_string()) throw IntegrityError(what + ": the signature is not a JWS string");
    if (jwks.empty()) load_jwks();
    auto problem = signing::verify_document(document, jws->get_string(), jwks);
    if (problem.find("not a trusted key") != std::string::npos) {
      load_jwks();
      problem = signing::verify_document(document, jws->get_string(), jwks);
    }
    if (!problem.empty()) throw IntegrityError(what + ": " + problem);
  }

  http::ClientResponse call(std::string_view method, const std::string& path, std::string body = {},
                            std::vector<http::Header> headers = {}) {
    if (!body.empty()) headers.push_back({"Content-Type", "application/json"});
    try {
      return http.request(method, options.base_url + path, std::move(body), headers,
                          options.timeout);
    } catch (const http::ClientError& e) {
      throw ServerError(e.kind() == http::ClientError::Kind::timeout ? 504 : 502, "Unreachable",
                        e.what(), nullptr);
    }
  }

  static bj::value parse_body(const http::ClientResponse& r) {
    try {
      return json::parse(r.body);
    } catch (const json::ParseError& e) {
      throw ServerError(r.status, "InvalidResponse",
                        std::string("the server's reply is not JSON: ") + e.what(), nullptr);
    }
  }

  static void throw_if_error(const http::ClientResponse& r) {
    if (r.status < 400) return;
    const auto body = parse_body(r);
    const auto* err = body.is_object() ? body.get_object().if_contains("error") : nullptr;
    if (!err || !err->is_object())
      throw ServerError(r.status, "Unknown", "HTTP " + std::to_string(r.status), nullptr);
    const auto& e = err->get_object();
    throw ServerError(r.status, std::string(e.at("code").as_string()),
                      std::string(e.at("message").as_string()),
                      e.contains("details") ? e.at("details") : bj::value(nullptr));
  }

  Local& local_schema(const std::string& scenario, const bj::object& tmpl) {
    const std::string schema_id(tmpl.at("schema_id").as_string());
    auto it = schemas.find(scenario);
    if (it != schemas.end() && it->second.schema_id == schema_id) return it->second;
    const auto r = call("GET", "/scenarios/" + scenario + "/versions/" +
                                   std::string(tmpl.at("version").as_string()) + "/json-schema");
    throw_if_error(r);
    Local l{schema_id, parse_body(r).as_object(), nullptr};
    compile(l);
    return schemas[scenario] = std::move(l);
  }

  static void compile(Local& l) {
    jsonschema::CompileOptions opts;
    opts.assert_format = true;
    l.compiled = std::make_shared<jsonschema::Schema>(jsonschema::Schema::compile(l.schema, opts));
  }

  // Keys a suggestion adds become known locally, so that a client adopting them passes check().
  void adopt(const std::string& scenario, const bj::value& s) {
    suggestion = s;
    auto it = schemas.find(scenario);
    if (it == schemas.end() || !s.is_object() || !s.get_object().contains("new_keys")) return;
    auto& props = it->second.schema["properties"].as_object();
    for (const auto& k : s.at("new_keys").as_array()) {
      bj::object prop{{"type", k.at("key_type")}};
      for (const char* c : {"enum", "minimum", "maximum", "minLength", "maxLength", "pattern",
                            "format", "items", "properties", "exclusiveMinimum", "exclusiveMaximum",
                            "multipleOf", "minItems", "maxItems"}) {
        if (const auto* v = k.as_object().if_contains(c)) prop[c] = *v;
      }
      props[k.at("key_name").as_string()] = std::move(prop);
    }
    compile(it->second);
  }
};

SchemaClient::SchemaClient(ClientOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

SchemaClient::~SchemaClient() = default;

const bj::object& SchemaClient::negotiate(const std::string& scenario) {
  std::string path = "/scenarios/" + scenario + "/template";
  std::string query;
  if (!impl_->options.preferred_language.empty()) {
    query += "preferred_language=" + impl_->options.preferred_language;
  }
  if (!impl_->options.supported_versions.empty()) {
    query += std::string(query.empty() ? "" : "&") + "supported_versions=";
    for (std::size_t i = 0; i < impl_->options.supported_versions.size(); ++i) {
      query += (i ? "," : "") + impl_->options.supported_versions[i];
    }
  }
  if (!query.empty()) path += "?" + query;
  std::vector<http::Header> headers;
  const auto cached = impl_->templates.find(scenario);
  if (cached != impl_->templates.end()) headers.push_back({"If-None-Match", cached->second.etag});
  const auto r = impl_->call("GET", path, {}, headers);
  if (r.status == 304 && cached != impl_->templates.end()) {
    ++impl_->stats.template_revalidations;
    return cached->second.body;
  }
  impl_->throw_if_error(r);
  ++impl_->stats.template_downloads;
  auto body = impl_->parse_body(r);
  impl_->verify(body, body.as_object().if_contains("signature"), "the " + scenario + " template");
  if (const auto* v = body.as_object().if_contains("schema_version");
      v && v->is_string() && !impl_->options.supported_versions.empty()) {
    const auto& list = impl_->options.supported_versions;
    if (std::find(list.begin(), list.end(), v->get_string()) == list.end()) {
      throw IntegrityError("the server negotiated version " + std::string(v->get_string()) +
                           ", which this client does not support");
    }
  }
  auto& slot = impl_->templates[scenario];
  slot.etag = r.header("ETag") ? std::string(*r.header("ETag")) : std::string();
  slot.body = std::move(body.as_object());
  return slot.body;
}

std::string SchemaClient::negotiated_version(const std::string& scenario) const {
  const auto it = impl_->templates.find(scenario);
  if (it == impl_->templates.end()) return {};
  const auto* v = it->second.body.if_contains("schema_version");
  if (!v) v = it->second.body.if_contains("version");
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::vector<Violation> SchemaClient::check(const std::string& scenario, const bj::object& payload) {
  const auto& tmpl = negotiate(scenario);
  auto& local = impl_->local_schema(scenario, tmpl);
  const auto result = local.compiled->evaluate(payload);
  std::vector<Violation> out;
  for (const auto& e : result.errors)
    out.push_back({e.instance_location, e.keyword_location, e.error});
  return out;
}

bj::object SchemaClient::submit(const std::string& scenario, const bj::object& payload) {
  auto violations = check(scenario, payload);
  if (!violations.empty()) {
    const std::string first =
        violations.front().instance_location + " " + violations.front().message;
    throw LocalValidationError("the payload does not match the negotiated template: " + first,
                               std::move(violations));
  }
  const auto& tmpl = impl_->templates.at(scenario).body;
  bj::object body{{"schema_id", tmpl.at("schema_id")}, {"payload", payload}};
  if (!impl_->options.client_id.empty()) body["client_id"] = impl_->options.client_id;
  const auto r = impl_->call("POST", "/scenarios/" + scenario + "/payloads", bj::serialize(body));
  impl_->throw_if_error(r);
  auto result = impl_->parse_body(r).as_object();
  // Seed 003 §8: the answer states its version, signed; anything but the negotiated one is a
  // downgrade (or an upgrade nobody asked for).
  if (const auto* v = result.if_contains("schema_version"); v && v->is_string()) {
    impl_->verify(bj::object{{"contract", scenario}, {"schema_version", *v}},
                  result.if_contains("schema_version_signature"),
                  "the negotiated version of the answer");
    if (v->get_string() != negotiated_version(scenario)) {
      throw IntegrityError("the server answered in version " + std::string(v->get_string()) +
                           " instead of the negotiated " + negotiated_version(scenario));
    }
  }
  if (const auto* s = result.if_contains("schema_update_suggestion")) {
    impl_->verify(*s, s->is_object() ? s->get_object().if_contains("signature") : nullptr,
                  "the update suggestion");
    impl_->adopt(scenario, *s);
  }
  return result;
}

const std::optional<bj::value>& SchemaClient::last_update_suggestion() const {
  return impl_->suggestion;
}

SchemaClient::Stats SchemaClient::stats() const {
  return impl_->stats;
}

}  // namespace schemagate::sdk
