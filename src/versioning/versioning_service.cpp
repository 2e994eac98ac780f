#include "versioning/versioning_service.hpp"

#include "json/jcs.hpp"
#include "jsonschema/schema.hpp"
#include "signing/key_store.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/contract_error.hpp"
#include "util/hash.hpp"
#include "versioning/semver.hpp"

#include <algorithm>

namespace schemagate::versioning {

namespace bj = boost::json;
using util::ContractError;

namespace {

constexpr std::string_view kContracts = "contracts";  // contract -> {kind, versions, current, ...}
constexpr std::string_view kVersions = "contract_versions";  // "<contract>/<version>"
constexpr std::string_view kMappings = "mappings";           // "<contract>/<from>/<to>"

std::string version_key(const std::string& contract, const std::string& version) {
  return contract + "/" + version;
}

bool by_precedence(const std::string& a, const std::string& b) {
  const auto x = SemVer::parse(a), y = SemVer::parse(b);
  if (x && y) return *x < *y;
  return a < b;
}

std::string format_ms(std::int64_t ms) {
  return util::format_rfc3339(util::Clock::time_point(std::chrono::milliseconds(ms)));
}

std::shared_ptr<const jsonschema::Schema> compile_or_null(const bj::value& schema) {
  if (schema.is_null()) return nullptr;
  return std::make_shared<jsonschema::Schema>(jsonschema::Schema::compile(schema));
}

std::string deprecation_text(const std::string& contract, const std::string& version,
                             std::int64_t date_ms, const std::string& successor) {
  return "version " + version + " of " + contract + " is deprecated and will be withdrawn on " +
         format_ms(date_ms) + (successor != version ? "; migrate to " + successor : "");
}

}  // namespace

struct VersioningService::State {
  struct Version {
    bj::value input, output;
    std::shared_ptr<const jsonschema::Schema> input_check, output_check;
  };
  struct Deprecation {
    std::int64_t date_ms = 0, announced_ms = 0;
  };
  struct StoredMapping {
    mapping::Mapping m;
    bj::object document;
  };
  std::string contract;
  bool exists = false;
  Kind kind = Kind::operation;
  std::int64_t revision = 0;
  bj::object index;
  std::map<std::string, Version> versions;
  std::string current;
  std::map<std::string, Deprecation> deprecations;
  std::vector<StoredMapping> mappings;  // trusted ones only

