#include "versioning_commands.hpp"

#include "exchange/exchange_service.hpp"
#include "exchange/template.hpp"
#include "http/client.hpp"
#include "json/parse.hpp"
#include "jsonschema/schema.hpp"
#include "mapping/mapping.hpp"
#include "signing/jws.hpp"
#include "util/clock.hpp"
#include "util/files.hpp"
#include "util/json_text.hpp"
#include "versioning/classifier.hpp"
#include "versioning/semver.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>

namespace schemagate::cli {

namespace bj = boost::json;

namespace {

// A usage or input problem: exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bj::value read_json(const std::string& path) {
  try {
    return json::parse(util::read_file(path));
  } catch (const json::ParseError& e) {
    throw UsageError(path + ": not JSON: " + e.what());
  } catch (const std::exception& e) {
    throw UsageError(path + ": " + e.what());
  }
}

// The input and output schemas a file stands for: a seed 000 template (keys), one operation of
// an agent card (--operation), or a plain JSON Schema on the side --direction names.
struct Sides {
  bj::value input = nullptr, output = nullptr;
};

Sides sides_of(const std::string& path, const VersioningCommands& c) {
  const auto doc = read_json(path);
  Sides s;
  if (doc.is_object() && doc.get_object().contains("keys")) {
    const auto* scenario = doc.get_object().if_contains("scenario");
    auto parsed = exchange::parse_template(
        doc,
        scenario && scenario->is_string() ? std::string_view(scenario->get_string()) : "compat",
        "0.0.0");
    if (auto* problems = std::get_if<std::vector<exchange::TemplateProblem>>(&parsed)) {
      throw UsageError(path + ": not a valid template: " + problems->front().path + " " +
                       problems->front().message);
    }
    const auto& t = std::get<exchange::Template>(parsed);
    s.input = exchange::ExchangeService::contract_input(t);
    if (t.response_schema) s.output = *t.response_schema;
    return s;
  }
  if (!c.operation.empty()) {
    const auto* ops = doc.is_object() ? doc.get_object().if_contains("operations") : nullptr;
    if (ops && ops->is_array()) {
      for (const auto& op : ops->get_array()) {
        if (op.is_object() && op.get_object().contains("name") &&
            op.at("name") == bj::value(c.operation)) {
          if (const auto* i = op.get_object().if_contains("input_schema")) s.input = *i;
          if (const auto* o = op.get_object().if_contains("output_schema")) s.output = *o;
          return s;
        }
      }
    }
    throw UsageError(path + ": no operation \"" + c.operation + "\" in its operations");
  }
  try {
    jsonschema::Schema::compile(doc);
  } catch (const std::exception& e) {
    throw UsageError(path + ": not a valid JSON Schema: " + e.what());
  }
  (c.direction == "output" ? s.output : s.input) = doc;
  return s;
}

int run_compat(const VersioningCommands& c) {
  const auto policy = *versioning::parse_policy(c.policy);
  const auto a = sides_of(c.old_file, c);
  const auto b = sides_of(c.new_file, c);
  versioning::Report report;
  if (!a.input.is_null() || !b.input.is_null()) {
    versioning::classify(a.input.is_null() ? bj::value(true) : a.input,
                         b.input.is_null() ? bj::value(true) : b.input,
                         versioning::Direction::input, policy, report);
  }
  if (!a.output.is_null() || !b.output.is_null()) {
    versioning::classify(a.output.is_null() ? bj::value(true) : a.output,
                         b.output.is_null() ? bj::value(true) : b.output,
                         versioning::Direction::output, policy, report);
  }
  std::string problem;
  if (!c.from_version.empty() && !c.to_version.empty()) {
    problem = versioning::bump_problem(c.from_version, c.to_version, report);
  }
  if (c.json) {
    auto out = report.to_json(c.from_version.empty() ? c.old_file : c.from_version,
                              c.to_version.empty() ? c.new_file : c.to_version, policy);
    if (!c.to_version.empty()) out["allowed"] = problem.empty();
    std::cout << util::json_text(out) << "\n";
  } else {
    for (const auto& ch : report.changes) {
      std::cout << (ch.breaking ? "BREAKING   " : "compatible ")
                << (ch.direction == versioning::Direction::input ? "input  " : "output ") << ch.kind
                << "  " << ch.message << "\n";
    }
    std::size_t n = 0;
    for (const auto& ch : report.changes)
      n += ch.breaking;
    std::cout << report.changes.size() << " change(s), " << n << " breaking (" << c.policy
              << "); the new version needs a " << report.required_bump() << " bump\n";
    if (!problem.empty()) std::cout << problem << "\n";
  }
  if (!c.to_version.empty()) return problem.empty() ? 0 : 1;
  return report.breaking() ? 1 : 0;
}

mapping::Mapping read_mapping(const std::string& path) {
  auto parsed = mapping::parse_mapping(read_json(path));
  if (auto* problems = std::get_if<std::vector<mapping::Problem>>(&parsed)) {
    std::string all;
    for (const auto& p : *problems)
      all += "\n  " + (p.path.empty() ? std::string("/") : p.path) + ": " + p.message;
    throw UsageError(path + ": not a valid mapping:" + all);
  }
  return std::get<mapping::Mapping>(parsed);
}

int run_apply(const VersioningCommands& c) {
  auto m = read_mapping(c.mapping_file);
  if (c.reverse) {
    auto inv = mapping::invert(m);
    if (auto* why = std::get_if<std::string>(&inv)) throw UsageError("cannot reverse: " + *why);
    m = std::get<mapping::Mapping>(inv);
  }
  const auto doc = read_json(c.document_file);
  try {
    const auto out = c.outputs ? mapping::apply_output(m, doc) : mapping::apply(m, doc);
    std::cout << util::json_text(out) << "\n";
    return 0;
  } catch (const mapping::ApplyError& e) {
    std::cerr << "schemagate mapping apply: " << (e.location().empty() ? "/" : e.location()) << ": "
              << e.what() << "\n";
    return 1;
  }
}

// The keys of a JWKS given as a file or a server's URL.
bj::object jwks_from(const std::string& source) {
  bj::value doc;
  if (source.starts_with("http://") || source.starts_with("https://")) {
    http::Client client;
    std::string url = source;
    if (url.find("/.well-known/") == std::string::npos) {
      url = (url.ends_with('/') ? url.substr(0, url.size() - 1) : url) + "/.well-known/jwks.json";
    }
    const auto r = client.request("GET", url, "", {}, std::chrono::seconds(10));
    if (r.status != 200) throw UsageError(url + " answered HTTP " + std::to_string(r.status));
    doc = json::parse(r.body);
  } else {
    doc = read_json(source);
  }
  auto keys = signing::keys_by_kid(doc);
  if (keys.empty()) throw UsageError(source + ": no Ed25519 keys found");
  return keys;
}

// Empty when the document's "signature" verifies with one of `keys`; else why not.
std::string check_signature(const bj::value& doc, const bj::object& keys) {
  const auto* sig = doc.is_object() ? doc.get_object().if_contains("signature") : nullptr;
  if (!sig || !sig->is_string()) return "the document is not signed";
  return signing::verify_document(doc, sig->get_string(), keys);
}

int run_verify(const VersioningCommands& c) {
  const auto doc = read_json(c.mapping_file);
  const auto m = read_mapping(c.mapping_file);
  int failures = 0;
  if (!c.jwks_source.empty()) {
    const auto problem = check_signature(doc, jwks_from(c.jwks_source));
    std::cout << (problem.empty() ? "PASS" : "FAIL") << "  signature"
              << (problem.empty() ? "" : ": " + problem) << "\n";
    failures += !problem.empty();
  }
  std::shared_ptr<jsonschema::Schema> from, to;
  if (!c.from_schema.empty()) {
    from =
        std::make_shared<jsonschema::Schema>(jsonschema::Schema::compile(read_json(c.from_schema)));
  }
  if (!c.to_schema.empty()) {
    to = std::make_shared<jsonschema::Schema>(jsonschema::Schema::compile(read_json(c.to_schema)));
  }
  const auto problems = mapping::verify(m, {from.get(), nullptr}, {to.get(), nullptr});
  for (const auto& p : problems)
    std::cout << "FAIL  " << p.path << ": " << p.message << "\n";
  if (problems.empty()) {
    std::cout << "PASS  " << m.examples.size() << " example(s) translate"
              << (to ? " into valid " + m.to + " documents" : "")
              << (m.bidirectional ? " and back" : "") << "\n";
  }
  failures += static_cast<int>(problems.size());
  return failures ? 1 : 0;
}

int run_sign(const VersioningCommands& c) {
  const auto jwk = read_json(c.key_file);
  const auto* d = jwk.is_object() ? jwk.get_object().if_contains("d") : nullptr;
  const auto seed = d && d->is_string() ? signing::base64url_decode(d->get_string()) : std::nullopt;
  if (!seed || seed->size() != 32) {
    throw UsageError(c.key_file +
                     ": a private Ed25519 JWK with \"d\" is needed "
                     "(schemagate mapping keygen makes one)");
  }
  std::array<std::uint8_t, 32> s{};
  std::copy(seed->begin(), seed->end(), s.begin());
  const auto key = signing::KeyPair::from_seed(s);
  read_mapping(c.mapping_file);  // refuse to sign what is not a mapping
  auto doc = read_json(c.mapping_file).as_object();
  doc.erase("signature");
  doc["signature"] = signing::sign_document(key, doc);
  std::cout << util::json_text(doc) << "\n";
  return 0;
}

int run_keygen() {
  const auto key = signing::KeyPair::generate();
  auto jwk = signing::public_jwk(key.public_key);
  jwk["d"] = signing::base64url_encode(
      std::string_view(reinterpret_cast<const char*>(key.seed.data()), key.seed.size()));
  std::cout << bj::serialize(jwk) << "\n";
  return 0;
}

// --- conformance ---------------------------------------------------------------------------

struct Checker {
  http::Client client;
  std::string base;
  std::vector<http::Header> auth;
  int failed = 0;

