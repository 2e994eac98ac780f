#include "evolution/evolution_engine.hpp"

#include "evolution/clustering.hpp"

#include "embed/embedder.hpp"
#include "exchange/exchange_service.hpp"
#include "llm/chat_model.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/contract_error.hpp"
#include "versioning/semver.hpp"

#include <spdlog/spdlog.h>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace schemagate::evolution {

namespace bj = boost::json;

namespace {

// Arrivals kept per cluster for its heat curve.
constexpr std::size_t kHeatPointsKept = 64;

constexpr std::string_view kClusters = "evolution_clusters";  // "<scenario>/<cluster id>"
constexpr std::string_view kCursors = "evolution_cursors";    // scenario -> {after}
constexpr std::string_view kKeys = "evolution_keys";          // "<scenario>/<key>[@client]"
constexpr std::string_view kUsage = "evolution_usage";        // "<scenario>/<day number>"
constexpr std::int64_t kDayMs = 86'400'000;

bool zero(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return x == 0.0f; });
}

std::string at_text(std::int64_t ms) {
  return util::format_rfc3339(util::Clock::time_point(std::chrono::milliseconds(ms)));
}

}  // namespace

EvolutionOptions with_settings(EvolutionOptions o, const bj::value& settings) {
  if (!settings.is_object()) throw std::invalid_argument("the settings must be a JSON object");
  const auto hours = [](double h) {
    return std::chrono::hours(static_cast<std::int64_t>(std::llround(h)));
  };
  for (const auto& kv : settings.get_object()) {
    const std::string name(kv.key());
    if (name == "cohort_separator") {
      if (!kv.value().is_string()) throw std::invalid_argument("cohort_separator must be a string");
      o.cohort_separator = kv.value().get_string();
      continue;
    }
    if (!kv.value().is_number() || kv.value().to_number<double>() < 0) {
      throw std::invalid_argument(name + " must be a number, 0 or more");
    }
    const double v = kv.value().to_number<double>();
    const bool share = name.starts_with("promote_") || name.starts_with("deprecate_") ||
                       name == "personal_share" || name == "similarity_threshold";
    if (share && v > 1) throw std::invalid_argument(name + " is a share: 0 to 1");
    if (name == "similarity_threshold")
      o.similarity_threshold = v;
    else if (name == "heat_increment")
      o.heat_increment = v;
    else if (name == "heat_threshold")
      o.heat_threshold = v;
    else if (name == "heat_half_life_hours")
      o.heat_half_life = hours(std::max(v, 1.0));
    else if (name == "min_distinct_clients")
      o.min_distinct_clients = static_cast<std::size_t>(v);
    else if (name == "min_occurrences")
      o.min_occurrences = static_cast<std::size_t>(v);
    else if (name == "occurrence_window_days")
      o.occurrence_window = hours(v * 24);
    else if (name == "max_experimental_keys")
      o.max_experimental_keys = static_cast<std::size_t>(v);
    else if (name == "personal_share")
      o.personal_share = v;
    else if (name == "trial_days")
      o.trial = hours(v * 24);
    else if (name == "observation_window_days")
      o.observation_window = hours(v * 24);
    else if (name == "deprecation_grace_days")
      o.deprecation_grace = hours(v * 24);
    else if (name == "withdrawn_acceptance_days")
      o.withdrawn_acceptance = hours(v * 24);
    else if (name == "promote_usage")
      o.promote_usage = v;
    else if (name == "promote_alignment")
      o.promote_alignment = v;
    else if (name == "promote_type")
      o.promote_type = v;
    else if (name == "deprecate_usage")
      o.deprecate_usage = v;
    else if (name == "deprecate_alignment")
      o.deprecate_alignment = v;
    else if (name == "deprecate_type")
      o.deprecate_type = v;
    else
      throw std::invalid_argument("unknown evolution setting \"" + name + "\"");
  }
  return o;
}

double default_threshold(const std::string& model) {
  return model.starts_with("glove") ? 0.70 : 0.85;
}