  bool withdrawn(const std::string& v, std::int64_t now) const {
    const auto it = deprecations.find(v);
    return it != deprecations.end() && it->second.date_ms <= now;
  }
  std::vector<std::string> native(std::int64_t now) const {
    std::vector<std::string> out;
    if (kind == Kind::operation) {
      if (!current.empty()) out.push_back(current);
      return out;
    }
    for (const auto& [v, rec] : versions) {
      if (!withdrawn(v, now)) out.push_back(v);
    }
    std::sort(out.begin(), out.end(), by_precedence);
    return out;
  }
};

VersioningService::VersioningService(store::Store& store, const util::Clock& clock,
                                     signing::KeyStore& keys, VersioningOptions options)
    : store_(store), clock_(clock), keys_(keys), options_(options) {}

VersioningService::~VersioningService() = default;

std::string VersioningService::operation_contract(std::string_view agent,
                                                  std::string_view operation) {
  return std::string(agent) + ":" + std::string(operation);
}

std::shared_ptr<const VersioningService::State> VersioningService::state(
    const std::string& contract) {
  {
    std::lock_guard lock(mu_);
    if (const auto it = cache_.find(contract); it != cache_.end()) return it->second;
  }
  auto s = load(contract);
  std::lock_guard lock(mu_);
  return cache_.try_emplace(contract, std::move(s)).first->second;
}

void VersioningService::forget(const std::string& contract) {
  std::lock_guard lock(mu_);
  cache_.erase(contract);
}

void VersioningService::on_stored_change(std::string_view collection, std::string_view) {
  if (collection == kContracts || collection == kVersions || collection == kMappings) forget_all();
}

void VersioningService::forget_all() {
  std::lock_guard lock(mu_);
  cache_.clear();
}

std::shared_ptr<const VersioningService::State> VersioningService::load(
    const std::string& contract) {
  auto s = std::make_shared<State>();
  s->contract = contract;
  const auto index = store_.get(kContracts, contract);
  if (!index) return s;
  s->exists = true;
  s->revision = index->revision;
  s->index = index->body.as_object();
  s->kind = s->index.at("kind") == "template" ? Kind::template_family : Kind::operation;
  s->current = s->index.at("current").as_string();
  if (const auto* d = s->index.if_contains("deprecations"); d && d->is_object()) {
    for (const auto& kv : d->get_object()) {
      s->deprecations[std::string(kv.key())] = {kv.value().at("date_ms").as_int64(),
                                                kv.value().at("announced_ms").as_int64()};
    }
  }
  store_.scan(kVersions, contract + "/", [&](const store::Document& d) {
    const auto& b = d.body.as_object();
    if (b.at("contract").as_string() != contract.c_str()) return;
    State::Version v;
    v.input = b.at("input_schema");
    v.output = b.at("output_schema");
    v.input_check = compile_or_null(v.input);
    v.output_check = compile_or_null(v.output);
    s->versions[std::string(b.at("version").as_string())] = std::move(v);
  });
  store_.scan(kMappings, contract + "/", [&](const store::Document& d) {
    const auto& body = d.body.as_object();
    auto parsed = mapping::parse_mapping(body);
    if (!std::holds_alternative<mapping::Mapping>(parsed)) return;
    auto m = std::move(std::get<mapping::Mapping>(parsed));
    if (m.contract != contract) return;
    // A key the operator stopped trusting takes its mappings out of service.
    const auto* sig = body.if_contains("signature");
    if (!sig || !sig->is_string() || !keys_.verify(body, sig->get_string()).valid) return;
    s->mappings.push_back({std::move(m), body});
  });
  return s;
}

bool VersioningService::knows(const std::string& contract, const std::string& version) {
  return state(contract)->versions.contains(version);
}

std::optional<std::string> VersioningService::current(const std::string& contract) {
  const auto s = state(contract);
  if (!s->exists) return std::nullopt;
  return s->current;
}

VersioningService::Planned VersioningService::plan_publish(const std::string& contract, Kind kind,
                                                           const std::string& version,
                                                           const bj::value& input_schema,
                                                           const bj::value& output_schema,
                                                           bool enforce_rules) {
  const auto sv = SemVer::parse(version);
  if (!sv) {
    throw ContractError(400, "InvalidInput",
                        "\"" + version + "\" is not a semantic version (MAJOR.MINOR.PATCH)");
  }
  const auto s = load(contract);  // fresh: the decision must not rest on a stale cache
  Planned plan;
  if (const auto it = s->versions.find(version); it != s->versions.end()) {
    if (json::canonicalize(it->second.input) != json::canonicalize(input_schema) ||
        json::canonicalize(it->second.output) != json::canonicalize(output_schema)) {
      throw ContractError(409, "Conflict",
                          "version " + version + " of " + contract +
                              " is already published with other schemas; publish a new version");
    }
    plan.previous = version;
    return plan;  // nothing to write
  }
  std::optional<SemVer> best;
  for (const auto& [v, rec] : s->versions) {
    const auto x = SemVer::parse(v);
    if (x && *x < *sv && (!best || *x > *best)) {
      best = x;
      plan.previous = v;
    }
  }
  if (enforce_rules && kind == Kind::operation && !s->current.empty() &&
      !by_precedence(s->current, version)) {
    throw ContractError(409, "Conflict",
                        "operation " + contract + " is at version " + s->current + "; " + version +
                            " is not newer");
  }
  if (!plan.previous.empty()) {
    const auto& prev = s->versions.at(plan.previous);
    classify(prev.input, input_schema, Direction::input, options_.policy, plan.report);
    if (!prev.output.is_null() || !output_schema.is_null()) {
      classify(prev.output.is_null() ? bj::value(true) : prev.output,
               output_schema.is_null() ? bj::value(true) : output_schema, Direction::output,
               options_.policy, plan.report);
    }
    if (const auto why = bump_problem(plan.previous, version, plan.report);
        enforce_rules && !why.empty()) {
      throw ContractError(409, "BreakingChange", contract + ": " + why,
                          plan.report.to_json(plan.previous, version, options_.policy));
    }
  }
  bj::object index = s->exists ? s->index : bj::object{{"contract", contract}};
  index["kind"] = kind == Kind::template_family ? "template" : "operation";
  bj::array versions = s->exists ? index.at("versions").as_array() : bj::array{};
  versions.push_back(bj::string(version));
  index["versions"] = versions;
  if (kind == Kind::operation) {
    index["current"] = version;
  } else {
    // The latest release; pre-releases only while there is nothing else.
    std::string latest;
    std::optional<SemVer> top;
    for (const auto& v : versions) {
      const auto x = SemVer::parse(v.as_string());
      if (!x) continue;
      const bool release = x->prerelease.empty();
      const bool top_release = top && top->prerelease.empty();
      if (!top || (release && !top_release) || (release == top_release && *x > *top)) {
        top = x;
        latest = v.as_string();
      }
    }
    index["current"] = latest;
  }
  plan.writes.push_back(
      store::Write::put(std::string(kVersions), version_key(contract, version),
                        bj::object{{"contract", contract},
                                   {"version", version},
                                   {"input_schema", input_schema},
                                   {"output_schema", output_schema},
                                   {"published_at", util::format_rfc3339(clock_.now())}},
                        0));
  plan.writes.push_back(store::Write::put(std::string(kContracts), contract, std::move(index),
                                          s->exists ? s->revision : 0));
  return plan;
}

std::string VersioningService::next_version(const std::string& contract,
                                            const bj::value& input_schema,
                                            const bj::value& output_schema) {
  const auto s = load(contract);
  if (!s->exists || s->current.empty()) return "1.0.0";
  const auto& cur = s->versions.at(s->current);
  if (json::canonicalize(cur.input) == json::canonicalize(input_schema) &&
      json::canonicalize(cur.output) == json::canonicalize(output_schema)) {
    return s->current;
  }
  Report report;
  classify(cur.input, input_schema, Direction::input, options_.policy, report);
  classify(cur.output.is_null() ? bj::value(true) : cur.output,
           output_schema.is_null() ? bj::value(true) : output_schema, Direction::output,
           options_.policy, report);
  auto v = *SemVer::parse(s->current);
  v.prerelease.clear();
  v.build.clear();
  if (report.breaking()) {
    throw ContractError(
        409, "BreakingChange",
        contract + ": the schemas changed incompatibly since " + s->current +
            "; declare the operation's new major version (\"version\": \"" +
            std::to_string(v.major + 1) + ".0.0\") and publish a mapping for clients of " +
            s->current,
        report.to_json(s->current, std::to_string(v.major + 1) + ".0.0", options_.policy));
  }
  if (report.required_bump() == "patch") {
    ++v.patch;
  } else {
    ++v.minor;
    v.patch = 0;
  }
  return v.to_string();
}

bj::object VersioningService::compare(const std::string& contract, const std::string& from,
                                      const std::string& to, std::optional<Policy> policy) {
  const auto s = state(contract);
  if (!s->exists) throw ContractError(404, "NotFound", "no contract \"" + contract + "\"");
  const auto it = s->versions.find(to);
  if (it == s->versions.end())
    throw ContractError(404, "NotFound", contract + " has no version " + to);
  return compare_candidate(contract, from, to, it->second.input, it->second.output, policy);
}

bj::object VersioningService::compare_candidate(const std::string& contract,
                                                const std::string& from, const std::string& to,
                                                const bj::value& input_schema,
                                                const bj::value& output_schema,
                                                std::optional<Policy> policy) {
  const auto s = state(contract);
  const auto it = s->versions.find(from);
  if (it == s->versions.end()) {
    throw ContractError(404, "NotFound", contract + " has no version " + from);
  }
  const Policy p = policy.value_or(options_.policy);
  Report report;
  classify(it->second.input, input_schema, Direction::input, p, report);
  if (!it->second.output.is_null() || !output_schema.is_null()) {
    classify(it->second.output.is_null() ? bj::value(true) : it->second.output,
             output_schema.is_null() ? bj::value(true) : output_schema, Direction::output, p,
             report);
  }
  auto out = report.to_json(from, to, p);
  out["contract"] = contract;
  if (SemVer::parse(to)) {
    const auto problem = bump_problem(from, to, report);
    out["allowed"] = problem.empty();
    if (!problem.empty()) out["problem"] = problem;
  }
  return out;
}

std::optional<mapping::Mapping> VersioningService::route(const std::string& contract,
                                                         const std::string& from,
                                                         const std::string& to) {
  const auto s = state(contract);
  std::vector<mapping::Edge> edges;
  for (std::size_t i = 0; i < s->mappings.size(); ++i) {
    const auto& m = s->mappings[i].m;
    edges.push_back({m.from, m.to, i, false});
    if (m.bidirectional) edges.push_back({m.to, m.from, i, true});
  }
  const auto path = mapping::shortest_path(edges, from, to);
  if (!path) return std::nullopt;
  mapping::Mapping out;
  out.contract = contract;
  out.from = from;
  out.to = from;
  for (const auto& e : *path) {
    mapping::Mapping hop = s->mappings[e.mapping].m;
    if (e.inverse) hop = std::get<mapping::Mapping>(mapping::invert(hop));
    out = mapping::compose(out, hop);
  }
  out.to = to;
  return out;
}

std::vector<std::string> VersioningService::accepts_of(const State& s) {
  const std::int64_t now = clock_.now_unix_ms();
  auto out = s.native(now);
  if (s.kind == Kind::operation && !s.current.empty()) {
    const auto& cur = s.versions.at(s.current);
    for (const auto& [v, rec] : s.versions) {
      if (v == s.current || s.withdrawn(v, now)) continue;
      if (!route(s.contract, v, s.current)) continue;
      if (!cur.output.is_null() && !route(s.contract, s.current, v)) continue;
      out.push_back(v);
    }
  }
  std::sort(out.begin(), out.end(), by_precedence);
  return out;
}

bj::object VersioningService::profile_of(const State& s) {
  const std::int64_t now = clock_.now_unix_ms();
  bj::array accepts, produces, mappings, deprecations;
  for (const auto& v : accepts_of(s))
    accepts.push_back(bj::string(v));
  for (const auto& v : s.native(now))
    produces.push_back(bj::string(v));
  for (const auto& m : s.mappings) {
    bj::object entry{{"from", m.m.from},
                     {"to", m.m.to},
                     {"direction", m.m.bidirectional ? "bidirectional" : "unidirectional"},
                     {"url", "/mappings/" + s.contract + "/" + m.m.from + "/" + m.m.to}};
    mappings.push_back(std::move(entry));
  }
  for (const auto& [v, d] : s.deprecations) {
    deprecations.push_back(bj::object{{"version", v},
                                      {"deprecation_date", format_ms(d.date_ms)},
                                      {"announced_at", format_ms(d.announced_ms)},
                                      {"withdrawn", d.date_ms <= now}});
  }
  std::string def = s.current;
  if (s.withdrawn(def, now) && !accepts.empty()) def = accepts.back().as_string();
  bj::array all;
  std::vector<std::string> versions;
  for (const auto& [v, rec] : s.versions)
    versions.push_back(v);
  std::sort(versions.begin(), versions.end(), by_precedence);
  for (const auto& v : versions)
    all.push_back(bj::string(v));
  return bj::object{{"kind", s.kind == Kind::template_family ? "template" : "operation"},
                    {"versions", std::move(all)},
                    {"accepts", std::move(accepts)},
                    {"produces", std::move(produces)},
                    {"default", def},
                    {"mappings", std::move(mappings)},
                    {"deprecations", std::move(deprecations)}};
}

bj::object VersioningService::profile(const std::string& contract) {
  const auto s = state(contract);
  if (!s->exists) {
    throw ContractError(
        404, "NotFound",
        "no versioned contract \"" + contract + "\" (a scenario name, or <agent>:<operation>)");
  }
  bj::object p = profile_of(*s);
  p["contract"] = contract;
  sign_in_place(p);
  return p;
}

VersioningService::Manifest VersioningService::manifest() {
  bj::object compat;
  store_.scan(kContracts, "",
              [&](const store::Document& d) { compat[d.key] = profile_of(*state(d.key)); });
  Manifest m;
  m.body = bj::object{{"schema_compatibility", std::move(compat)}};
  sign_in_place(m.body);
  m.etag = util::etag_of_bytes(json::canonicalize(m.body));
  return m;
}

bj::object VersioningService::deprecate(const std::string& contract, const std::string& version,
                                        const std::string& date) {
  const auto s = load(contract);
  if (!s->exists || !s->versions.contains(version)) {
    throw ContractError(404, "NotFound", contract + " has no version " + version);
  }
  std::optional<std::int64_t> ms = util::parse_rfc3339_ms(date);
  if (!ms && date.size() == 10) ms = util::parse_rfc3339_ms(date + "T00:00:00Z");
  if (!ms) {
    throw ContractError(400, "InvalidInput",
                        "deprecation_date must be an RFC 3339 date or timestamp (2027-03-01 or "
                        "2027-03-01T00:00:00Z), got \"" +
                            date + "\"");
  }
  const std::int64_t now = clock_.now_unix_ms();
  const auto notice =
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.min_deprecation_notice)
          .count();
  bj::object index = s->index;
  bj::object deps;
  if (const auto* d = index.if_contains("deprecations"); d && d->is_object())
    deps = d->get_object();
  std::int64_t announced = now;
  if (const auto* prior = deps.if_contains(version)) {
    const auto prior_ms = prior->at("date_ms").as_int64();
    if (*ms < prior_ms) {
      throw ContractError(409, "Conflict",
                          "the deprecation date of " + contract + " " + version + " is " +
                              format_ms(prior_ms) +
                              "; an announced date can never be moved earlier (seed 003 §3.5)");
    }
    announced = prior->at("announced_ms").as_int64();
    if (*ms == prior_ms) {
      return bj::object{{"contract", contract},
                        {"version", version},
                        {"deprecation_date", format_ms(prior_ms)},
                        {"announced_at", format_ms(announced)}};
    }
  } else if (*ms < now + notice) {
    throw ContractError(400, "InvalidInput",
                        "a deprecation date must be at least " +
                            std::to_string(options_.min_deprecation_notice.count() / 24) +
                            " days ahead (seed 003 §3.5): not before " + format_ms(now + notice));
  }
  deps[version] = bj::object{{"date_ms", *ms}, {"announced_ms", announced}};
  index["deprecations"] = std::move(deps);
  try {
    store_.put(std::string(kContracts), contract, index, s->revision);
  } catch (const store::ConflictError&) {
    throw ContractError(409, "Conflict", "a concurrent change of " + contract + " won; retry");
  }
  forget(contract);
  return bj::object{{"contract", contract},
                    {"version", version},
                    {"deprecation_date", format_ms(*ms)},
                    {"announced_at", format_ms(announced)}};
}

