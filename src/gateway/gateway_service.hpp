#pragma once

#include "exchange/agent_transport.hpp"
#include "exchange/exchange_service.hpp"
#include "util/contract_error.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace schemagate::store {
class Store;
}
namespace schemagate::util {
class Clock;
}
namespace schemagate::jsonschema {
class Schema;
}
namespace schemagate::registry {
class RegistryService;
struct Caller;
}  // namespace schemagate::registry
namespace schemagate::versioning {
class VersioningService;
}
namespace schemagate::a2a {
class EventSource;
enum class WireVersion;
}  // namespace schemagate::a2a

namespace schemagate::gateway {

// A failure with the HTTP status and contract code it stands for (seed 004 §6.2).
using GatewayError = util::ContractError;

struct GatewayLimits {
  std::chrono::milliseconds agent_timeout{10'000};  // an agent card's "timeout_ms" overrides
  unsigned max_concurrency_per_agent = 64;          // a card's "max_concurrency" overrides
  std::chrono::hours idempotency_window{24};
  std::size_t max_batch = 100;
};

// A streamed invocation's body, as server-sent events, piece by piece. Pieces are relayed as
// the agent sends them; a failure midway becomes a final `event: error`.
class EventStream {
 public:
  virtual ~EventStream() = default;
  // The next piece (may be empty); false after the last. May block on the agent.
  virtual bool next(std::string& piece) = 0;
};

// POST /agents/{id}/invoke: the unified invocation interface (seed 004 §6).
class GatewayService {
 public:
  GatewayService(registry::RegistryService& registry, exchange::ExchangeService& exchange,
                 store::Store& store, const util::Clock& clock, exchange::AgentTransport& transport,
                 GatewayLimits limits = {});
  ~GatewayService();

  struct Outcome {
    int status = 200;
    boost::json::value body;
    bool replayed = false;  // answered from the idempotency store
    // The agent's reply exactly as it came, once validated (invoke_async): sent on as is, which
    // keeps its number formatting and saves serializing `body` again. Empty: serialize `body`.
    std::string verbatim;
    // Seed 003: the version of the reply, its deprecation warning, and the headers that state
    // them (Schema-Version, Schema-Version-Signature, Deprecation, Sunset).
    std::string schema_version;
    std::string deprecation_warning;
    std::vector<std::pair<std::string, std::string>> headers;
  };
  // Operations become versioned contracts: requests may name a version, translated by signed
  // mappings when the agent speaks another. Set before serving.
  void use_versioning(versioning::VersioningService* versioning) { versioning_ = versioning; }
  // `body` is the operation's input, or an array of inputs (a batch: 200 with one
  // {"status", "body"} per item). `operation` comes from the path or the body's "operation".
  // Headers the gateway sends to this agent (its API key, say). Write-only: no endpoint or card
  // shows them. An empty map removes them. Throws GatewayError 404 for an unknown agent.
  void set_credentials(std::string_view agent_id, const std::map<std::string, std::string>& headers,
                       const registry::Caller& caller);

  // Another replica committed a document to the shared store: cached agent credentials are
  // read again when the change is to one of them.
  void on_stored_change(std::string_view collection, std::string_view key);

  Outcome invoke(std::string_view agent_id, std::string_view operation,
                 const boost::json::value& body, const registry::Caller& caller,
                 std::string_view idempotency_key, const exchange::VersionRequest& version = {});

  // invoke() of one input without blocking: `done` gets the outcome, or a GatewayError in the
  // exception_ptr, on the transport's thread. Errors found before sending are thrown. Returns
  // false, doing nothing, when the call needs the blocking path (a batch, a translated version,
  // an A2A agent, a scenario payload with `other` text to record).
  using InvokeCallback = std::function<void(Outcome, std::exception_ptr)>;
  // `raw_body` is the text `body` was parsed from: forwarded as it is when nothing in the body
  // is the gateway's own ("operation").
  bool invoke_async(std::string_view agent_id, std::string_view operation,
                    const boost::json::value& body, std::string_view raw_body,
                    const registry::Caller& caller, InvokeCallback done);

  // Seed 004 §6.3 streaming: the input is checked as for invoke(), then sent with
  // Accept: text/event-stream. An agent that answers with an event stream has it relayed as it
  // comes (events are passed through unvalidated); one that answers with JSON has its reply
  // validated and sent as a single `event: result`. Errors before the first byte are thrown
  // (GatewayError, as for invoke()). A body's `"stream": true` is removed before validation
  // and kept in what the agent receives.
  std::unique_ptr<EventStream> invoke_stream(std::string_view agent_id, std::string_view operation,
                                             const boost::json::value& body,
                                             const registry::Caller& caller,
                                             const exchange::VersionRequest& version = {});

  // A v1.0 SendMessageRequest sent on to an agent that speaks A2A itself, over JSON-RPC in the
  // protocol version its card declared (credentials, concurrency and timeout as for invoke()):
  // its answer as a v1.0 SendMessageResponse ({"task"} or {"message"}). Throws GatewayError
  // (502 InvalidAgentResponse for an answer that is not A2A).
  boost::json::object send_a2a(std::string_view agent_id, const boost::json::object& request,
                               const registry::Caller& caller);
  // The same as SendStreamingMessage: the agent's events as v1.0 StreamResponses, read as they
  // come. next() throws GatewayError when the agent fails, stalls or breaks the protocol.
  std::unique_ptr<a2a::EventSource> stream_a2a(std::string_view agent_id,
                                               const boost::json::object& request,
                                               const registry::Caller& caller);

 private:
  struct Call;
  Call prepare(std::string_view agent_id, std::string_view operation,
               const boost::json::value& input, const registry::Caller& caller,
               const exchange::VersionRequest& version = {});
  // Seed 003 on the way in: the input checked in the requested version and translated to the
  // one the agent speaks.
  void negotiate_version(Call& call);
  void state_version(const Call& call, Outcome& out);
  boost::json::value invoke_one(std::string_view agent_id, std::string_view operation,
                                const boost::json::value& input, const registry::Caller& caller,
                                const exchange::VersionRequest& version, Outcome* info);
  boost::json::value run_scenario(Call& call, const registry::Caller& caller);
  boost::json::value scenario_reply(Call& call, boost::json::object out);
  std::vector<std::pair<std::string, std::string>> credentials_for(const std::string& agent_id);
  boost::json::value check_reply(const Call& call, int status, const std::string& body);
  boost::json::value check_output(const Call& call, boost::json::value answer);
  void apply_limits(Call& call) const;
  // An operation of an A2A agent: the input goes as a data part, the reply's data comes back.
  boost::json::value invoke_a2a(const Call& call);
  boost::json::object post_a2a(const Call& call, const boost::json::object& request);
  Call a2a_call(std::string_view agent_id, const registry::Caller& caller);
  std::vector<std::pair<std::string, std::string>> a2a_headers(const std::string& agent_id,
                                                               a2a::WireVersion version);
  std::shared_ptr<const jsonschema::Schema> schema_for(const std::string& key,
                                                       const boost::json::value& schema);

  registry::RegistryService& registry_;
  exchange::ExchangeService& exchange_;
  versioning::VersioningService* versioning_ = nullptr;
  store::Store& store_;
  const util::Clock& clock_;
  exchange::AgentTransport& transport_;
  GatewayLimits limits_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const jsonschema::Schema>> schemas_;
  std::unordered_map<std::string, unsigned> in_flight_;
  std::mutex credentials_mu_;  // agent id -> headers, read through from the store
  std::unordered_map<std::string, std::vector<std::pair<std::string, std::string>>> credentials_;
};

}  // namespace schemagate::gateway