  http::ClientResponse call(std::string_view method, const std::string& path,
                            std::string body = {}) {
    auto headers = auth;
    if (!body.empty()) headers.push_back({"Content-Type", "application/json"});
    return client.request(method, base + path, std::move(body), headers, std::chrono::seconds(10));
  }
  void report(const char* level, bool ok, const std::string& what, const std::string& detail = {}) {
    std::cout << (ok ? "PASS  " : "FAIL  ") << level << "  " << what
              << (detail.empty() ? "" : "  (" + detail + ")") << "\n";
    failed += !ok;
  }
  void skip(const char* level, const std::string& what, const std::string& why) {
    std::cout << "SKIP  " << level << "  " << what << "  (" << why << ")\n";
  }
};

std::string code_of(const http::ClientResponse& r) {
  try {
    return std::string(json::parse(r.body).at("error").at("code").as_string());
  } catch (const std::exception&) {
    return "HTTP " + std::to_string(r.status);
  }
}

int run_conformance(const VersioningCommands& c) {
  Checker k;
  k.base = c.url.ends_with('/') ? c.url.substr(0, c.url.size() - 1) : c.url;
  if (!c.api_key.empty()) k.auth.push_back({"Authorization", "Bearer " + c.api_key});
  const int level = c.level == "V3" ? 3 : c.level == "V2" ? 2 : 1;

  // V1 §3.1: the Compatibility Profile in the Manifest.
  const auto manifest = k.call("GET", "/.well-known/schema-manifest.json");
  bj::object profiles;
  if (manifest.status == 200) {
    const auto body = json::parse(manifest.body);
    if (const auto* p =
            body.is_object() ? body.get_object().if_contains("schema_compatibility") : nullptr;
        p && p->is_object()) {
      profiles = p->get_object();
    }
  }
  k.report("V1", !profiles.empty(), "§3.1 the manifest publishes schema_compatibility",
           std::to_string(profiles.size()) + " contract(s)");
  bool complete = !profiles.empty();
  for (const auto& kv : profiles) {
    const auto* p = kv.value().if_object();
    for (const char* m : {"accepts", "produces", "default", "mappings"}) {
      if (!p || !p->contains(m)) complete = false;
    }
  }
  k.report("V1", complete, "§4.1 every profile has accepts, produces, default and mappings");
  const auto jwks_r = k.call("GET", "/.well-known/jwks.json");
  bj::object keys;
  try {
    if (jwks_r.status == 200) keys = signing::keys_by_kid(json::parse(jwks_r.body));
  } catch (const std::exception&) {
  }

  // V1 §3.2: the handshake on each contract picks the highest common version and refuses
  // versions outside the accepted set with a structured error.
  bool handshake_ok = !profiles.empty(), refusal_ok = !profiles.empty();
  std::string detail;
  for (const auto& kv : profiles) {
    const auto& accepts = kv.value().at("accepts").as_array();
    if (accepts.empty()) continue;
    bj::array supported = accepts;
    supported.push_back(bj::string("999.0.0"));
    const auto r = k.call("POST", "/contracts/" + std::string(kv.key()) + "/handshake",
                          bj::serialize(bj::object{{"supported_versions", supported}}));
    std::string highest(accepts.back().as_string());
    for (const auto& v : accepts) {
      const auto a = versioning::SemVer::parse(v.as_string());
      const auto h = versioning::SemVer::parse(highest);
      if (a && h && *a > *h) highest = v.as_string();
    }
    if (r.status != 200 || json::parse(r.body).at("schema_version") != bj::value(highest)) {
      handshake_ok = false;
      detail = std::string(kv.key()) + ": " + std::to_string(r.status);
    }
    const auto bad = k.call("POST", "/contracts/" + std::string(kv.key()) + "/handshake",
                            R"({"supported_versions":["999.0.0"]})");
    if (bad.status != 400 || code_of(bad) != "UnsupportedSchemaVersion") refusal_ok = false;
  }
  k.report("V1", handshake_ok, "§3.2 the handshake selects the highest commonly supported version",
           detail);
  k.report("V1", refusal_ok,
           "§3.1 a version outside the accepted set gets a structured error, not a translation");

  // V1 §3.5: deprecated versions carry a date at least 90 days after the announcement, and
  // responses in them say so.
  bool any_deprecated = false, dates_ok = true, warned = true;
  for (const auto& kv : profiles) {
    for (const auto& d : kv.value().at("deprecations").as_array()) {
      any_deprecated = true;
      const auto date = util::parse_rfc3339_ms(d.at("deprecation_date").as_string());
      const auto announced = util::parse_rfc3339_ms(d.at("announced_at").as_string());
      if (!date || !announced || *date - *announced < 90LL * 86'400'000) dates_ok = false;
      if (kv.value().at("kind") == "template" && !d.at("withdrawn").as_bool()) {
        const auto r = k.call(
            "GET", "/scenarios/" + std::string(kv.key()) +
                       "/template?schema_version=" + std::string(d.at("version").as_string()));
        if (r.status != 200 || !json::parse(r.body).as_object().contains("deprecation_warning")) {
          warned = false;
        }
      }
    }
  }
  if (any_deprecated) {
    k.report("V1", dates_ok, "§3.5 deprecation dates are at least ninety days after announcement");
    k.report("V1", warned, "§3.5 responses in a deprecated version carry deprecation_warning");
  } else {
    k.skip("V1", "§3.5 deprecation warnings", "no version is deprecated");
  }

  if (level >= 2) {
    // V2: signed mappings between every pair of accepted versions.
    int pairs = 0, good = 0;
    std::string first_bad;
    for (const auto& kv : profiles) {
      const auto& accepts = kv.value().at("accepts").as_array();
      for (const auto& a : accepts) {
        for (const auto& b : accepts) {
          if (a == b) continue;
          ++pairs;
          const auto r =
              k.call("GET", "/mappings/" + std::string(kv.key()) + "/" +
                                std::string(a.as_string()) + "/" + std::string(b.as_string()));
          const std::string problem = r.status != 200 ? "HTTP " + std::to_string(r.status)
                                                      : check_signature(json::parse(r.body), keys);
          if (problem.empty()) {
            ++good;
          } else if (first_bad.empty()) {
            first_bad = std::string(kv.key()) + " " + std::string(a.as_string()) + "->" +
                        std::string(b.as_string()) + ": " + problem;
          }
        }
      }
    }
    k.report("V2", good == pairs, "§6 signed mappings between every pair of accepted versions",
             std::to_string(good) + "/" + std::to_string(pairs) +
                 (first_bad.empty() ? "" : "; " + first_bad));
  }

  if (level >= 3) {
    // V3: inbound mappings published by counterparties are accepted (when their key is trusted)
    // and judged by their signature: an unknown signer is refused as untrusted.
    std::string contract;
    std::string a, b;
    for (const auto& kv : profiles) {
      const auto& versions = kv.value().at("versions").as_array();
      if (versions.size() >= 2) {
        contract = kv.key();
        a = versions[0].as_string();
        b = versions[1].as_string();
        break;
      }
    }
    if (contract.empty()) {
      k.skip("V3", "§6 counterparty mappings", "no contract has two versions");
    } else {
      auto doc =
          bj::object{{"contract", contract}, {"from", a}, {"to", b}, {"operations", bj::array{}}};
      doc["signature"] = signing::sign_document(signing::KeyPair::generate(), doc);
      const auto r =
          k.call("PUT", "/mappings/" + contract + "/" + a + "/" + b, util::json_text(doc));
      k.report("V3", r.status == 403 && code_of(r) == "UntrustedSignature",
               "§3.3/§8 a counterparty mapping is judged by its signature (unknown signer refused)",
               code_of(r));
    }
    // The negotiation latency floor this tool declares: p95 of the handshake under 50 ms.
    if (!profiles.empty()) {
      const auto& first = *profiles.begin();
      std::vector<double> ms;
      for (int i = 0; i < 20; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        k.call("POST", "/contracts/" + std::string(first.key()) + "/handshake",
               bj::serialize(bj::object{{"supported_versions", first.value().at("accepts")}}));
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
      }
      std::sort(ms.begin(), ms.end());
      const double p95 = ms[18];
      k.report("V3", p95 < 50, "§6 negotiation latency floor: handshake p95 under 50 ms",
               std::to_string(p95) + " ms");
    }
  }
  std::cout << (k.failed ? "NOT conformant" : "conformant") << " at level " << c.level << "\n";
  return k.failed ? 1 : 0;
}

}  // namespace