struct EvolutionEngine::Cluster {
  std::string id;
  std::vector<float> centroid;
  std::int64_t size = 0;
  double heat = 0;
  std::int64_t heat_ms = 0;
  // (at, heat just after) for the latest arrivals: with the half-life they give the heat curve
  // exactly, which is what an operator reads to see a need warming up or cooling down.
  std::vector<std::pair<std::int64_t, double>> heat_points;
  std::vector<std::pair<std::int64_t, std::string>> occurrences;  // (at, client) in the window
  std::vector<std::string> samples;
  // collecting | queued | awaiting_approval | patched | refined | rejected | unresolved
  std::string state = "collecting";
  std::string key_name, patch_id, client_id;
  std::string cohort;    // with cohort pools: the cohort's prefix ("acme:"), else empty
  bj::object candidate;  // the key waiting (queued or for approval)
  std::int64_t first_ms = 0, last_ms = 0;
  bool dirty = false;

  bj::object to_json() const {
    bj::array c, occ, s, points;
    for (float x : centroid)
      c.push_back(static_cast<double>(x));
    for (const auto& [at, h] : heat_points)
      points.push_back(bj::array{at, h});
    for (const auto& [at, client] : occurrences)
      occ.push_back(bj::array{at, bj::string(client)});
    for (const auto& x : samples)
      s.push_back(bj::string(x));
    return bj::object{{"id", id},
                      {"centroid", std::move(c)},
                      {"size", size},
                      {"heat", heat},
                      {"heat_ms", heat_ms},
                      {"heat_points", std::move(points)},
                      {"occurrences", std::move(occ)},
                      {"samples", std::move(s)},
                      {"state", state},
                      {"key_name", key_name},
                      {"patch_id", patch_id},
                      {"client_id", client_id},
                      {"candidate", candidate},
                      {"first_ms", first_ms},
                      {"last_ms", last_ms},
                      {"cohort", cohort}};
  }

  static Cluster from_json(const bj::object& o) {
    Cluster c;
    c.id = o.at("id").as_string();
    for (const auto& x : o.at("centroid").as_array())
      c.centroid.push_back(static_cast<float>(x.to_number<double>()));
    c.size = o.at("size").as_int64();
    c.heat = o.at("heat").to_number<double>();
    c.heat_ms = o.at("heat_ms").as_int64();
    if (const auto* p = o.if_contains("heat_points"); p && p->is_array()) {  // since 2026-11
      for (const auto& x : p->get_array())
        c.heat_points.emplace_back(x.at(0).as_int64(), x.at(1).to_number<double>());
    }
    for (const auto& x : o.at("occurrences").as_array()) {
      c.occurrences.emplace_back(x.at(0).as_int64(), std::string(x.at(1).as_string()));
    }
    for (const auto& x : o.at("samples").as_array())
      c.samples.push_back(std::string(x.as_string()));
    c.state = o.at("state").as_string();
    c.key_name = o.at("key_name").as_string();
    c.patch_id = o.at("patch_id").as_string();
    c.client_id = o.at("client_id").as_string();
    c.candidate = o.at("candidate").as_object();
    if (const auto* h = o.if_contains("cohort"); h && h->is_string()) c.cohort = h->get_string();
    c.first_ms = o.at("first_ms").as_int64();
    c.last_ms = o.at("last_ms").as_int64();
    return c;
  }

  std::size_t distinct_clients() const {
    std::set<std::string> s;
    for (const auto& [at, client] : occurrences)
      s.insert(client);
    return s.size();
  }
};

EvolutionEngine::EvolutionEngine(store::Store& store, const util::Clock& clock,
                                 exchange::ExchangeService& exchange, embed::Embedder& embedder,
                                 EvolutionOptions options)
    : store_(store),
      clock_(clock),
      exchange_(exchange),
      embedder_(embedder),
      options_(options),
      threshold_(options.similarity_threshold.value_or(default_threshold(embedder.model()))) {}

EvolutionEngine::~EvolutionEngine() {
  stop();
}

std::vector<EvolutionEngine::Cluster>& EvolutionEngine::pool(const std::string& scenario) {
  auto it = pools_.find(scenario);
  if (it != pools_.end()) return it->second;
  std::vector<Cluster> clusters;
  store_.scan(kClusters, scenario + "/", [&](const store::Document& d) {
    clusters.push_back(Cluster::from_json(d.body.as_object()));
  });
  return pools_.emplace(scenario, std::move(clusters)).first->second;
}

double EvolutionEngine::heat_at(const Cluster& c, std::int64_t at_ms) const {
  const double half_ms = std::chrono::duration<double, std::milli>(options_.heat_half_life).count();
  const double elapsed = static_cast<double>(std::max<std::int64_t>(0, at_ms - c.heat_ms));
  return c.heat * std::pow(0.5, elapsed / half_ms);
}

