#pragma once

#include "mapping/mapping.hpp"
#include "versioning/classifier.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace schemagate::store {
class Store;
struct Write;
}  // namespace schemagate::store
namespace schemagate::util {
class Clock;
}
namespace schemagate::signing {
class KeyStore;
}
namespace schemagate::jsonschema {
class Schema;
}

namespace schemagate::versioning {

struct VersioningOptions {
  Policy policy = Policy::strict;
  std::chrono::hours min_deprecation_notice{24 * 90};  // seed 003 §3.5: ninety days
  bool sign_responses = true;                          // Schema-Version-Signature on replies
};

// A versioned contract (seed 003) is a template family (named by its scenario) or one agent
// operation (named "<agent>:<operation>"). Every published version keeps its input and output
// JSON Schemas here, so versions can be compared, mapped between and negotiated.
class VersioningService {
 public:
  enum class Kind { template_family, operation };

  VersioningService(store::Store& store, const util::Clock& clock, signing::KeyStore& keys,
                    VersioningOptions options = {});
  ~VersioningService();

  static std::string operation_contract(std::string_view agent, std::string_view operation);

  struct Planned {
    Report report;                     // against `previous`
    std::string previous;              // the highest version below the new one ("" for the first)
    std::vector<store::Write> writes;  // commit them with the caller's own writes
  };
  // Checks a new version against the one below it and prepares its record. Throws
  // util::ContractError 409 BreakingChange (details: the report) when the change is breaking
  // and the version is not a new major one; 409 Conflict when the version exists with other
  // schemas. `native_current`: for an operation, the agent now speaks this version only.
  // `enforce_rules` false records a version as it is (one published before versioning).
  Planned plan_publish(const std::string& contract, Kind kind, const std::string& version,
                       const boost::json::value& input_schema,
                       const boost::json::value& output_schema, bool enforce_rules = true);
  bool knows(const std::string& contract, const std::string& version);
  void forget(const std::string& contract);  // after the caller's commit (or a failure)
  void forget_all();                         // trust in a signing key changed
  // Another replica committed a document to the shared store: contracts, versions and mappings
  // are read again when the change is one of theirs.
  void on_stored_change(std::string_view collection, std::string_view key);

  // The version the contract's provider speaks now (the latest release for a template
  // family); nullopt for an unknown contract.
  std::optional<std::string> current(const std::string& contract);
  // The version an operation should get when its schemas are published again without one: the
  // same when nothing changed, the next minor for compatible changes. Throws BreakingChange.
  std::string next_version(const std::string& contract, const boost::json::value& input_schema,
                           const boost::json::value& output_schema);

  // POST .../compatibility and `schemagate compat`: the report between two published versions,
  // or between a published version and candidate schemas.
  boost::json::object compare(const std::string& contract, const std::string& from,
                              const std::string& to, std::optional<Policy> policy);
  // `to` labels the candidate; when it is a version, the report says whether publishing it
  // would be allowed ("allowed", and "problem" when not).
  boost::json::object compare_candidate(const std::string& contract, const std::string& from,
                                        const std::string& to,
                                        const boost::json::value& input_schema,
                                        const boost::json::value& output_schema,
                                        std::optional<Policy> policy);

  // Seed 003 §3.1/§4.1: accepts, produces, default, mappings (+ deprecations), signed.
  boost::json::object profile(const std::string& contract);
  struct Manifest {
    boost::json::object body;
    std::string etag;
  };
  Manifest manifest();

  // Seed 003 §3.5. Throws 400 when the date is under the notice period away, 409 when it
  // would move an announced date earlier.
  boost::json::object deprecate(const std::string& contract, const std::string& version,
                                const std::string& date);

  // Seed 003 §3.3: a mapping document between two published versions. Unsigned documents are
  // signed by this server (it publishes the destination schema); a signature by any key other
  // than this server's or an operator-trusted one is refused (403 UntrustedSignature).
  struct StoredMapping {
    boost::json::object document;  // with "signature"
    bool created = false;
  };
  StoredMapping put_mapping(const std::string& contract, const std::string& from,
                            const std::string& to, const boost::json::value& document);
  boost::json::object get_mapping(const std::string& contract, const std::string& from,
                                  const std::string& to);
  // The translation from `from` to `to` along the shortest chain of trusted mappings (inverses
  // of bidirectional ones included), as one mapping; nullopt when there is none.
  std::optional<mapping::Mapping> route(const std::string& contract, const std::string& from,
                                        const std::string& to);

  // How one request is served (seed 003 §3.2, §4.2).
  struct Negotiation {
    std::string contract;
    std::string requested;         // what the client asked for (the default when it did not)
    std::string served;            // the version the provider works in
    std::string response_version;  // the version of the reply
    std::optional<mapping::Mapping> inbound;   // requested -> served (requests)
    std::optional<mapping::Mapping> outbound;  // served -> response_version (responses)
    std::shared_ptr<const jsonschema::Schema> request_input;    // the requested version's
    std::shared_ptr<const jsonschema::Schema> response_output;  // the reply version's
    std::string deprecation_warning;  // set while the version is deprecated
    std::int64_t deprecated_since_ms = 0;
    std::int64_t sunset_ms = 0;
    bool translated() const { return inbound.has_value() || outbound.has_value(); }
  };
  // Throws 400 UnsupportedSchemaVersion (details: requested, accepts, default) for a version
  // outside the accepted set that the client did not permit to be upgraded or downgraded.
  Negotiation negotiate(const std::string& contract, const std::optional<std::string>& requested,
                        bool permit_upgrade, bool permit_downgrade);
  // The seed 003 §3.2 client side: the highest of `supported` that the contract accepts.
  boost::json::object handshake(const std::string& contract,
                                const std::vector<std::string>& supported);

  // What every response in `version` carries: its deprecation (seed 003 §3.5) and, when
  // signing is on, the signed statement of the version. Cached: cheap on the hot path.
  struct Notice {
    std::string deprecation_warning;
    std::int64_t deprecated_since_ms = 0;
    std::int64_t sunset_ms = 0;
    std::string signature;
  };
  Notice notice(const std::string& contract, const std::string& version);

  // A detached JWS over {"contract","schema_version"}: the negotiated version in signed form
  // (seed 003 §8). Empty when signing is off.
  std::string sign_version(const std::string& contract, const std::string& version);
  // Adds "signature" (a detached JWS over the rest) to a document, when signing is on.
  void sign_in_place(boost::json::object& document);
  bool signing() const { return options_.sign_responses; }
  signing::KeyStore& keys() { return keys_; }
  Policy policy() const { return options_.policy; }

 private:
  struct State;
  std::shared_ptr<const State> state(const std::string& contract);
  std::shared_ptr<const State> load(const std::string& contract);
  boost::json::object profile_of(const State& s);
  std::vector<std::string> accepts_of(const State& s);

  store::Store& store_;
  const util::Clock& clock_;
  signing::KeyStore& keys_;
  VersioningOptions options_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const State>> cache_;
  std::map<std::string, std::string> version_signatures_;  // "<contract>\n<version>" -> JWS
};

}  // namespace schemagate::versioning
