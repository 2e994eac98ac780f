#include "exchange/exchange_service.hpp"

#include "json/jcs.hpp"
#include "json/parse.hpp"
#include "jsonschema/schema.hpp"
#include "mapping/mapping.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/hash.hpp"
#include "versioning/semver.hpp"
#include "versioning/versioning_service.hpp"

#include <boost/json/serialize.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>
#include <utility>

namespace schemagate::exchange {

namespace bj = boost::json;
using Kind = ExchangeError::Kind;

namespace {

constexpr std::string_view kTemplates = "templates";       // "<scenario>/<version>"
constexpr std::string_view kSchemaIds = "schema_ids";      // schema_id -> {scenario, version}
constexpr std::string_view kScenarios = "scenarios";       // scenario -> {versions: [...]}
constexpr std::string_view kPatches = "patches";           // "<scenario>/<patch_id>"
constexpr std::string_view kEndpoints = "endpoints";       // scenario -> {endpoint}
constexpr std::string_view kWithdrawn = "withdrawn_keys";  // "<scenario>/<key>" -> {until_ms}

std::string template_key(std::string_view scenario, std::string_view version) {
  return std::string(scenario) + "/" + std::string(version);
}

// FNV-1a over the canonical form: equal content, equal tag, whatever the member order.
std::string etag_of(const bj::value& v) {
  return util::etag_of_bytes(json::canonicalize(v));
}

std::string new_patch_id() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[40];
  std::snprintf(buf, sizeof buf, "patch-%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

bool scenario_name_ok(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

}  // namespace

ErrorContract contract_of(ExchangeError::Kind kind) {
  switch (kind) {
    case Kind::invalid_input:
    case Kind::invalid_payload:
      return {400, "InvalidInput"};
    case Kind::not_found:
      return {404, "NotFound"};
    case Kind::conflict:
      return {409, "Conflict"};
    case Kind::invalid_template:
      return {422, "SchemaError"};
    case Kind::agent_unreachable:
      return {502, "AgentUnreachable"};
    case Kind::agent_timeout:
      return {504, "AgentTimeout"};
    case Kind::agent_error:
      return {502, "AgentError"};
    case Kind::invalid_agent_response:
      return {502, "InvalidAgentResponse"};
  }
  return {500, "Internal"};
}

ExchangeService::ExchangeService(store::Store& store, const util::Clock& clock,
                                 AgentTransport& transport, ExchangeLimits limits)
    : store_(store), clock_(clock), transport_(transport), limits_(limits) {}

ExchangeService::~ExchangeService() = default;

ExchangeService::Published ExchangeService::publish(std::string_view scenario,
                                                    std::string_view version,
                                                    const bj::value& body) {
  if (!scenario_name_ok(scenario)) {
    throw ExchangeError(Kind::invalid_input,
                        "scenario \"" + std::string(scenario) +
                            "\" must be 1-128 letters, digits, '_', '-' or '.'");
  }
  auto parsed = parse_template(body, scenario, version);
  if (auto* problems = std::get_if<std::vector<TemplateProblem>>(&parsed)) {
    bj::array list;
    for (const auto& p : *problems)
      list.push_back(bj::object{{"path", p.path}, {"message", p.message}});
    throw ExchangeError(Kind::invalid_template,
                        "the template has " + std::to_string(problems->size()) + " problem" +
                            (problems->size() == 1 ? "" : "s") + ": " + problems->front().message +
                            (problems->size() > 1 ? " (and more, see details)" : ""),
                        bj::object{{"problems", std::move(list)}});
  }
  const Template& t = std::get<Template>(parsed);
  const bj::object stored = t.to_json();

  const auto existing = store_.get(kTemplates, template_key(scenario, version));
  if (existing) {
    if (json::canonicalize(existing->body) == json::canonicalize(stored)) {
      if (!t.endpoint.empty()) bind_endpoint(scenario, t.endpoint, t.accepts_patch_keys);
      return {stored, false};
    }
    throw ExchangeError(Kind::conflict, "version " + std::string(version) + " of " +
                                            std::string(scenario) +
                                            " is already published with other content; publish "
                                            "a new version instead");
  }
  const auto owner = store_.get(kSchemaIds, t.schema_id);
  if (owner) {
    throw ExchangeError(Kind::conflict, "schema_id \"" + t.schema_id + "\" already belongs to " +
                                            std::string(owner->body.at("scenario").as_string()) +
                                            " " +
                                            std::string(owner->body.at("version").as_string()));
  }
  const auto index = store_.get(kScenarios, scenario);
  bj::array versions = index ? index->body.at("versions").as_array() : bj::array{};
  versions.push_back(bj::value(version));
  std::vector<store::Write> writes{
      store::Write::put(std::string(kTemplates), template_key(scenario, version), stored, 0),
      store::Write::put(std::string(kSchemaIds), t.schema_id,
                        bj::object{{"scenario", scenario}, {"version", version}}, 0),
      store::Write::put(std::string(kScenarios), std::string(scenario),
                        bj::object{{"scenario", scenario}, {"versions", versions}},
                        index ? index->revision : 0)};
  if (!t.endpoint.empty()) {
    writes.push_back(store::Write::put(
        std::string(kEndpoints), std::string(scenario),
        bj::object{{"endpoint", t.endpoint}, {"accepts_patch_keys", t.accepts_patch_keys}}));
  }
  if (versioning_) {
    backfill_scenario(std::string(scenario));
    // Seed 003 §3.4: throws 409 BreakingChange when the version number does not say so.
    auto plan = versioning_->plan_publish(
        std::string(scenario), versioning::VersioningService::Kind::template_family,
        std::string(version), contract_input(t),
        t.response_schema ? *t.response_schema : bj::value(nullptr));
    for (auto& w : plan.writes)
      writes.push_back(std::move(w));
  }
  try {
    store_.commit(writes);
  } catch (const store::ConflictError&) {
    forget_scenario(scenario);
    if (versioning_) versioning_->forget(std::string(scenario));
    throw ExchangeError(Kind::conflict, "a concurrent publish of " + std::string(scenario) +
                                            " won; fetch the scenario and retry");
  }
  forget_scenario(scenario);
  if (versioning_) versioning_->forget(std::string(scenario));
  if (on_published_) on_published_(std::string(scenario));
  return {stored, true};
}

bj::value ExchangeService::contract_input(const Template& t) {
  bj::object schema = t.json_schema();
  schema.erase("$id");
  schema.erase("title");
  return schema;
}

void ExchangeService::backfill_scenario(const std::string& scenario) {
  const auto index = store_.get(kScenarios, scenario);
  if (!index) return;
  std::vector<std::string> versions;
  for (const auto& v : index->body.at("versions").as_array())
    versions.push_back(std::string(v.as_string()));
  std::sort(versions.begin(), versions.end(), [](const std::string& a, const std::string& b) {
    const auto x = versioning::SemVer::parse(a), y = versioning::SemVer::parse(b);
    return x && y ? *x < *y : a < b;
  });
  for (const auto& v : versions) {
    if (versioning_->knows(scenario, v)) continue;
    const auto& t = load_template(scenario, v)->tmpl;
    auto plan = versioning_->plan_publish(
        scenario, versioning::VersioningService::Kind::template_family, v, contract_input(t),
        t.response_schema ? *t.response_schema : bj::value(nullptr), false);
    store_.commit(plan.writes);
    versioning_->forget(scenario);
  }
}

std::size_t ExchangeService::backfill_versions() {
  if (!versioning_) return 0;
  std::size_t n = 0;
  store_.scan(kScenarios, "", [&](const store::Document& d) {
    const auto before = versioning_->current(d.key);
    backfill_scenario(d.key);
    n += !before && versioning_->current(d.key);
  });
  return n;
}

void ExchangeService::bind_endpoint(std::string_view scenario, std::string_view endpoint,
                                    bool accepts_patch_keys) {
  latest_version(scenario);  // 404 for an unknown scenario
  if (endpoint.empty()) {
    store_.remove(std::string(kEndpoints), std::string(scenario));
    forget_scenario(scenario);
    return;
  }
  if (!endpoint.starts_with("http://") && !endpoint.starts_with("https://")) {
    throw ExchangeError(Kind::invalid_input, "endpoint must be an http:// or https:// URL");
  }
  store_.put(std::string(kEndpoints), std::string(scenario),
             bj::object{{"endpoint", endpoint}, {"accepts_patch_keys", accepts_patch_keys}});
  forget_scenario(scenario);
}

ExchangeService::Binding ExchangeService::binding_of(std::string_view scenario) {
  const auto state = scenario_state(scenario);
  return state ? state->binding : Binding{};
}

std::shared_ptr<const ExchangeService::ScenarioState> ExchangeService::scenario_state(
    std::string_view scenario) {
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(cache_mu_);
    if (const auto it = scenarios_.find(scenario); it != scenarios_.end()) return it->second;
    generation = forgotten_;
  }
  const auto index = store_.get(kScenarios, scenario);
  if (!index) return nullptr;
  auto state = std::make_shared<ScenarioState>();
  state->versions = index->body.at("versions").as_array();
  if (const auto doc = store_.get(kEndpoints, scenario)) {
    const auto& o = doc->body.as_object();
    const auto* a = o.if_contains("accepts_patch_keys");
    state->binding = {std::string(o.at("endpoint").as_string()),
                      a && a->is_bool() && a->get_bool()};
  }
  const std::string prefix = std::string(scenario) + "/";
  store_.scan(kPatches, prefix,
              [&](const store::Document& d) { state->patches.push_back(d.body.as_object()); });
  store_.scan(kWithdrawn, prefix, [&](const store::Document& d) {
    state->withdrawn[std::string(d.body.at("key_name").as_string())] =
        d.body.at("until_ms").as_int64();
  });
  std::lock_guard lock(cache_mu_);
  if (generation == forgotten_) scenarios_.insert_or_assign(std::string(scenario), state);
  return state;
}

void ExchangeService::forget_scenario(std::string_view scenario) {
  std::lock_guard lock(cache_mu_);
  if (const auto it = scenarios_.find(scenario); it != scenarios_.end()) scenarios_.erase(it);
  ++forgotten_;
}

void ExchangeService::on_stored_change(std::string_view collection, std::string_view) {
  if (collection != kScenarios && collection != kEndpoints && collection != kPatches &&
      collection != kWithdrawn) {
    return;
  }
  std::lock_guard lock(cache_mu_);
  scenarios_.clear();
  cache_.clear();  // compiled effective templates may carry a patch's old flags
  ++forgotten_;
}

bj::array ExchangeService::list_scenarios() {
  bj::array out;
  std::string after;
  for (;;) {
    const auto page = store_.list(kScenarios, {"", after, 200});
    for (const auto& d : page.items) {
      const auto latest = latest_version(d.key);
      const auto& t = load_template(d.key, latest)->tmpl;
      out.push_back(bj::object{{"scenario", d.key},
                               {"latest_version", latest},
                               {"schema_id", t.schema_id},
                               {"versions", d.body.at("versions")}});
    }
    if (!page.next_after_key) break;
    after = *page.next_after_key;
  }
  return out;
}

std::vector<std::string> ExchangeService::key_descriptions(std::string_view scenario) {
  std::vector<std::string> out;
  try {
    const auto located = load_template(scenario, latest_version(scenario));
    for (const auto& key : located->tmpl.keys) {
      if (key.name == kOtherKey) continue;
      std::string text = key.name;
      if (key.description.is_string()) {
        text += ": " + std::string(key.description.get_string());
      } else if (key.description.is_object()) {
        for (const auto& [lang, d] : key.description.get_object()) {
          if (d.is_string()) text += ": " + std::string(d.get_string());
        }
      }
      out.push_back(std::move(text));
    }
  } catch (const ExchangeError&) {
    // Not published (yet): the card is indexed without its template's words.
  }
  return out;
}

std::string ExchangeService::latest_version(std::string_view scenario) {
  const auto state = scenario_state(scenario);
  if (!state) {
    throw ExchangeError(Kind::not_found, "no scenario \"" + std::string(scenario) +
                                             "\" is published (GET /scenarios lists them)");
  }
  std::optional<versioning::SemVer> best;
  std::string best_text;
  for (const auto& v : state->versions) {
    const auto sv = versioning::SemVer::parse(v.as_string());
    // Pre-releases are served only when asked for by version.
    if (sv && sv->prerelease.empty() && (!best || *sv > *best)) {
      best = sv;
      best_text = v.as_string();
    }
  }
  if (!best) best_text = state->versions.back().as_string();
  return best_text;
}

std::shared_ptr<const ExchangeService::Located> ExchangeService::load_template(
    std::string_view scenario, std::string_view version) {
  const std::string key = template_key(scenario, version);
  {
    std::lock_guard lock(cache_mu_);
    if (const auto it = templates_.find(key); it != templates_.end()) return it->second;
  }
  const auto doc = store_.get(kTemplates, key);
  if (!doc) {
    throw ExchangeError(Kind::not_found, "scenario \"" + std::string(scenario) +
                                             "\" has no version " + std::string(version));
  }
  auto parsed = parse_template(doc->body, scenario, version);
  if (auto* problems = std::get_if<std::vector<TemplateProblem>>(&parsed)) {
    throw std::runtime_error("stored template " + doc->key +
                             " no longer parses: " + problems->front().message);
  }
  auto located = std::make_shared<Located>();
  located->tmpl = std::move(std::get<Template>(parsed));
  located->scenario = scenario;
  located->version = version;
  if (located->tmpl.response_schema) {
    located->response_check = std::make_shared<jsonschema::Schema>(
        jsonschema::Schema::compile(*located->tmpl.response_schema));
  }
  std::lock_guard lock(cache_mu_);
  return templates_.try_emplace(key, std::move(located)).first->second;
}

std::shared_ptr<const ExchangeService::Located> ExchangeService::find_schema_id(
    std::string_view schema_id) {
  {
    std::unique_lock lock(cache_mu_);
    if (const auto it = schema_owners_.find(schema_id); it != schema_owners_.end()) {
      const auto [scenario, version] = it->second;
      lock.unlock();
      return load_template(scenario, version);
    }
  }
  const auto owner = store_.get(kSchemaIds, schema_id);
  if (!owner) {
    throw ExchangeError(Kind::not_found,
                        "unknown schema_id \"" + std::string(schema_id) +
                            "\"; get_schema_template returns the current one for a scenario");
  }
  std::string scenario(owner->body.at("scenario").as_string());
  std::string version(owner->body.at("version").as_string());
  {
    std::lock_guard lock(cache_mu_);
    schema_owners_.try_emplace(std::string(schema_id), scenario, version);
  }
  return load_template(scenario, version);
}

ExchangeService::Negotiated ExchangeService::negotiate(std::string_view scenario,
                                                       std::string_view preferred_language,
                                                       std::optional<std::string> version,
                                                       const std::vector<std::string>& supported,
                                                       bool for_use) {
  std::string v;
  std::string warning;
  if (versioning_ && !for_use && version) {
    v = *version;  // every published version stays readable, withdrawn or not (§3.4)
    warning = versioning_->notice(std::string(scenario), v).deprecation_warning;
  } else if (versioning_) {
    latest_version(scenario);  // 404 for an unknown scenario
    const std::string contract(scenario);
    if (!version && !supported.empty()) {
      version =
          std::string(versioning_->handshake(contract, supported).at("schema_version").as_string());
    }
    const auto n = versioning_->negotiate(contract, version, false, false);
    v = n.served;
    warning = n.deprecation_warning;
  } else {
    v = version ? *version : latest_version(scenario);
  }
  const auto located = load_template(scenario, v);
  std::string language;
  Negotiated n;
  n.body = located->tmpl.negotiated(preferred_language, language);
  n.body["schema_version"] = v;
  if (!warning.empty()) n.body["deprecation_warning"] = warning;
  // Seed 000 §7: negotiation is integrity-protected; the SDK checks this against the JWKS.
  if (versioning_) versioning_->sign_in_place(n.body);
  n.etag = etag_of(n.body);
  return n;
}

bj::object ExchangeService::json_schema(std::string_view scenario, std::string_view version) {
  return load_template(scenario, version.empty() ? latest_version(scenario) : std::string(version))
      ->tmpl.json_schema();
}

std::string ExchangeService::sanitize_other(std::string_view text) const {
  // Control characters go (line breaks and tabs become spaces), surrounding blanks are trimmed,
  // and what is left is cut to max_other_chars characters.
  std::string clean;
  clean.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
    len = std::min(len, text.size() - i);
    const bool c0 = c < 0x20 || c == 0x7F;
    // C1 controls U+0080..U+009F are encoded C2 80..C2 9F.
    const bool c1 = len == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0;
    if (c0 || c1) {
      if ((c == '\n' || c == '\t' || c == '\r') && !clean.empty() && clean.back() != ' ') {
        clean += ' ';
      }
    } else {
      clean.append(text, i, len);
    }
    i += len;
  }
  const auto first = clean.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  std::string out;
  std::size_t chars = 0;
  for (std::size_t i = first; i < clean.size() && chars < limits_.max_other_chars; ++i) {
    if ((static_cast<unsigned char>(clean[i]) & 0xC0) != 0x80) ++chars;
    out += clean[i];
    // Keep a character's continuation bytes with it.
    while (i + 1 < clean.size() && (static_cast<unsigned char>(clean[i + 1]) & 0xC0) == 0x80) {
      out += clean[++i];
    }
  }
  while (!out.empty() && out.back() == ' ')
    out.pop_back();
  return out;
}

std::vector<bj::object> ExchangeService::active_patches(std::string_view scenario,
                                                        std::string_view schema_id,
                                                        std::string_view client_id) {
  std::vector<bj::object> out;
  const auto state = scenario_state(scenario);
  if (!state) return out;
  const std::int64_t now = clock_.now_unix_ms();
  for (const auto& p : state->patches) {
    if (!schema_id.empty() && std::string_view(p.at("parent_schema_id").as_string()) != schema_id) {
      continue;
    }
    if (p.at("expires_at_ms").as_int64() <= now) continue;
    if (const auto* target = p.if_contains("client_id");
        target && !target->is_null() && std::string_view(target->as_string()) != client_id) {
      continue;
    }
    // A cohort's patch: the clients whose id starts with its prefix (§6.2.1 cohort pools).
    if (const auto* prefix = p.if_contains("cohort_prefix");
        prefix && prefix->is_string() && !client_id.starts_with(prefix->get_string())) {
      continue;
    }
    out.push_back(p);
  }
  std::sort(out.begin(), out.end(), [](const bj::object& a, const bj::object& b) {
    return a.at("timestamp_ms").as_int64() < b.at("timestamp_ms").as_int64();
  });
  return out;
}

Template ExchangeService::effective(const Template& base, const std::vector<bj::object>& patches) {
  Template t = base;
  for (const auto& p : patches) {
    for (const auto& k : p.at("new_keys").as_array()) {
      auto parsed = parse_key_definition(k);
      if (auto* parsed_key = std::get_if<KeyDefinition>(&parsed)) {
        KeyDefinition key = std::move(*parsed_key);
        key.required = false;  // a patch never makes old payloads invalid
        key.experimental = true;
        if (!t.key(key.name)) t.keys.insert(t.keys.end() - 1, std::move(key));
      }
    }
    for (const auto& m : p.at("modified_keys").as_array()) {
      const auto& name = m.at("key_name").as_string();
      for (auto& key : t.keys) {
        if (key.name != name.c_str()) continue;
        if (const auto* d = m.as_object().if_contains("semantic_description")) key.description = *d;
        if (const auto* d = m.as_object().if_contains("deprecated"); d && d->is_bool()) {
          key.deprecated = d->get_bool();
        }
      }
    }
  }
  return t;
}

std::shared_ptr<const jsonschema::Schema> ExchangeService::compiled(const Template& t,
                                                                    const std::string& cache_key) {
  std::lock_guard lock(cache_mu_);
  auto& slot = cache_[cache_key];
  if (!slot) {
    // A publisher who writes "format" means it: formats are assertions in templates.
    jsonschema::CompileOptions opts;
    opts.assert_format = true;
    slot = std::make_shared<jsonschema::Schema>(jsonschema::Schema::compile(t.json_schema(), opts));
  }
  return slot;
}

struct ExchangeService::Accepted {
  std::shared_ptr<const Located> located;
  std::optional<versioning::VersioningService::Negotiation> nego;
  std::vector<bj::object> patches;
  bj::object completed;  // what the agent receives
  std::string served_schema_id;
  Binding binding;
  std::string other;  // the client's text, recorded by submit()
  bj::array applied, folded, warnings;
};

ExchangeService::Accepted ExchangeService::accept(std::string_view schema_id_in,
                                                  const bj::value& payload,
                                                  std::string_view client_id,
                                                  std::string_view expected_scenario,
                                                  const VersionRequest& version) {
  Accepted a;
  auto& located = a.located;
  auto& nego = a.nego;
  if (schema_id_in.empty()) {
    if (expected_scenario.empty() || (!version.schema_version && !versioning_)) {
      throw ExchangeError(Kind::invalid_input, "schema_id is required");
    }
    std::string v;
    if (versioning_) {
      latest_version(expected_scenario);  // 404 for an unknown scenario
      nego = versioning_->negotiate(std::string(expected_scenario), version.schema_version,
                                    version.permit_upgrade, version.permit_downgrade);
      v = nego->requested;
    } else {
      v = *version.schema_version;
    }
    located = load_template(expected_scenario, v);
  } else {
    located = find_schema_id(schema_id_in);
    if (version.schema_version && *version.schema_version != located->version) {
      throw ExchangeError(Kind::invalid_input, "schema_id \"" + std::string(schema_id_in) +
                                                   "\" is version " + located->version + ", not " +
                                                   *version.schema_version);
    }
  }
  const std::string schema_id = located->tmpl.schema_id;
  if (!expected_scenario.empty() && located->scenario != expected_scenario) {
    throw ExchangeError(Kind::invalid_input, "schema_id \"" + schema_id +
                                                 "\" belongs to scenario " + located->scenario +
                                                 ", not " + std::string(expected_scenario));
  }
  if (versioning_ && !nego) {
    nego = versioning_->negotiate(located->scenario, located->version, version.permit_upgrade,
                                  version.permit_downgrade);
  }
  if (!payload.is_object()) {
    throw ExchangeError(
        Kind::invalid_payload, "payload must be a JSON object of key-value pairs",
        bj::object{{"violations", bj::array{bj::object{{"instanceLocation", ""},
                                                       {"keywordLocation", "/type"},
                                                       {"message", "expected object"}}}}});
  }
  a.patches = active_patches(located->scenario, schema_id, client_id);
  const auto& patches = a.patches;
  std::string cache_key = std::string(schema_id);
  for (const auto& p : patches)
    cache_key += "|" + std::string(p.at("patch_id").as_string());
  std::optional<Template> patched;
  if (!patches.empty()) patched = effective(located->tmpl, patches);
  const Template& t = patched ? *patched : located->tmpl;

  a.completed = payload.get_object();
  auto& completed = a.completed;
  auto& other = a.other;
  if (auto* o = completed.if_contains(kOtherKey); o && o->is_string()) {
    other = sanitize_other(o->get_string());
    if (other.empty())
      completed.erase(kOtherKey);
    else
      *o = other;
  }
  // Keys withdrawn from evolution are still accepted for a while (§6.2.3): their values go to
  // `other`, with a warning, instead of failing the payload.
  auto& warnings = a.warnings;
  const auto state = scenario_state(located->scenario);
  if (state && !state->withdrawn.empty()) {
    const auto& withdrawn = state->withdrawn;
    const std::int64_t now = clock_.now_unix_ms();
    std::string notes;
    for (const auto& [name, until] : withdrawn) {
      const auto it = completed.find(name);
      if (it == completed.end() || until <= now || t.key(name)) continue;
      const auto& v = it->value();
      notes += (notes.empty() ? "" : "; ") + name + ": " +
               (v.is_string() ? std::string(v.get_string()) : json::canonicalize(v));
      warnings.push_back(bj::string(
          "key \"" + name + "\" was withdrawn; it is accepted (as text in other) until " +
          util::format_rfc3339(util::Clock::time_point(std::chrono::milliseconds(until)))));
      spdlog::warn("exchange: {} sent withdrawn key {} to {}", client_id, name, located->scenario);
      completed.erase(it);
    }
    if (!notes.empty()) {
      auto* o = completed.if_contains(kOtherKey);
      if (o && o->is_string() && !o->get_string().empty()) {
        *o = std::string(o->get_string()) + "; " + notes;
      } else {
        completed[kOtherKey] = notes;
      }
    }
  }
  const auto result = compiled(t, cache_key)->evaluate(completed);
  {
    std::vector<std::string> type_errors;
    if (!result.valid) {
      for (const auto& e : result.errors) {
        if (e.instance_location.size() < 2) continue;  // about the payload as a whole
        const auto slash = e.instance_location.find('/', 1);
        type_errors.push_back(e.instance_location.substr(
            1, slash == std::string::npos ? std::string::npos : slash - 1));
      }
    }
    count_usage(located->scenario, t, completed, client_id, type_errors);
  }
  if (!result.valid) {
    throw ExchangeError(
        Kind::invalid_payload,
        "the payload does not match " + std::string(schema_id) + ": " +
            result.errors.front().instance_location + " " + result.errors.front().error +
            (result.errors.size() > 1 ? " (" + std::to_string(result.errors.size()) + " violations)"
                                      : ""),
        bj::object{{"violations", result.violations()}});
  }
  for (const auto& k : t.keys) {
    // An experimental key's default would put a key into every payload that its agent may not
    // know; only what a client actually sends for it is passed on.
    if (!k.required && !k.experimental && k.default_value && !completed.contains(k.name)) {
      completed[k.name] = *k.default_value;
      a.applied.push_back(bj::value(k.name));
    }
  }
  a.served_schema_id = schema_id;
  if (nego && nego->inbound) {
    completed = translate_payload(*nego, completed);
    a.served_schema_id = load_template(located->scenario, nego->served)->tmpl.schema_id;
  }
  if (state) a.binding = state->binding;
  if (!a.binding.endpoint.empty() && !a.binding.accepts_patch_keys) {
    fold_patch_keys(t, completed, a.folded);
  }
  return a;
}

namespace {

// The transport's failures as the exchange reports them; anything else is rethrown as it is.
ExchangeError unreached(const std::string& scenario, const std::string& endpoint,
                        std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const AgentTimeout& e) {
    return ExchangeError(Kind::agent_timeout, "the " + scenario + " agent at " + endpoint +
                                                  " did not answer in time: " + e.what());
  } catch (const AgentUnreachable& e) {
    return ExchangeError(Kind::agent_unreachable, "the " + scenario + " agent at " + endpoint +
                                                      " is unreachable: " + e.what());
  }
}

}  // namespace