void EvolutionEngine::save(const std::string& scenario, const Cluster& c) {
  store_.put(std::string(kClusters), scenario + "/" + c.id, c.to_json());
}

std::size_t EvolutionEngine::experimental_keys(const std::string& scenario) {
  std::size_t n = 0;
  store_.scan(kKeys, scenario + "/", [&](const store::Document& d) {
    const auto& o = d.body.as_object();
    if (o.at("state") == "experimental" && o.at("client_id") == "") ++n;
  });
  return n;
}

EvolutionEngine::Timeline EvolutionEngine::step() {
  std::lock_guard lock(mu_);
  Timeline out;
  record_usage();  // every replica's own counts
  // The pools are one replica's work: the leader's. Where replicas share the database it reads
  // them afresh each step, so that what another replica decided (an approval) is seen.
  if (!store_.lead("evolution")) return out;
  if (store_.info().backend != "sqlite") pools_.clear();
  for (const auto& s : exchange_.list_scenarios()) {
    const std::string scenario(s.at("scenario").as_string());
    try {
      // Queued triggers go first: a slot may have opened since.
      for (auto& c : pool(scenario)) {
        if (c.state == "queued" && experimental_keys(scenario) < options_.max_experimental_keys) {
          publish(scenario, c, c.candidate, clock_.now_unix_ms(), out);
          save(scenario, c);
        }
      }
      ingest(scenario, out);
      evaluate(scenario, out);
    } catch (const std::exception& e) {
      spdlog::error("evolution: {}: {}", scenario, e.what());
    }
  }
  return out;
}

void EvolutionEngine::ingest(const std::string& scenario, Timeline& out) {
  auto& clusters = pool(scenario);
  const auto cursor = store_.get(kCursors, scenario);
  std::int64_t after = cursor ? cursor->body.at("after").as_int64() : 0;
  const std::int64_t window_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.occurrence_window).count();
  for (;;) {
    const auto events = store_.read_events("other/" + scenario, after, 256);
    if (events.empty()) break;
    std::vector<std::string> texts, content;
    for (const auto& e : events) {
      texts.push_back(std::string(e.body.at("text").as_string()));
      content.push_back(content_text(texts.back()));
    }
    const auto vectors = embedder_.embed(content);
    for (std::size_t i = 0; i < events.size(); ++i) {
      const auto& body = events[i].body.as_object();
      after = events[i].sequence;
      const auto& v = vectors[i];
      if (zero(v)) continue;  // nothing the embedder knows: no meaning to cluster on
      const auto at_opt = util::parse_rfc3339_ms(body.at("at").as_string());
      const std::int64_t at = at_opt ? *at_opt : clock_.now_unix_ms();
      const auto* client_v = body.if_contains("client_id");
      const std::string client =
          client_v && client_v->is_string() ? std::string(client_v->get_string()) : "";
      std::string cohort;
      if (const auto& sep = options_.cohort_separator; !sep.empty()) {
        if (const auto at_sep = client.find(sep); at_sep != std::string::npos) {
          cohort = client.substr(0, at_sep + sep.size());
        }
      }
      // A cohort's fragments meet only the clusters of its own pool.
      std::vector<const std::vector<float>*> centroids;
      std::vector<std::size_t> index;
      for (std::size_t k = 0; k < clusters.size(); ++k) {
        if (clusters[k].cohort != cohort) continue;
        centroids.push_back(&clusters[k].centroid);
        index.push_back(k);
      }
      const auto match = nearest(centroids, v, threshold_);
      Cluster* best = match ? &clusters[index[*match]] : nullptr;
      if (!best) {
        Cluster c;
        c.cohort = cohort;
        char id[16];
        std::snprintf(id, sizeof id, "c%04zu", clusters.size() + 1);
        c.id = id;
        c.centroid = v;
        c.first_ms = at;
        clusters.push_back(std::move(c));
        best = &clusters.back();
        out.push_back(bj::object{{"at", at_text(at)},
                                 {"scenario", scenario},
                                 {"event", "cluster_started"},
                                 {"cluster", best->id},
                                 {"fragment", texts[i]}});
      } else {
        absorb(best->centroid, best->size, v);
      }
      Cluster& c = *best;
      ++c.size;
      c.heat = heat_at(c, at) + options_.heat_increment;
      c.heat_ms = at;
      c.last_ms = at;
      c.heat_points.emplace_back(at, c.heat);
      if (c.heat_points.size() > kHeatPointsKept) c.heat_points.erase(c.heat_points.begin());
      c.occurrences.emplace_back(at, client);
      std::erase_if(c.occurrences, [&](const auto& o) { return o.first < at - window_ms; });
      if (c.samples.size() < options_.samples_kept &&
          std::find(c.samples.begin(), c.samples.end(), texts[i]) == c.samples.end()) {
        c.samples.push_back(texts[i]);
      }
      c.dirty = true;
      const bool enough = c.distinct_clients() >= options_.min_distinct_clients ||
                          c.occurrences.size() >= options_.min_occurrences;
      if (c.state == "collecting" && c.heat >= options_.heat_threshold && enough) {
        fire(scenario, c, at, out);
      }
    }
    std::vector<store::Write> writes;
    for (auto& c : clusters) {
      if (!c.dirty) continue;
      writes.push_back(
          store::Write::put(std::string(kClusters), scenario + "/" + c.id, c.to_json()));
      c.dirty = false;
    }
    writes.push_back(
        store::Write::put(std::string(kCursors), scenario, bj::object{{"after", after}}));
    store_.commit(writes);
  }
}