VersioningService::StoredMapping VersioningService::put_mapping(const std::string& contract,
                                                                const std::string& from,
                                                                const std::string& to,
                                                                const bj::value& document) {
  if (!document.is_object()) {
    throw ContractError(400, "InvalidInput", "a mapping document must be a JSON object");
  }
  bj::object doc = document.get_object();
  for (auto [name, value] :
       {std::pair{"contract", &contract}, std::pair{"from", &from}, std::pair{"to", &to}}) {
    const auto* v = doc.if_contains(name);
    if (!v) {
      doc[name] = *value;
    } else if (!v->is_string() || v->get_string() != value->c_str()) {
      throw ContractError(
          400, "InvalidInput",
          std::string(name) + " in the document does not match the path (" + *value + ")");
    }
  }
  const auto s = load(contract);
  for (const auto* v : {&from, &to}) {
    if (!s->exists || !s->versions.contains(*v)) {
      throw ContractError(404, "NotFound", contract + " has no version " + *v);
    }
  }
  if (from == to) throw ContractError(400, "InvalidInput", "a mapping joins two versions");
  auto parsed = mapping::parse_mapping(doc);
  if (auto* problems = std::get_if<std::vector<mapping::Problem>>(&parsed)) {
    bj::array list;
    for (const auto& p : *problems)
      list.push_back(bj::object{{"path", p.path}, {"message", p.message}});
    throw ContractError(422, "InvalidMapping",
                        "the mapping has " + std::to_string(problems->size()) + " problem(s): " +
                            problems->front().path + ": " + problems->front().message,
                        bj::object{{"problems", std::move(list)}});
  }
  const auto& m = std::get<mapping::Mapping>(parsed);
  const auto& src = s->versions.at(from);
  const auto& dst = s->versions.at(to);
  const auto problems = mapping::verify(m, {src.input_check.get(), src.output_check.get()},
                                        {dst.input_check.get(), dst.output_check.get()});
  if (!problems.empty()) {
    bj::array list;
    for (const auto& p : problems)
      list.push_back(bj::object{{"path", p.path}, {"message", p.message}});
    throw ContractError(422, "InvalidMapping",
                        "the mapping fails its own examples: " + problems.front().path + ": " +
                            problems.front().message,
                        bj::object{{"problems", std::move(list)}});
  }
  if (const auto* sig = doc.if_contains("signature")) {
    if (!sig->is_string())
      throw ContractError(400, "InvalidInput", "signature must be a JWS string");
    const auto v = keys_.verify(doc, sig->get_string());
    if (!v.valid) {
      const bool unknown = v.trust == signing::KeyStore::Trust::unknown && !v.kid.empty();
      throw ContractError(unknown ? 403 : 422, unknown ? "UntrustedSignature" : "InvalidSignature",
                          "the mapping's signature is refused: " + v.problem +
                              (unknown ? "; a mapping must be signed by the destination schema's "
                                         "publisher (seed 003 §3.3)"
                                       : ""),
                          bj::object{{"kid", v.kid}});
    }
  } else {
    doc["signature"] = keys_.sign(doc);
  }
  const std::string key = contract + "/" + from + "/" + to;
  StoredMapping out{doc, true};
  if (const auto prior = store_.get(kMappings, key)) {
    if (signing::signed_content(prior->body) == signing::signed_content(bj::value(doc))) {
      return {prior->body.as_object(), false};
    }
    out.created = false;
  }
  store_.put(std::string(kMappings), key, doc);
  forget(contract);
  return out;
}