bj::object ExchangeService::submit(std::string_view schema_id, const bj::value& payload,
                                   std::string_view client_id, std::string_view expected_scenario,
                                   const VersionRequest& version) {
  const Accepted a = accept(schema_id, payload, client_id, expected_scenario, version);
  if (!a.other.empty()) {
    store_.append_event("other/" + a.located->scenario,
                        bj::object{{"schema_id", a.located->tmpl.schema_id},
                                   {"client_id", client_id},
                                   {"text", a.other},
                                   {"at", util::format_rfc3339(clock_.now())}});
  }
  const std::string& endpoint = a.binding.endpoint;
  if (endpoint.empty()) return answer_without_agent(a);
  AgentTransport::Reply reply;
  try {
    reply = transport_.post_json(endpoint, bj::serialize(a.completed), limits_.agent_timeout);
  } catch (...) {
    throw unreached(a.located->scenario, endpoint, std::current_exception());
  }
  return agent_answer(a, reply);
}

bool ExchangeService::submit_async(std::string_view schema_id, const bj::value& payload,
                                   std::string_view client_id, std::string_view expected_scenario,
                                   const VersionRequest& version, SubmitCallback done) {
  // Text in `other` is appended to the store, which may wait on the disk.
  if (const auto* o = payload.is_object() ? payload.get_object().if_contains(kOtherKey) : nullptr;
      o && o->is_string() && !sanitize_other(o->get_string()).empty()) {
    return false;
  }
  auto a = std::make_shared<const Accepted>(
      accept(schema_id, payload, client_id, expected_scenario, version));
  if (a->binding.endpoint.empty()) {
    done(answer_without_agent(*a), nullptr);
    return true;
  }
  transport_.post_json_async(
      a->binding.endpoint, bj::serialize(a->completed), limits_.agent_timeout, {},
      [this, a, done = std::move(done)](AgentTransport::Reply reply, std::exception_ptr error) {
        bj::object out;
        std::exception_ptr failure;
        try {
          if (error) throw unreached(a->located->scenario, a->binding.endpoint, error);
          out = agent_answer(*a, reply);
        } catch (...) {
          failure = std::current_exception();
        }
        done(std::move(out), failure);
      });
  return true;
}