void EvolutionEngine::fire(const std::string& scenario, Cluster& c, std::int64_t at_ms,
                           Timeline& out) {
  std::map<std::string, std::size_t> per_client;
  for (const auto& [at, client] : c.occurrences)
    ++per_client[client];
  const auto top =
      std::max_element(per_client.begin(), per_client.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  if (top != per_client.end() && !top->first.empty() &&
      per_client.size() < options_.min_distinct_clients &&
      static_cast<double>(top->second) >=
          options_.personal_share * static_cast<double>(c.occurrences.size())) {
    c.client_id = top->first;  // §6.2.2 personalized adaptation: that client's patch only
  }
  out.push_back(
      bj::object{{"at", at_text(at_ms)},
                 {"scenario", scenario},
                 {"event", "triggered"},
                 {"cluster", c.id},
                 {"heat", std::round(c.heat * 10) / 10},
                 {"occurrences", c.occurrences.size()},
                 {"distinct_clients", c.distinct_clients()},
                 {"client_id", c.client_id.empty() ? bj::value(nullptr) : bj::value(c.client_id)}});
  std::optional<CandidateKey> key;
  if (options_.chat_model) {
    try {
      key = induce_key(*options_.chat_model, c.samples);
    } catch (const std::exception& e) {
      spdlog::warn("evolution: the chat model could not induce a key ({}); using the rules",
                   e.what());
    }
  }
  if (!key) key = induce_key(c.samples);
  if (!key) {
    c.state = "unresolved";
    out.push_back(bj::object{{"at", at_text(at_ms)},
                             {"scenario", scenario},
                             {"event", "unresolved"},
                             {"cluster", c.id},
                             {"reason", "the fragments share no word to build a key on"}});
    return;
  }
  c.key_name = key->key_name;
  if (key->security_relevant) {
    c.state = "awaiting_approval";
    c.candidate = key->to_key();
    out.push_back(
        bj::object{{"at", at_text(at_ms)},
                   {"scenario", scenario},
                   {"event", "awaiting_approval"},
                   {"cluster", c.id},
                   {"key", c.candidate},
                   {"reason", "the key touches payment, identity or access (seed 000 §7)"}});
    return;
  }
  publish(scenario, c, key->to_key(), at_ms, out);
}

void EvolutionEngine::publish(const std::string& scenario, Cluster& c, const bj::object& key,
                              std::int64_t at_ms, Timeline& out) {
  const std::string name(key.at("key_name").as_string());
  const auto negotiated = exchange_.negotiate(scenario, "").body;
  const std::string parent(negotiated.at("schema_id").as_string());
  // Conflict detection (§6.2.2): the same name, or the same meaning, as a key that exists.
  const auto description = std::string(key.at("semantic_description").as_string());
  std::vector<std::pair<std::string, std::string>> existing;  // name, description
  for (const auto& k : negotiated.at("keys").as_array()) {
    if (k.at("key_name") == "other") continue;
    existing.emplace_back(std::string(k.at("key_name").as_string()),
                          std::string(k.at("semantic_description").as_string()));
  }
  std::set<std::string> patched;
  const auto active =
      exchange_.updates(scenario, c.client_id.empty() ? c.cohort : c.client_id, std::nullopt);
  for (const auto& p : active.at("patches").as_array()) {
    for (const auto& k : p.at("new_keys").as_array())
      patched.insert(std::string(k.at("key_name").as_string()));
  }
  std::string same;
  for (const auto& [n, d] : existing) {
    if (n == name) same = n;
  }
  if (same.empty() && !patched.contains(name)) {
    std::vector<std::string> texts{description};
    for (const auto& [n, d] : existing)
      texts.push_back(n + ": " + d);
    const auto vectors = embedder_.embed(texts);
    for (std::size_t i = 1; i < vectors.size(); ++i) {
      if (!zero(vectors[0]) && cosine(vectors[0], vectors[i]) >= threshold_) {
        same = existing[i - 1].first;
      }
    }
  }
  if (patched.contains(name)) {
    c.state = "refined";
    out.push_back(bj::object{{"at", at_text(at_ms)},
                             {"scenario", scenario},
                             {"event", "merged"},
                             {"cluster", c.id},
                             {"key_name", name},
                             {"reason", "an active patch already adds this key"}});
    return;
  }
  if (!same.empty()) {
    // Merge: the existing key's description gains the fragments' examples.
    std::string refined;
    for (const auto& [n, d] : existing) {
      if (n == same) refined = d;
    }
    const auto examples = description.find(" Examples:");
    refined +=
        examples == std::string::npos ? " Also: " + description : description.substr(examples);
    bj::object body{{"parent_schema_id", parent},
                    {"modified_keys",
                     bj::array{bj::object{{"key_name", same}, {"semantic_description", refined}}}},
                    {"ttl_seconds", 60 * 24 * 3600}};
    if (!c.client_id.empty()) body["client_id"] = c.client_id;
    if (c.client_id.empty() && !c.cohort.empty()) body["cohort_prefix"] = c.cohort;
    const auto patch = exchange_.post_patch(scenario, body);
    c.state = "refined";
    c.key_name = same;
    c.patch_id = patch.at("patch_id").as_string();
    out.push_back(bj::object{{"at", at_text(at_ms)},
                             {"scenario", scenario},
                             {"event", "refined"},
                             {"cluster", c.id},
                             {"key_name", same},
                             {"patch_id", c.patch_id}});
    return;
  }
  if (c.client_id.empty() && c.cohort.empty() &&
      experimental_keys(scenario) >= options_.max_experimental_keys) {
    if (c.state != "queued") {
      c.state = "queued";
      c.candidate = key;
      out.push_back(bj::object{
          {"at", at_text(at_ms)},
          {"scenario", scenario},
          {"event", "queued"},
          {"cluster", c.id},
          {"key_name", name},
          {"reason", "the scenario has " + std::to_string(options_.max_experimental_keys) +
                         " experimental keys (convergence guard)"}});
    }
    return;
  }
  bj::object body{
      {"parent_schema_id", parent}, {"new_keys", bj::array{key}}, {"ttl_seconds", 60 * 24 * 3600}};
  if (!c.client_id.empty()) body["client_id"] = c.client_id;
  if (c.client_id.empty() && !c.cohort.empty()) body["cohort_prefix"] = c.cohort;
  const auto patch = exchange_.post_patch(scenario, body);
  c.state = "patched";
  c.key_name = name;
  c.patch_id = patch.at("patch_id").as_string();
  c.candidate = {};
  const std::string owner = !c.client_id.empty() ? c.client_id : c.cohort;
  store_.put(std::string(kKeys), scenario + "/" + name + (owner.empty() ? "" : "@" + owner),
             bj::object{{"key_name", name},
                        {"patch_id", c.patch_id},
                        {"client_id", owner},
                        {"cluster", c.id},
                        {"state", "experimental"},
                        {"created_ms", at_ms},
                        {"key", key}});
  out.push_back(
      bj::object{{"at", at_text(at_ms)},
                 {"scenario", scenario},
                 {"event", "patched"},
                 {"cluster", c.id},
                 {"key_name", name},
                 {"patch_id", c.patch_id},
                 {"client_id", c.client_id.empty() ? bj::value(nullptr) : bj::value(c.client_id)},
                 {"cohort", c.cohort.empty() ? bj::value(nullptr) : bj::value(c.cohort)},
                 {"key", key}});
}

// The exchange's counts since the last step, added to the day's bucket in the store.
void EvolutionEngine::record_usage() {
  const std::int64_t day = clock_.now_unix_ms() / kDayMs;
  for (auto& [scenario, u] : exchange_.drain_usage()) {
    const std::string key = scenario + "/" + std::to_string(day);
    const auto doc = store_.get(kUsage, key);
    bj::object b =
        doc ? doc->body.as_object()
            : bj::object{
                  {"day", day}, {"payloads", 0}, {"clients", bj::array{}}, {"keys", bj::object{}}};
    b["payloads"] = b.at("payloads").as_int64() + u.payloads;
    const auto merge = [](bj::array& into, const std::set<std::string>& add) {
      for (const auto& c : add) {
        if (into.size() < 10'000 &&
            std::find(into.begin(), into.end(), bj::value(c)) == into.end()) {
          into.push_back(bj::string(c));
        }
      }
    };
    merge(b["clients"].as_array(), u.clients);
    auto& keys = b["keys"].as_object();
    for (const auto& [name, ku] : u.keys) {
      auto& k = keys[name];
      if (!k.is_object()) {
        k = bj::object{
            {"present", 0}, {"type_errors", 0}, {"clients", bj::array{}}, {"samples", bj::array{}}};
      }
      auto& ko = k.as_object();
      ko["present"] = ko.at("present").as_int64() + ku.present;
      ko["type_errors"] = ko.at("type_errors").as_int64() + ku.type_errors;
      merge(ko["clients"].as_array(), ku.clients);
      auto& samples = ko["samples"].as_array();
      for (const auto& v : ku.samples) {
        if (samples.size() < 20) samples.push_back(v);
      }
    }
    try {
      // Other replicas add their counts to the same document: never overwrite theirs.
      store_.put(std::string(kUsage), key, std::move(b), doc ? doc->revision : 0);
    } catch (const store::ConflictError&) {
      exchange_.restore_usage(scenario, std::move(u));  // added on the next step
    }
  }
}

// §6.2.3 metrics of one key over the observation window (from its creation at the earliest).
bj::object EvolutionEngine::metrics(const std::string& scenario, const bj::object& key,
                                    std::int64_t now_ms) {
  const std::int64_t window_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.observation_window).count();
  const std::int64_t from = std::max(key.at("created_ms").as_int64(), now_ms - window_ms);
  const std::string name(key.at("key_name").as_string());
  const std::string client(key.at("client_id").as_string());
  std::int64_t payloads = 0, present = 0, type_errors = 0;
  std::set<std::string> clients, adopters;
  bj::array samples;
  store_.scan(kUsage, scenario + "/", [&](const store::Document& d) {
    const auto& b = d.body.as_object();
    if (b.at("day").as_int64() < from / kDayMs) return;
    payloads += b.at("payloads").as_int64();
    for (const auto& c : b.at("clients").as_array())
      clients.insert(std::string(c.as_string()));
    if (const auto* k = b.at("keys").as_object().if_contains(name)) {
      present += k->at("present").as_int64();
      type_errors += k->at("type_errors").as_int64();
      for (const auto& c : k->at("clients").as_array())
        adopters.insert(std::string(c.as_string()));
      for (const auto& v : k->at("samples").as_array()) {
        if (samples.size() < 20) samples.push_back(v);
      }
    }
  });
  // A client-only key is measured on its client's payloads alone (approximated by the share
  // of that client's days; the exchange counts payloads per scenario).
  const double usage = payloads ? static_cast<double>(present) / static_cast<double>(payloads) : 0;
  const double type_ok =
      present ? static_cast<double>(present - type_errors) / static_cast<double>(present) : 0;
  const double adoption = client.empty()
                              ? (clients.empty() ? 0
                                                 : static_cast<double>(adopters.size()) /
                                                       static_cast<double>(clients.size()))
                              : (adopters.contains(client) ? 1.0 : 0.0);
  bj::object m{{"payloads", payloads},
               {"usage_frequency", usage},
               {"value_type_correctness", type_ok},
               {"client_adoption_rate", adoption},
               {"samples", std::move(samples)}};
  const auto total = key.contains("verdicts") ? key.at("verdicts").as_int64() : 0;
  if (total > 0) {
    m["semantic_alignment_accuracy"] =
        static_cast<double>(key.at("verdicts_correct").as_int64()) / static_cast<double>(total);
  } else {
    m["semantic_alignment_accuracy"] = nullptr;  // not judged: no verdict recorded yet
  }
  return m;
}