void add_versioning_commands(CLI::App& app, VersioningCommands& c) {
  c.compat = app.add_subcommand(
      "compat",
      "Classify the changes between two versions of a schema, template or operation; exit 1 "
      "when one breaks clients (or, with --from-version/--to-version, when the new number "
      "does not say so)");
  c.compat
      ->add_option("OLD", c.old_file, "The old version: a JSON Schema, a template or an agent card")
      ->required();
  c.compat->add_option("NEW", c.new_file, "The new version, of the same kind")->required();
  c.compat
      ->add_option("--direction", c.direction,
                   "For plain JSON Schemas: input (clients send it) or output (they receive it)")
      ->check(CLI::IsMember({"input", "output"}))
      ->capture_default_str();
  c.compat->add_option("--policy", c.policy, "strict or lenient (tolerant readers)")
      ->check(CLI::IsMember({"strict", "lenient"}))
      ->capture_default_str();
  c.compat->add_option("--operation", c.operation, "For agent cards: the operation to compare");
  c.compat->add_option("--from-version", c.from_version, "The old version number");
  c.compat->add_option("--to-version", c.to_version, "The new version number");
  c.compat->add_flag("--json", c.json, "Print the report as JSON");

  auto* mapping = app.add_subcommand("mapping", "Mappings between schema versions (seed 003 §3.3)");
  mapping->require_subcommand(1);
  c.mapping_apply = mapping->add_subcommand("apply", "Translate a document with a mapping");
  c.mapping_apply->add_option("--mapping", c.mapping_file, "The mapping document")->required();
  c.mapping_apply->add_option("DOCUMENT", c.document_file, "The document to translate")->required();
  c.mapping_apply->add_flag("--reverse", c.reverse, "Translate from `to` back to `from`");
  c.mapping_apply->add_flag("--outputs", c.outputs,
                            "The document is a response: use output_operations");
  c.mapping_verify = mapping->add_subcommand(
      "verify", "Check a mapping's signature and that its examples translate into valid documents");
  c.mapping_verify->add_option("--mapping", c.mapping_file, "The mapping document")->required();
  c.mapping_verify->add_option("--jwks", c.jwks_source,
                               "Trusted keys: a JWKS or JWK file, or a server URL (its "
                               "/.well-known/jwks.json)");
  c.mapping_verify->add_option("--from-schema", c.from_schema, "JSON Schema of the source version");
  c.mapping_verify->add_option("--to-schema", c.to_schema,
                               "JSON Schema of the destination version");
  c.mapping_sign = mapping->add_subcommand(
      "sign", "Sign a mapping (detached Ed25519 JWS over its RFC 8785 form) and print it");
  c.mapping_sign->add_option("--mapping", c.mapping_file, "The mapping document")->required();
  c.mapping_sign->add_option("--key", c.key_file, "A private Ed25519 JWK (with \"d\")")->required();
  c.mapping_keygen =
      mapping->add_subcommand("keygen", "Print a new private Ed25519 JWK for `mapping sign`");

  c.conformance = app.add_subcommand(
      "conformance",
      "Check a provider against the seed 003 conformance levels and print each requirement");
  c.conformance->add_option("--level", c.level, "V1, V2 or V3")
      ->check(CLI::IsMember({"V1", "V2", "V3"}))
      ->capture_default_str();
  c.conformance->add_option("URL", c.url, "The provider's base URL")->required();
  c.conformance->add_option("--api-key", c.api_key, "API key for the checks that need one")
      ->envname("SCHEMAGATE_API_KEY");
}

std::optional<int> run_versioning_commands(const VersioningCommands& c) {
  const CLI::App* which = nullptr;
  for (const CLI::App* cmd : {c.compat, c.mapping_apply, c.mapping_verify, c.mapping_sign,
                              c.mapping_keygen, c.conformance}) {
    if (cmd && cmd->parsed()) which = cmd;
  }
  if (!which) return std::nullopt;
  const std::string name = which == c.compat        ? "compat"
                           : which == c.conformance ? "conformance"
                                                    : "mapping";
  try {
    if (which == c.compat) return run_compat(c);
    if (which == c.mapping_apply) return run_apply(c);
    if (which == c.mapping_verify) return run_verify(c);
    if (which == c.mapping_sign) return run_sign(c);
    if (which == c.mapping_keygen) return run_keygen();
    return run_conformance(c);
  } catch (const UsageError& e) {
    std::cerr << "schemagate " << name << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "schemagate " << name << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace schemagate::cli