bj::object ExchangeService::answer_without_agent(const Accepted& a) {
  return answer(
      a, bj::object{
             {"status", "accepted"}, {"schema_id", a.served_schema_id}, {"payload", a.completed}});
}

bj::object ExchangeService::agent_answer(const Accepted& a, const AgentTransport::Reply& reply) {
  const auto& located = a.located;
  const auto& nego = a.nego;
  if (reply.status < 200 || reply.status > 299) {
    throw ExchangeError(
        Kind::agent_error,
        "the " + located->scenario + " agent answered HTTP " + std::to_string(reply.status),
        bj::object{{"agent_status", reply.status}});
  }
  bj::value reply_json;
  try {
    reply_json = json::parse(reply.body);
  } catch (const json::ParseError& e) {
    throw ExchangeError(Kind::invalid_agent_response,
                        std::string("the agent's reply is not JSON: ") + e.what());
  }
  if (located->response_check) {
    const auto check = located->response_check->evaluate(reply_json);
    if (!check.valid) {
      throw ExchangeError(Kind::invalid_agent_response,
                          "the agent's reply does not match the response_schema: " +
                              check.errors.front().instance_location + " " +
                              check.errors.front().error,
                          bj::object{{"violations", check.violations()}});
    }
  }
  if (nego && nego->outbound) {
    try {
      reply_json = mapping::apply_output(*nego->outbound, reply_json);
    } catch (const mapping::ApplyError& e) {
      throw ExchangeError(Kind::invalid_agent_response,
                          "the agent's reply cannot be translated to version " +
                              nego->response_version + ": " + e.location() + " " + e.what());
    }
  }
  return answer(a, reply_json.is_object() ? std::move(reply_json.get_object())
                                          : bj::object{{"result", std::move(reply_json)}});
}