void EvolutionEngine::evaluate(const std::string& scenario, Timeline& out) {
  const std::int64_t now = clock_.now_unix_ms();
  const auto ms = [](std::chrono::hours h) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(h).count();
  };
  std::vector<store::Document> keys;
  store_.scan(kKeys, scenario + "/", [&](const store::Document& d) { keys.push_back(d); });
  for (const auto& d : keys) {
    bj::object k = d.body.as_object();
    const std::string state(k.at("state").as_string());
    const std::string name(k.at("key_name").as_string());
    const std::string patch(k.at("patch_id").as_string());
    bj::object event{{"at", at_text(now)}, {"scenario", scenario}, {"key_name", name}};
    if (state == "experimental" && now >= k.at("created_ms").as_int64() + ms(options_.trial)) {
      const auto m = metrics(scenario, k, now);
      const double usage = m.at("usage_frequency").as_double();
      const double type_ok = m.at("value_type_correctness").as_double();
      const auto& align = m.at("semantic_alignment_accuracy");
      const bool align_ok = align.is_null() || align.as_double() >= options_.promote_alignment;
      const bool align_bad = !align.is_null() && align.as_double() < options_.deprecate_alignment;
      event["metrics"] = m;
      if (usage >= options_.promote_usage && type_ok >= options_.promote_type && align_ok) {
        if (k.at("client_id") == "") {
          // The key joins the template: a new minor version, the patch ends.
          bj::object t = exchange_.template_json(scenario);
          auto next = *versioning::SemVer::parse(t.at("version").as_string());
          ++next.minor;
          next.patch = 0;
          next.prerelease.clear();
          next.build.clear();
          const std::string v = next.to_string();
          bj::object key = k.at("key").as_object();
          key.erase("experimental");
          auto& list = t["keys"].as_array();
          list.insert(list.end() - 1, std::move(key));
          t["schema_id"] = std::string(t.at("schema_id").as_string()) + "_" + name;
          t["version"] = v;
          exchange_.publish(scenario, v, t);
          exchange_.expire_patch(scenario, patch);
          k["promoted_to"] = v;
          event["version"] = v;
        }
        k["state"] = "stable";
        event["event"] = "promoted";
      } else if (usage < options_.deprecate_usage || type_ok < options_.deprecate_type ||
                 align_bad) {
        exchange_.deprecate_patch_key(scenario, patch, name);
        k["state"] = "deprecated";
        k["deprecated_ms"] = now;
        event["event"] = "deprecated";
      } else {
        continue;  // neither: still experimental, evaluated again next time
      }
    } else if (state == "deprecated" &&
               now >= k.at("deprecated_ms").as_int64() + ms(options_.deprecation_grace)) {
      exchange_.expire_patch(scenario, patch);
      const std::int64_t until = now + ms(options_.withdrawn_acceptance);
      exchange_.accept_withdrawn_key(scenario, name, until);
      k["state"] = "withdrawn";
      k["withdrawn_ms"] = now;
      event["event"] = "withdrawn";
      event["accepted_until"] = at_text(until);
    } else {
      continue;
    }
    store_.put(std::string(kKeys), d.key, k, d.revision);
    out.push_back(std::move(event));
  }
}

