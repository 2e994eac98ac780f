#pragma once

#include "exchange/agent_transport.hpp"
#include "exchange/template.hpp"
#include "versioning/versioning_service.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

namespace schemagate::store {
class Store;
}
namespace schemagate::util {
class Clock;
}
namespace schemagate::jsonschema {
class Schema;
}

namespace schemagate::exchange {

// A failure the caller can act on; adapters map `kind` to HTTP statuses and JSON-RPC codes.
class ExchangeError : public std::runtime_error {
 public:
  enum class Kind {
    invalid_input,           // malformed request
    not_found,               // unknown scenario, version or schema_id
    conflict,                // a published version differs, a schema_id is taken
    invalid_template,        // details.problems
    invalid_payload,         // details.violations
    agent_unreachable,       // 502
    agent_timeout,           // 504
    agent_error,             // 502: the agent answered with an error status
    invalid_agent_response,  // 502: the reply breaks response_schema or is not JSON
  };
  ExchangeError(Kind kind, std::string message, boost::json::value details = nullptr)
      : std::runtime_error(std::move(message)), kind_(kind), details_(std::move(details)) {}
  Kind kind() const { return kind_; }
  const boost::json::value& details() const { return details_; }

 private:
  Kind kind_;
  boost::json::value details_;
};

// The external contract's HTTP status and error code for each kind (DESIGN.md), shared by every
// adapter that reports an ExchangeError.
struct ErrorContract {
  int status;
  const char* code;
};
ErrorContract contract_of(ExchangeError::Kind kind);

// A request's seed 003 envelope: the version the client works in, and whether it lets the
// provider answer in another one.
struct VersionRequest {
  std::optional<std::string> schema_version;
  bool permit_upgrade = false;
  bool permit_downgrade = false;
};

struct ExchangeLimits {
  std::size_t max_other_chars = 2000;  // `other` is cut to this many characters
  std::chrono::seconds default_patch_lifetime{std::chrono::hours(24 * 30)};
  std::chrono::milliseconds agent_timeout{10'000};
};

// Seed 000: schema templates (§4), negotiation (§3.2 step 3), structured exchange (steps 4-5) and
// update delivery (step 6, §6.2.2), over the Store.
class ExchangeService {
 public:
  ExchangeService(store::Store& store, const util::Clock& clock, AgentTransport& transport,
                  ExchangeLimits limits = {});
  ~ExchangeService();

  struct Published {
    boost::json::object template_json;
    bool created = false;  // false: the identical version was already published
  };
  // PUT /scenarios/{s}/versions/{v}. Versions are immutable: republishing identical content is
  // a no-op, different content is a conflict.
  Published publish(std::string_view scenario, std::string_view version,
                    const boost::json::value& body);

  boost::json::array list_scenarios();

  // Template families become versioned contracts (seed 003): publishing checks the breaking-
  // change rules, negotiation and submission honour the compatibility profile, and templates,
  // patches and update suggestions are signed. Set before serving.
  void use_versioning(versioning::VersioningService* versioning) { versioning_ = versioning; }
  // Records every published version the versioning service does not know yet (templates
  // published before it existed), oldest first. Returns how many.
  std::size_t backfill_versions();

  // Called with the scenario after each new version is published (the server refreshes the
  // search entries of agents whose operations name it). Set before serving.
  void on_published(std::function<void(const std::string& scenario)> listener) {
    on_published_ = std::move(listener);
  }

  // Where executed payloads of a scenario go (PUT /scenarios/{s}/endpoint; also set by a publish
  // body's "endpoint"). An empty endpoint means validate and complete only.
  // `accepts_patch_keys`: the agent understands keys that patches add (experimental keys);
  // otherwise their values reach it folded into `other` as readable text, and their defaults
  // are never injected (a patch must never break an agent that does not know its keys).
  void bind_endpoint(std::string_view scenario, std::string_view endpoint,
                     bool accepts_patch_keys = false);
  struct Binding {
    std::string endpoint;  // empty: validate and complete only
    bool accepts_patch_keys = false;
  };
  Binding binding_of(std::string_view scenario);
  std::string endpoint_of(std::string_view scenario) { return binding_of(scenario).endpoint; }