bj::object ExchangeService::answer(const Accepted& a, bj::object out) {
  const auto& located = a.located;
  const auto& nego = a.nego;
  const auto& patches = a.patches;
  if (nego) {
    out["schema_version"] = nego->response_version;
    if (nego->response_version != nego->requested) out["upgraded_from"] = nego->requested;
    if (!nego->deprecation_warning.empty()) out["deprecation_warning"] = nego->deprecation_warning;
    if (versioning_->signing()) {
      out["schema_version_signature"] =
          versioning_->sign_version(located->scenario, nego->response_version);
    }
  }
  if (!a.applied.empty()) out["applied_defaults"] = a.applied;
  if (!a.folded.empty()) out["folded_into_other"] = a.folded;
  if (!a.warnings.empty()) out["warnings"] = a.warnings;
  if (!patches.empty()) {
    bj::array new_keys, modified_keys, ids;
    for (const auto& p : patches) {
      for (const auto& k : p.at("new_keys").as_array())
        new_keys.push_back(k);
      for (const auto& k : p.at("modified_keys").as_array())
        modified_keys.push_back(k);
      ids.push_back(p.at("patch_id"));
    }
    bj::object suggestion{{"patch_ids", std::move(ids)}};
    if (!new_keys.empty()) suggestion["new_keys"] = std::move(new_keys);
    if (!modified_keys.empty()) suggestion["modified_keys"] = std::move(modified_keys);
    if (versioning_) versioning_->sign_in_place(suggestion);
    out["schema_update_suggestion"] = std::move(suggestion);
  }
  return out;
}