bj::object EvolutionEngine::record_verdict(const std::string& scenario, const std::string& key_name,
                                           bool correct) {
  std::lock_guard lock(mu_);
  const auto doc = store_.get(kKeys, scenario + "/" + key_name);
  if (!doc) {
    throw util::ContractError(404, "NotFound",
                              "no evolved key \"" + key_name + "\" in " + scenario);
  }
  bj::object k = doc->body.as_object();
  k["verdicts"] = (k.contains("verdicts") ? k.at("verdicts").as_int64() : 0) + 1;
  k["verdicts_correct"] =
      (k.contains("verdicts_correct") ? k.at("verdicts_correct").as_int64() : 0) +
      (correct ? 1 : 0);
  store_.put(std::string(kKeys), doc->key, k, doc->revision);
  return bj::object{{"key_name", key_name},
                    {"verdicts", k.at("verdicts")},
                    {"verdicts_correct", k.at("verdicts_correct")}};
}

bj::object EvolutionEngine::state(const std::string& scenario) {
  std::lock_guard lock(mu_);
  exchange_.negotiate(scenario, "");                              // 404 for an unknown scenario
  if (store_.info().backend != "sqlite") pools_.erase(scenario);  // the leader's, as stored
  const std::int64_t now = clock_.now_unix_ms();
  bj::array clusters;
  for (const auto& c : pool(scenario)) {
    bj::array samples;
    for (std::size_t i = 0; i < c.samples.size() && i < 5; ++i)
      samples.push_back(bj::string(c.samples[i]));
    bj::object o{{"id", c.id},
                 {"state", c.state},
                 {"heat", std::round(heat_at(c, now) * 100) / 100},
                 {"size", c.size},
                 {"occurrences_in_window", c.occurrences.size()},
                 {"distinct_clients", c.distinct_clients()},
                 {"samples", std::move(samples)},
                 {"first_seen", at_text(c.first_ms)},
                 {"last_seen", at_text(c.last_ms)}};
    bj::array history;
    for (const auto& [at, h] : c.heat_points)
      history.push_back(bj::object{{"at", at_text(at)}, {"heat", std::round(h * 100) / 100}});
    o["heat_history"] = std::move(history);
    if (!c.key_name.empty()) o["key_name"] = c.key_name;
    if (!c.patch_id.empty()) o["patch_id"] = c.patch_id;
    if (!c.client_id.empty()) o["client_id"] = c.client_id;
    if (!c.cohort.empty()) o["cohort"] = c.cohort;
    if (!c.candidate.empty()) o["candidate"] = c.candidate;
    clusters.push_back(std::move(o));
  }
  bj::array keys;
  std::vector<bj::object> docs;
  store_.scan(kKeys, scenario + "/",
              [&](const store::Document& d) { docs.push_back(d.body.as_object()); });
  for (auto& k : docs) {
    k["metrics"] = metrics(scenario, k, now);
    k["created_at"] = at_text(k.at("created_ms").as_int64());
    k.erase("key");
    keys.push_back(std::move(k));
  }
  return bj::object{
      {"scenario", scenario},
      {"clusters", std::move(clusters)},
      {"keys", std::move(keys)},
      {"experimental_keys", experimental_keys(scenario)},
      {"limits", bj::object{{"similarity_threshold", threshold_},
                            {"heat_threshold", options_.heat_threshold},
                            {"heat_half_life_hours", options_.heat_half_life.count()},
                            {"min_distinct_clients", options_.min_distinct_clients},
                            {"min_occurrences", options_.min_occurrences},
                            {"max_experimental_keys", options_.max_experimental_keys}}}};
}