bj::object VersioningService::get_mapping(const std::string& contract, const std::string& from,
                                          const std::string& to) {
  if (const auto stored = store_.get(kMappings, contract + "/" + from + "/" + to)) {
    return stored->body.as_object();
  }
  const auto m = route(contract, from, to);
  if (!m || from == to) {
    throw ContractError(404, "NotFound",
                        "no mapping from " + from + " to " + to + " of " + contract +
                            " (GET /contracts/" + contract + "/compatibility lists them)");
  }
  // Derived from trusted mappings (an inverse or a chain): this server vouches for it.
  bj::object doc = m->to_json();
  doc["derived"] = true;
  doc["signature"] = keys_.sign(doc);
  return doc;
}

VersioningService::Negotiation VersioningService::negotiate(
    const std::string& contract, const std::optional<std::string>& requested, bool permit_upgrade,
    bool permit_downgrade) {
  const auto s = state(contract);
  if (!s->exists)
    throw ContractError(404, "NotFound", "no versioned contract \"" + contract + "\"");
  const std::int64_t now = clock_.now_unix_ms();
  const auto accepts = accepts_of(*s);
  std::string def = s->current;
  if (s->withdrawn(def, now) && !accepts.empty()) def = accepts.back();
  Negotiation n;
  n.contract = contract;
  n.requested = requested ? *requested : def;
  const auto refuse = [&](const std::string& why) {
    bj::array list;
    for (const auto& v : accepts)
      list.push_back(bj::string(v));
    return ContractError(400, "UnsupportedSchemaVersion", why,
                         bj::object{{"contract", contract},
                                    {"requested", n.requested},
                                    {"accepts", std::move(list)},
                                    {"default", def}});
  };
  if (!s->versions.contains(n.requested)) {
    throw refuse(contract + " has no version " + n.requested + "; it accepts the versions listed");
  }
  const auto native = s->native(now);
  const bool is_native = std::find(native.begin(), native.end(), n.requested) != native.end();
  const bool accepted = std::find(accepts.begin(), accepts.end(), n.requested) != accepts.end();
  if (is_native) {
    n.served = n.response_version = n.requested;
  } else if (accepted) {
    n.served = s->current;
    n.response_version = n.requested;
    n.inbound = route(contract, n.requested, n.served);
    if (!s->versions.at(n.served).output.is_null()) {
      n.outbound = route(contract, n.served, n.requested);
    }
  } else {
    // Outside the accepted set: translated only where the client said it may be (§3.1, §3.2).
    const auto wanted = *SemVer::parse(n.requested);
    std::string chosen;
    for (auto it = native.rbegin(); it != native.rend() && chosen.empty(); ++it) {
      const auto v = *SemVer::parse(*it);
      if (((v > wanted && permit_upgrade) || (v < wanted && permit_downgrade)) &&
          route(contract, n.requested, *it)) {
        chosen = *it;
      }
    }
    if (chosen.empty()) {
      throw refuse(
          s->withdrawn(n.requested, now)
              ? "version " + n.requested + " of " + contract + " was withdrawn on " +
                    format_ms(s->deprecations.at(n.requested).date_ms) +
                    "; use an accepted version, or permit an upgrade (version_negotiation)"
              : "version " + n.requested + " of " + contract +
                    " is not accepted (no mapping reaches the version the provider speaks)");
    }
    n.served = n.response_version = chosen;
    n.inbound = route(contract, n.requested, chosen);
  }
  n.request_input = s->versions.at(n.requested).input_check;
  n.response_output = s->versions.at(n.response_version).output_check;
  for (const auto& v : {n.requested, n.response_version}) {
    if (!n.deprecation_warning.empty()) break;
    const auto it = s->deprecations.find(v);
    if (it == s->deprecations.end()) continue;
    n.deprecated_since_ms = it->second.announced_ms;
    n.sunset_ms = it->second.date_ms;
    n.deprecation_warning = deprecation_text(contract, v, it->second.date_ms, def);
  }
  return n;
}