void ExchangeService::count_usage(const std::string& scenario, const Template& t,
                                  const bj::object& payload, std::string_view client_id,
                                  const std::vector<std::string>& type_errors) {
  std::lock_guard lock(usage_mu_);
  auto& u = usage_[scenario];
  ++u.payloads;
  const std::string client(client_id);
  // Counted on every payload: a set, so a scenario with many clients costs a lookup, not a scan.
  if (u.clients.size() < 10'000) u.clients.insert(client);
  for (const auto& k : t.keys) {
    if (!k.experimental) continue;
    auto& ku = u.keys[k.name];  // listed even when unused: usage 0 is a measurement too
    const auto it = payload.find(k.name);
    if (it == payload.end()) continue;
    ++ku.present;
    if (std::find(type_errors.begin(), type_errors.end(), k.name) != type_errors.end()) {
      ++ku.type_errors;
    }
    if (ku.clients.size() < 10'000) ku.clients.insert(client);
    if (ku.samples.size() < 20) ku.samples.push_back(it->value());
  }
}

std::map<std::string, ExchangeService::ScenarioUsage> ExchangeService::drain_usage() {
  std::lock_guard lock(usage_mu_);
  return std::exchange(usage_, {});
}

void ExchangeService::restore_usage(const std::string& scenario, ScenarioUsage usage) {
  std::lock_guard lock(usage_mu_);
  auto& u = usage_[scenario];
  u.payloads += usage.payloads;
  u.clients.merge(usage.clients);
  for (auto& [name, k] : usage.keys) {
    auto& into = u.keys[name];
    into.present += k.present;
    into.type_errors += k.type_errors;
    into.clients.merge(k.clients);
    for (auto& v : k.samples) {
      if (into.samples.size() < 20) into.samples.push_back(std::move(v));
    }
  }
}

bj::object ExchangeService::template_json(std::string_view scenario, std::string_view version) {
  return load_template(scenario, version.empty() ? latest_version(scenario) : std::string(version))
      ->tmpl.to_json();
}

void ExchangeService::expire_patch(std::string_view scenario, std::string_view patch_id) {
  const std::string key = std::string(scenario) + "/" + std::string(patch_id);
  auto doc = store_.get(kPatches, key);
  if (!doc) return;
  auto body = doc->body.as_object();
  const std::int64_t now = clock_.now_unix_ms();
  body["expires_at_ms"] = now;
  body["expiration"] = util::format_rfc3339(clock_.now());
  if (versioning_) versioning_->sign_in_place(body);
  store_.put(std::string(kPatches), key, body, doc->revision);
  forget_scenario(scenario);
}

void ExchangeService::deprecate_patch_key(std::string_view scenario, std::string_view patch_id,
                                          std::string_view key_name) {
  const std::string key = std::string(scenario) + "/" + std::string(patch_id);
  auto doc = store_.get(kPatches, key);
  if (!doc) return;
  auto body = doc->body.as_object();
  for (auto& k : body["new_keys"].as_array()) {
    if (k.at("key_name").as_string() == key_name) k.as_object()["deprecated"] = true;
  }
  if (versioning_) versioning_->sign_in_place(body);
  store_.put(std::string(kPatches), key, body, doc->revision);
  forget_scenario(scenario);
  std::lock_guard lock(cache_mu_);
  cache_.clear();  // compiled effective templates may carry the old flag
}

void ExchangeService::accept_withdrawn_key(std::string_view scenario, std::string_view key_name,
                                           std::int64_t until_ms) {
  store_.put(std::string(kWithdrawn), std::string(scenario) + "/" + std::string(key_name),
             bj::object{{"key_name", key_name}, {"until_ms", until_ms}});
  forget_scenario(scenario);
}

void ExchangeService::fold_patch_keys(const Template& t, bj::object& payload, bj::array& folded) {
  std::string notes;
  for (const auto& k : t.keys) {
    if (!k.experimental) continue;
    const auto it = payload.find(k.name);
    if (it == payload.end()) continue;
    const auto& v = it->value();
    notes += (notes.empty() ? "" : "; ") + k.name + ": " +
             (v.is_string() ? std::string(v.get_string()) : json::canonicalize(v));
    folded.push_back(bj::string(k.name));
    payload.erase(it);
  }
  if (notes.empty()) return;
  auto* other = payload.if_contains(kOtherKey);
  if (other && other->is_string() && !other->get_string().empty()) {
    *other = std::string(other->get_string()) + "; " + notes;
  } else {
    payload[kOtherKey] = notes;
  }
}

bj::object ExchangeService::compatibility(std::string_view scenario, const bj::value& body) {
  if (!versioning_) throw ExchangeError(Kind::not_found, "versioning is not enabled");
  const auto* o = body.if_object();
  const auto text = [&](std::string_view name) -> std::string {
    const auto* v = o ? o->if_contains(name) : nullptr;
    if (!v || v->is_null()) return {};
    if (!v->is_string()) {
      throw ExchangeError(Kind::invalid_input, std::string(name) + " must be a string");
    }
    return std::string(v->get_string());
  };
  if (!o) {
    throw ExchangeError(Kind::invalid_input,
                        "the body must be {\"from\", \"to\"} or {\"from\", \"template\"}");
  }
  const std::string contract(scenario);
  latest_version(scenario);  // 404 for an unknown scenario
  std::optional<versioning::Policy> policy;
  if (const auto p = text("policy"); !p.empty()) {
    policy = versioning::parse_policy(p);
    if (!policy) throw ExchangeError(Kind::invalid_input, "policy must be strict or lenient");
  }
  std::string from = text("from");
  if (from.empty()) from = latest_version(scenario);
  if (const auto* candidate = o->if_contains("template")) {
    auto parsed = parse_template(*candidate, scenario, "0.0.0-candidate");
    if (auto* problems = std::get_if<std::vector<TemplateProblem>>(&parsed)) {
      bj::array list;
      for (const auto& p : *problems)
        list.push_back(bj::object{{"path", "/template" + p.path}, {"message", p.message}});
      throw ExchangeError(Kind::invalid_template,
                          "the candidate template has problems: " + problems->front().message,
                          bj::object{{"problems", std::move(list)}});
    }
    const auto& t = std::get<Template>(parsed);
    const std::string to = text("to");
    return versioning_->compare_candidate(
        contract, from, to.empty() ? "candidate" : to, contract_input(t),
        t.response_schema ? *t.response_schema : bj::value(nullptr), policy);
  }
  const std::string to = text("to");
  if (to.empty()) {
    throw ExchangeError(Kind::invalid_input,
                        "name the version to compare with (\"to\") or send "
                        "a candidate \"template\"");
  }
  return versioning_->compare(contract, from, to, policy);
}

bj::object ExchangeService::translate_payload(
    const versioning::VersioningService::Negotiation& nego, const bj::object& payload) {
  bj::value translated;
  try {
    translated = mapping::apply(*nego.inbound, payload);
  } catch (const mapping::ApplyError& e) {
    throw ExchangeError(
        Kind::invalid_payload,
        "the payload cannot be translated from " + nego.requested + " to " + nego.served + ": " +
            e.what(),
        bj::object{{"violations", bj::array{bj::object{{"instanceLocation", e.location()},
                                                       {"keywordLocation", ""},
                                                       {"message", e.what()}}}}});
  }
  const auto served = load_template(nego.contract, nego.served);
  const auto check = compiled(served->tmpl, served->tmpl.schema_id)->evaluate(translated);
  if (!check.valid) {
    // The mapping was verified on its examples, not on this payload: say so plainly.
    throw ExchangeError(Kind::invalid_payload,
                        "translated from " + nego.requested + " to " + nego.served +
                            ", the payload does not match " + nego.served + ": " +
                            check.errors.front().instance_location + " " +
                            check.errors.front().error,
                        bj::object{{"violations", check.violations()}});
  }
  return translated.as_object();
}

bj::object ExchangeService::post_patch(std::string_view scenario, const bj::value& body) {
  if (!body.is_object()) throw ExchangeError(Kind::invalid_input, "a patch must be a JSON object");
  const auto& o = body.get_object();
  const auto* parent = o.if_contains("parent_schema_id");
  if (!parent || !parent->is_string()) {
    throw ExchangeError(Kind::invalid_input, "parent_schema_id is required");
  }
  const auto base = find_schema_id(parent->get_string());
  if (base->scenario != scenario) {
    throw ExchangeError(Kind::invalid_input, "parent_schema_id \"" +
                                                 std::string(parent->get_string()) +
                                                 "\" belongs to scenario " + base->scenario);
  }
  bj::array problems;
  bj::array new_keys, modified_keys;
  if (const auto* nk = o.if_contains("new_keys")) {
    if (!nk->is_array()) {
      problems.push_back(
          bj::object{{"path", "/new_keys"}, {"message", "new_keys must be an array"}});
    } else {
      for (std::size_t i = 0; i < nk->get_array().size(); ++i) {
        const auto& k = nk->get_array()[i];
        auto parsed = parse_key_definition(k);
        const std::string path = "/new_keys/" + std::to_string(i);
        if (auto* errs = std::get_if<std::vector<TemplateProblem>>(&parsed)) {
          for (const auto& e : *errs) {
            problems.push_back(bj::object{{"path", path + e.path}, {"message", e.message}});
          }
          continue;
        }
        const auto& key = std::get<KeyDefinition>(parsed);
        if (base->tmpl.key(key.name)) {
          problems.push_back(bj::object{
              {"path", path + "/key_name"},
              {"message", "key \"" + key.name + "\" already exists in " + base->tmpl.schema_id +
                              "; refine it through modified_keys instead (§6.2.2)"}});
          continue;
        }
        bj::object stored = key.to_json();
        stored["required"] = false;
        stored["experimental"] = true;
        new_keys.push_back(std::move(stored));
      }
    }
  }
  if (const auto* mk = o.if_contains("modified_keys")) {
    if (!mk->is_array()) {
      problems.push_back(
          bj::object{{"path", "/modified_keys"}, {"message", "modified_keys must be an array"}});
    } else {
      for (std::size_t i = 0; i < mk->get_array().size(); ++i) {
        const std::string path = "/modified_keys/" + std::to_string(i);
        const auto& m = mk->get_array()[i];
        const auto* name = m.is_object() ? m.get_object().if_contains("key_name") : nullptr;
        if (!name || !name->is_string() || !base->tmpl.key(name->get_string())) {
          problems.push_back(bj::object{{"path", path + "/key_name"},
                                        {"message", "modified_keys must name an existing key"}});
          continue;
        }
        for (const auto& kv : m.get_object()) {
          if (kv.key() != "key_name" && kv.key() != "semantic_description" &&
              kv.key() != "deprecated") {
            problems.push_back(
                bj::object{{"path", path + "/" + std::string(kv.key())},
                           {"message",
                            "a patch may refine semantic_description or mark deprecated; base "
                            "keys keep their type and constraints (§6.2.2)"}});
          }
        }
        modified_keys.push_back(m);
      }
    }
  }
  if (new_keys.empty() && modified_keys.empty() && problems.empty()) {
    problems.push_back(
        bj::object{{"path", ""}, {"message", "a patch needs new_keys or modified_keys"}});
  }
  if (!problems.empty()) {
    // The message is built before `problems` moves into the details.
    const std::string message = "the patch has " + std::to_string(problems.size()) + " problem" +
                                (problems.size() == 1 ? "" : "s") + ": " +
                                std::string(problems.front().at("message").as_string());
    throw ExchangeError(Kind::invalid_template, message,
                        bj::object{{"problems", std::move(problems)}});
  }
  const std::int64_t now = clock_.now_unix_ms();
  std::int64_t lifetime_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(limits_.default_patch_lifetime).count();
  if (const auto* ttl = o.if_contains("ttl_seconds"); ttl && ttl->is_number()) {
    lifetime_ms = static_cast<std::int64_t>(ttl->to_number<double>() * 1000);
  }
  bj::object patch{
      {"patch_id", new_patch_id()},
      {"parent_schema_id", parent->get_string()},
      {"scenario", scenario},
      {"timestamp", util::format_rfc3339(clock_.now())},
      {"timestamp_ms", now},
      {"expiration",
       util::format_rfc3339(util::Clock::time_point(std::chrono::milliseconds(now + lifetime_ms)))},
      {"expires_at_ms", now + lifetime_ms},
      {"new_keys", std::move(new_keys)},
      {"modified_keys", std::move(modified_keys)}};
  if (const auto* c = o.if_contains("client_id"); c && c->is_string()) patch["client_id"] = *c;
  if (const auto* c = o.if_contains("cohort_prefix");
      c && c->is_string() && !c->get_string().empty()) {
    patch["cohort_prefix"] = *c;
  }
  // §6.2.3: keys a patch adds are provisional, and the patch says so as a whole too.
  patch["experimental"] = !patch.at("new_keys").as_array().empty();
  if (versioning_) versioning_->sign_in_place(patch);
  store_.put(std::string(kPatches),
             std::string(scenario) + "/" + std::string(patch.at("patch_id").as_string()), patch, 0);
  forget_scenario(scenario);
  return patch;
}

bj::object ExchangeService::updates(std::string_view scenario, std::string_view client_id,
                                    std::optional<std::int64_t> since_ms) {
  latest_version(scenario);  // 404 for an unknown scenario
  bj::array list;
  for (auto& p : active_patches(scenario, "", client_id)) {
    if (since_ms && p.at("timestamp_ms").as_int64() <= *since_ms) continue;
    list.push_back(std::move(p));
  }
  bj::object out{{"scenario", scenario}, {"patches", std::move(list)}};
  if (versioning_) versioning_->sign_in_place(out);
  return out;
}

}  // namespace schemagate::exchange