bj::object EvolutionEngine::decide(const std::string& scenario, const std::string& cluster_id,
                                   bool approve) {
  std::lock_guard lock(mu_);
  if (store_.info().backend != "sqlite") pools_.erase(scenario);
  for (auto& c : pool(scenario)) {
    if (c.id != cluster_id) continue;
    if (c.state != "awaiting_approval") {
      throw util::ContractError(
          409, "Conflict", "cluster " + cluster_id + " is " + c.state + ", not awaiting approval");
    }
    Timeline out;
    if (approve) {
      publish(scenario, c, c.candidate, clock_.now_unix_ms(), out);
    } else {
      c.state = "rejected";
      out.push_back(bj::object{{"at", at_text(clock_.now_unix_ms())},
                               {"scenario", scenario},
                               {"event", "rejected"},
                               {"cluster", c.id}});
    }
    save(scenario, c);
    return bj::object{
        {"cluster", c.id}, {"state", c.state}, {"events", bj::array(out.begin(), out.end())}};
  }
  throw util::ContractError(404, "NotFound", "no cluster " + cluster_id + " in " + scenario);
}

void EvolutionEngine::start(std::chrono::milliseconds period) {
  stopping_ = false;
  worker_ = std::thread([this, period] {
    std::unique_lock lock(wake_mu_);
    while (!stopping_) {
      wake_.wait_for(lock, period, [this] { return stopping_; });
      if (stopping_) break;
      lock.unlock();
      try {
        for (const auto& e : step()) {
          spdlog::info("evolution: {} {} {}", std::string(e.at("scenario").as_string()),
                       std::string(e.at("event").as_string()), bj::serialize(e));
        }
      } catch (const std::exception& ex) {
        spdlog::error("evolution: {}", ex.what());
      }
      lock.lock();
    }
  });
}

void EvolutionEngine::stop() {
  {
    std::lock_guard lock(wake_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

}  // namespace schemagate::evolution