bj::object VersioningService::handshake(const std::string& contract,
                                        const std::vector<std::string>& supported) {
  const auto s = state(contract);
  if (!s->exists)
    throw ContractError(404, "NotFound", "no versioned contract \"" + contract + "\"");
  const auto accepts = accepts_of(*s);
  std::string best;
  for (const auto& v : supported) {
    if (std::find(accepts.begin(), accepts.end(), v) == accepts.end()) continue;
    if (best.empty() || by_precedence(best, v)) best = v;
  }
  bj::array list;
  for (const auto& v : accepts)
    list.push_back(bj::string(v));
  if (best.empty()) {
    throw ContractError(
        400, "UnsupportedSchemaVersion", "none of the client's versions is accepted by " + contract,
        bj::object{{"contract", contract}, {"accepts", list}, {"default", s->current}});
  }
  bj::object out{{"contract", contract},
                 {"schema_version", best},
                 {"accepts", std::move(list)},
                 {"default", s->current}};
  sign_in_place(out);
  return out;
}

std::string VersioningService::sign_version(const std::string& contract,
                                            const std::string& version) {
  if (!options_.sign_responses) return {};
  const std::string key = contract + "\n" + version;
  {
    std::lock_guard lock(mu_);
    if (const auto it = version_signatures_.find(key); it != version_signatures_.end()) {
      return it->second;
    }
  }
  // Ed25519 is deterministic: the statement for a version never changes under one key.
  std::string jws = keys_.sign(bj::object{{"contract", contract}, {"schema_version", version}});
  std::lock_guard lock(mu_);
  if (version_signatures_.size() > 100'000) version_signatures_.clear();
  return version_signatures_.try_emplace(key, std::move(jws)).first->second;
}

VersioningService::Notice VersioningService::notice(const std::string& contract,
                                                    const std::string& version) {
  Notice n;
  const auto s = state(contract);
  if (const auto it = s->deprecations.find(version); it != s->deprecations.end()) {
    n.deprecated_since_ms = it->second.announced_ms;
    n.sunset_ms = it->second.date_ms;
    n.deprecation_warning = deprecation_text(contract, version, it->second.date_ms, s->current);
  }
  n.signature = sign_version(contract, version);
  return n;
}

void VersioningService::sign_in_place(bj::object& document) {
  if (!options_.sign_responses) return;
  document.erase("signature");
  document["signature"] = keys_.sign(document);
}

}  // namespace schemagate::versioning