  struct Negotiated {
    boost::json::object body;
    std::string etag;  // strong, quoted
  };
  // get_schema_template: the default version unless `version` is given, or the highest of
  // `supported` the scenario accepts (the seed 003 handshake). `for_use` false reads a
  // published version as it is, accepted or withdrawn (GET /scenarios/{s}/versions/{v}).
  Negotiated negotiate(std::string_view scenario, std::string_view preferred_language,
                       std::optional<std::string> version = std::nullopt,
                       const std::vector<std::string>& supported = {}, bool for_use = true);
  // The JSON Schema of a published version (the latest when `version` is empty).
  boost::json::object json_schema(std::string_view scenario, std::string_view version = {});

  // The contract form of a template (what versions are compared on): its payload schema
  // without the version-specific $id and title.
  static boost::json::value contract_input(const Template& t);

  // POST /scenarios/{s}/compatibility: {"from", "to"} compares two published versions,
  // {"from", "template"} a candidate template; "policy" ("strict" | "lenient") optional.
  boost::json::object compatibility(std::string_view scenario, const boost::json::value& body);

  // submit_payload: validate, complete with defaults, record `other`, execute, and attach active
  // update suggestions. `expected_scenario`, when given, must own the schema_id.
  // Without a schema_id, `version.schema_version` (or the default) names the template.
  boost::json::object submit(std::string_view schema_id, const boost::json::value& payload,
                             std::string_view client_id, std::string_view expected_scenario = {},
                             const VersionRequest& version = {});
  // submit() without a thread waiting for the agent: `done` gets the answer, or an
  // ExchangeError in the exception_ptr, on the transport's thread (at once when no agent is
  // bound). Errors found before sending are thrown. Returns false, doing nothing, when the
  // payload needs the blocking path: its `other` text is appended to the store.
  using SubmitCallback = std::function<void(boost::json::object, std::exception_ptr)>;
  bool submit_async(std::string_view schema_id, const boost::json::value& payload,
                    std::string_view client_id, std::string_view expected_scenario,
                    const VersionRequest& version, SubmitCallback done);

  // Another replica committed a document to the shared store: what is kept in memory about
  // scenarios (versions, endpoints, patches, withdrawn keys) is read again when the change is
  // one of theirs. Published versions never change.
  void on_stored_change(std::string_view collection, std::string_view key);

  // POST /scenarios/{s}/patches: the server fills patch_id, timestamp and expiration. A patch
  // may target one client ("client_id") or a cohort ("cohort_prefix": clients whose id starts
  // with it).
  boost::json::object post_patch(std::string_view scenario, const boost::json::value& body);

  // get_schema_updates: active patches for the scenario (and client), newer than since_ms.
  boost::json::object updates(std::string_view scenario, std::string_view client_id,
                              std::optional<std::int64_t> since_ms);

  // Seed 000 §6.2.3 metrics, counted in memory as payloads arrive and taken by the evolution
  // engine (drain_usage), which keeps them in the store.
  struct KeyUsage {
    std::int64_t present = 0;      // payloads that carried the key (valid or not)
    std::int64_t type_errors = 0;  // ... whose value broke the key's type or constraints
    std::set<std::string> clients;
    std::vector<boost::json::value> samples;  // values seen, for audits (a few)
  };
  struct ScenarioUsage {
    std::int64_t payloads = 0;
    std::set<std::string> clients;
    std::map<std::string, KeyUsage> keys;  // experimental keys only
  };
  std::map<std::string, ScenarioUsage> drain_usage();
  // Puts drained counts back (they could not be stored this time); merged with newer ones.
  void restore_usage(const std::string& scenario, ScenarioUsage usage);

  // The stored form of a published version (the latest when `version` is empty).
  boost::json::object template_json(std::string_view scenario, std::string_view version = {});
  // Ends a patch now (a promoted key joined the template, a withdrawn one left).
  void expire_patch(std::string_view scenario, std::string_view patch_id);
  // Marks a key a patch adds as deprecated (§6.2.3); it stays usable.
  void deprecate_patch_key(std::string_view scenario, std::string_view patch_id,
                           std::string_view key_name);
  // A withdrawn key is still accepted until `until_ms` (§6.2.3): taken out of the payload
  // (its value folded into `other`), with a logged warning and a `warnings` entry.
  void accept_withdrawn_key(std::string_view scenario, std::string_view key_name,
                            std::int64_t until_ms);

  // The searchable text of a scenario's latest template: each key's name and descriptions (all
  // languages). Empty when nothing is published under that name.
  std::vector<std::string> key_descriptions(std::string_view scenario);

  // What `other` becomes before it is stored: control characters removed, whitespace trimmed,
  // at most max_other_chars characters.
  std::string sanitize_other(std::string_view text) const;

 private:
  // A published version, parsed once: versions are immutable, so the cache never goes stale.
  struct Located {
    Template tmpl;
    std::string scenario, version;
    std::shared_ptr<const jsonschema::Schema> response_check;  // null without response_schema
  };
  std::shared_ptr<const Located> load_template(std::string_view scenario, std::string_view version);
  // What a payload's path reads about its scenario, kept in memory so that a submission reads
  // nothing from the store: read on first use, dropped when this service (or, through the change
  // feed, another replica) changes it.
  struct ScenarioState {
    boost::json::array versions;
    Binding binding;
    std::vector<boost::json::object> patches;       // every stored patch, expired ones included
    std::map<std::string, std::int64_t> withdrawn;  // key -> accepted until (ms)
  };
  // Null when nothing is published under that name.
  std::shared_ptr<const ScenarioState> scenario_state(std::string_view scenario);
  void forget_scenario(std::string_view scenario);
  // A payload checked and completed, and where it goes; what submit() does before the agent.
  struct Accepted;
  Accepted accept(std::string_view schema_id, const boost::json::value& payload,
                  std::string_view client_id, std::string_view expected_scenario,
                  const VersionRequest& version);
  // The answer as the client gets it: the agent's reply checked (and translated back), or, for a
  // scenario with no endpoint, the completed payload as accepted.
  boost::json::object agent_answer(const Accepted& a, const AgentTransport::Reply& reply);
  boost::json::object answer_without_agent(const Accepted& a);
  boost::json::object answer(const Accepted& a, boost::json::object out);
  std::shared_ptr<const Located> find_schema_id(std::string_view schema_id);
  std::string latest_version(std::string_view scenario);
  std::vector<boost::json::object> active_patches(std::string_view scenario,
                                                  std::string_view schema_id,
                                                  std::string_view client_id);
  Template effective(const Template& base, const std::vector<boost::json::object>& patches);
  std::shared_ptr<const jsonschema::Schema> compiled(const Template& effective,
                                                     const std::string& cache_key);

  void backfill_scenario(const std::string& scenario);
  // Moves the values of experimental keys into `other` as "key: value" text (listed in
  // `folded`), for an agent that does not accept patch keys.
  static void fold_patch_keys(const Template& t, boost::json::object& payload,
                              boost::json::array& folded);
  // A validated payload in the requested version, translated to the served one and checked
  // against it.
  boost::json::object translate_payload(const versioning::VersioningService::Negotiation& nego,
                                        const boost::json::object& payload);

  store::Store& store_;
  versioning::VersioningService* versioning_ = nullptr;
  std::function<void(const std::string&)> on_published_;
  const util::Clock& clock_;
  AgentTransport& transport_;
  ExchangeLimits limits_;
  std::mutex cache_mu_;
  std::mutex usage_mu_;
  std::map<std::string, ScenarioUsage> usage_;
  void count_usage(const std::string& scenario, const Template& t,
                   const boost::json::object& payload, std::string_view client_id,
                   const std::vector<std::string>& type_errors);
  std::map<std::string, std::shared_ptr<const ScenarioState>, std::less<>> scenarios_;
  // Counts forgets: a state read from the store while one happened is not kept (it may predate
  // the change).
  std::uint64_t forgotten_ = 0;
  // schema_id -> (scenario, version): fixed once published.
  std::map<std::string, std::pair<std::string, std::string>, std::less<>> schema_owners_;
  std::map<std::string, std::shared_ptr<const jsonschema::Schema>> cache_;
  std::map<std::string, std::shared_ptr<const Located>> templates_;  // "<scenario>/<version>"
};

}  // namespace schemagate::exchange
