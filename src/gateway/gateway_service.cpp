#include "gateway/gateway_service.hpp"

#include "a2a/a2a_service.hpp"
#include "a2a/agent_card.hpp"
#include "a2a/wire.hpp"
#include "exchange/exchange_service.hpp"
#include "json/jcs.hpp"
#include "json/parse.hpp"
#include "jsonschema/schema.hpp"
#include "mapping/mapping.hpp"
#include "registry/registry_service.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/hash.hpp"
#include "util/ids.hpp"
#include "util/json_text.hpp"
#include "util/text.hpp"
#include "versioning/versioning_service.hpp"

#include <boost/json/serialize.hpp>

namespace schemagate::gateway {

namespace bj = boost::json;

namespace {

// The exchange's failures as the gateway reports them (the same contract codes).
GatewayError gateway_error_of(const exchange::ExchangeError& e) {
  const auto c = exchange::contract_of(e.kind());
  return GatewayError(c.status, c.code, e.what(), e.details());
}

constexpr std::string_view kIdempotency = "idempotency";
constexpr std::string_view kCredentials = "agent_credentials";  // agent id -> {headers}

bj::value error_body(const GatewayError& e) {
  bj::object err{{"code", e.code()}, {"message", e.what()}};
  if (!e.details().is_null()) err["details"] = e.details();
  return bj::object{{"error", std::move(err)}};
}

// Holds one of an agent's concurrency slots for the length of a call.
class Slot {
 public:
  Slot(std::mutex& mu, std::unordered_map<std::string, unsigned>& counts, std::string agent,
       unsigned limit)
      : mu_(mu), counts_(counts), agent_(std::move(agent)) {
    std::lock_guard lock(mu_);
    auto& n = counts_[agent_];
    if (n >= limit) {
      throw GatewayError(503, "Unavailable",
                         "agent \"" + agent_ + "\" is at its limit of " + std::to_string(limit) +
                             " concurrent calls; retry shortly",
                         nullptr, 1);
    }
    ++n;
  }
  ~Slot() {
    std::lock_guard lock(mu_);
    if (--counts_[agent_] == 0) counts_.erase(agent_);
  }

 private:
  std::mutex& mu_;
  std::unordered_map<std::string, unsigned>& counts_;
  std::string agent_;
};

}  // namespace

GatewayService::GatewayService(registry::RegistryService& registry,
                               exchange::ExchangeService& exchange, store::Store& store,
                               const util::Clock& clock, exchange::AgentTransport& transport,
                               GatewayLimits limits)
    : registry_(registry),
      exchange_(exchange),
      store_(store),
      clock_(clock),
      transport_(transport),
      limits_(limits) {}

GatewayService::~GatewayService() = default;

std::shared_ptr<const jsonschema::Schema> GatewayService::schema_for(const std::string& key,
                                                                     const bj::value& schema) {
  std::lock_guard lock(mu_);
  auto& slot = schemas_[key];
  if (!slot) slot = std::make_shared<jsonschema::Schema>(jsonschema::Schema::compile(schema));
  return slot;
}

// One operation call, resolved and checked, ready to send.
struct GatewayService::Call {
  registry::RegistryService::Entry entry;
  const registry::Operation* op = nullptr;  // in entry.card, which the call holds
  bj::value input;                          // what the agent receives
  std::string schema_key;  // card revision + operation: compiled schemas are cached under it
  unsigned limit = 0;
  std::chrono::milliseconds timeout{0};
  exchange::VersionRequest version;
  std::string contract;        // "<agent>:<operation>" when the operation is versioned
  std::string schema_version;  // the version of the reply
  std::optional<versioning::VersioningService::Negotiation> nego;  // set when translating
  bj::object scenario_version;  // what a scenario's exchange said about versions
};

namespace {

// The agent, when the caller may see it (404 otherwise).
registry::RegistryService::Entry visible(registry::RegistryService& registry,
                                         std::string_view agent_id,
                                         const registry::Caller& caller) {
  try {
    return registry.get(agent_id, caller);
  } catch (const registry::RegistryError& e) {
    throw GatewayError(404, "NotFound", e.what());
  }
}

}  // namespace

// The card's own concurrency limit and timeout, or the gateway's.
void GatewayService::apply_limits(Call& call) const {
  const auto& card = *call.entry.card;
  call.limit = limits_.max_concurrency_per_agent;
  if (const auto* m = card.raw.if_contains("max_concurrency");
      m && m->is_int64() && m->get_int64() > 0) {
    call.limit = static_cast<unsigned>(m->get_int64());
  }
  call.timeout = limits_.agent_timeout;
  if (const auto* t = card.raw.if_contains("timeout_ms");
      t && t->is_int64() && t->get_int64() > 0) {
    call.timeout = std::chrono::milliseconds(t->get_int64());
  }
}

GatewayService::Call GatewayService::prepare(std::string_view agent_id, std::string_view operation,
                                             const bj::value& input_value,
                                             const registry::Caller& caller,
                                             const exchange::VersionRequest& version) {
  Call call;
  call.version = version;
  call.entry = visible(registry_, agent_id, caller);
  const auto& card = *call.entry.card;
  call.input = input_value;
  std::string op_name(operation);
  if (op_name.empty() && call.input.is_object()) {
    if (const auto* o = call.input.get_object().if_contains("operation"); o && o->is_string()) {
      op_name = o->get_string();
      call.input.get_object().erase("operation");
    }
  }
  const registry::Operation* op = nullptr;
  if (op_name.empty()) {
    if (card.operations.size() == 1) op = &card.operations.front();
  } else {
    for (const auto& o : card.operations) {
      if (o.name == op_name) op = &o;
    }
  }
  if (!op) {
    std::string names;
    for (const auto& o : card.operations)
      names += (names.empty() ? "" : ", ") + o.name;
    if (card.operations.empty()) {
      throw GatewayError(404, "NotFound", "agent \"" + card.id + "\" declares no operations");
    }
    throw GatewayError(
        op_name.empty() ? 400 : 404, op_name.empty() ? "InvalidInput" : "NotFound",
        (op_name.empty() ? "agent \"" + card.id + "\" has several operations"
                         : "agent \"" + card.id + "\" has no operation \"" + op_name + "\"") +
            " (" + names + "); name one in the path or in \"operation\"");
  }
  call.op = op;
  call.schema_key = card.id + "#" + std::to_string(call.entry.revision) + "#" + op->name;
  apply_limits(call);
  negotiate_version(call);
  if (call.op->scenario.empty() && !call.op->input_schema.is_null()) {
    const auto check =
        schema_for(call.schema_key + "#in", call.op->input_schema)->evaluate(call.input);
    if (!check.valid) {
      throw GatewayError(400, "InvalidInput",
                         "the input does not match operation \"" + call.op->name + "\" of " +
                             card.id + ": " + check.errors.front().instance_location + " " +
                             check.errors.front().error,
                         bj::object{{"violations", check.violations()}});
    }
  }
  return call;
}

void GatewayService::negotiate_version(Call& call) {
  if (!versioning_ || !call.op->scenario.empty()) return;  // scenarios: the exchange decides
  const auto& card = *call.entry.card;
  if (call.op->version.empty()) {
    if (call.version.schema_version) {
      throw GatewayError(400, "UnsupportedSchemaVersion",
                         "operation \"" + call.op->name + "\" of " + card.id +
                             " has no published versions; call it without a schema version");
    }
    return;
  }
  call.contract = versioning::VersioningService::operation_contract(card.id, call.op->name);
  call.schema_version = call.op->version;
  if (!call.version.schema_version || *call.version.schema_version == call.op->version) return;
  auto n = versioning_->negotiate(call.contract, call.version.schema_version,
                                  call.version.permit_upgrade, call.version.permit_downgrade);
  call.schema_version = n.response_version;
  if (n.request_input) {
    const auto check = n.request_input->evaluate(call.input);
    if (!check.valid) {
      throw GatewayError(400, "InvalidInput",
                         "the input does not match version " + n.requested + " of operation \"" +
                             call.op->name + "\": " + check.errors.front().instance_location + " " +
                             check.errors.front().error,
                         bj::object{{"violations", check.violations()}});
    }
  }
  if (n.inbound) {
    try {
      call.input = mapping::apply(*n.inbound, call.input);
    } catch (const mapping::ApplyError& e) {
      throw GatewayError(400, "InvalidInput",
                         "the input cannot be translated from " + n.requested + " to " + n.served +
                             ": " + e.location() + " " + e.what());
    }
  }
  call.nego = std::move(n);
}

// The reply's version, its deprecation and the signed statement of it.
void GatewayService::state_version(const Call& call, Outcome& out) {
  out.headers.clear();  // a batch states the version of its last item
  if (!call.scenario_version.empty()) {
    const auto* v = call.scenario_version.if_contains("schema_version");
    if (!v || !v->is_string()) return;
    out.schema_version = v->get_string();
    out.headers.emplace_back("Schema-Version", out.schema_version);
    if (const auto* s = call.scenario_version.if_contains("schema_version_signature")) {
      out.headers.emplace_back("Schema-Version-Signature", std::string(s->as_string()));
    }
    if (const auto* w = call.scenario_version.if_contains("deprecation_warning")) {
      out.deprecation_warning = w->as_string();
    }
    return;
  }
  if (call.contract.empty() || call.schema_version.empty()) return;
  out.schema_version = call.schema_version;
  out.headers.emplace_back("Schema-Version", call.schema_version);
  const auto notice = versioning_->notice(call.contract, call.schema_version);
  if (!notice.signature.empty()) {
    out.headers.emplace_back("Schema-Version-Signature", notice.signature);
  }
  if (!notice.deprecation_warning.empty()) {
    out.deprecation_warning = notice.deprecation_warning;
    // RFC 9745 and RFC 8594.
    out.headers.emplace_back("Deprecation",
                             "@" + std::to_string(notice.deprecated_since_ms / 1000));
    out.headers.emplace_back("Sunset", util::format_http_date(notice.sunset_ms));
  }
}

// An operation that names a scenario runs through the seed-000 exchange, in the version the
// request names (or the template family's default).
bj::value GatewayService::run_scenario(Call& call, const registry::Caller& caller) {
  try {
    return scenario_reply(
        call, exchange_.submit("", call.input, caller.client_id, call.op->scenario, call.version));
  } catch (const exchange::ExchangeError& e) {
    throw gateway_error_of(e);
  }
}

// The exchange states the version in the answer; the gateway states it in headers.
bj::value GatewayService::scenario_reply(Call& call, bj::object out) {
  for (const char* k :
       {"schema_version", "schema_version_signature", "deprecation_warning", "upgraded_from"}) {
    if (auto* v = out.if_contains(k)) {
      call.scenario_version[k] = std::move(*v);
      out.erase(k);
    }
  }
  return out;
}

void GatewayService::on_stored_change(std::string_view collection, std::string_view key) {
  if (collection != kCredentials) return;
  std::lock_guard lock(credentials_mu_);
  credentials_.erase(std::string(key));
}

std::vector<std::pair<std::string, std::string>> GatewayService::credentials_for(
    const std::string& agent_id) {
  {
    std::lock_guard lock(credentials_mu_);
    if (const auto it = credentials_.find(agent_id); it != credentials_.end()) return it->second;
  }
  std::vector<std::pair<std::string, std::string>> headers;
  if (const auto creds = store_.get(kCredentials, agent_id)) {
    for (const auto& kv : creds->body.at("headers").as_object()) {
      headers.emplace_back(std::string(kv.key()), std::string(kv.value().as_string()));
    }
  }
  std::lock_guard lock(credentials_mu_);
  credentials_.emplace(agent_id, headers);
  return headers;
}

namespace {

GatewayError timeout_error(const std::string& agent, std::chrono::milliseconds timeout) {
  return GatewayError(
      504, "AgentTimeout",
      "agent \"" + agent + "\" did not answer within " + std::to_string(timeout.count()) + " ms");
}

GatewayError unreachable_error(const std::string& agent, const std::exception& e) {
  return GatewayError(502, "AgentUnreachable",
                      "agent \"" + agent + "\" is unreachable: " + e.what());
}

// Runs a transport call, turning its failures into the gateway's 504 and 502.
template <class Call>
auto reaching(const std::string& agent, std::chrono::milliseconds timeout, Call&& call) {
  try {
    return call();
  } catch (const exchange::AgentTimeout&) {
    throw timeout_error(agent, timeout);
  } catch (const exchange::AgentUnreachable& e) {
    throw unreachable_error(agent, e);
  }
}

}  // namespace

bj::value GatewayService::check_reply(const Call& call, int status, const std::string& body) {
  const auto& id = call.entry.card->id;
  if (status < 200 || status > 299) {
    throw GatewayError(502, "AgentError",
                       "agent \"" + id + "\" answered HTTP " + std::to_string(status),
                       bj::object{{"agent_status", status}});
  }
  bj::value answer;
  try {
    answer = json::parse(body);
  } catch (const json::ParseError& e) {
    throw GatewayError(502, "InvalidAgentResponse",
                       std::string("the agent's reply is not JSON: ") + e.what());
  }
  return check_output(call, std::move(answer));
}

bj::value GatewayService::check_output(const Call& call, bj::value answer) {
  if (!call.op->output_schema.is_null()) {
    const auto check =
        schema_for(call.schema_key + "#out", call.op->output_schema)->evaluate(answer);
    if (!check.valid) {
      throw GatewayError(502, "InvalidAgentResponse",
                         "the agent's reply does not match the output schema: " +
                             check.errors.front().instance_location + " " +
                             check.errors.front().error,
                         bj::object{{"violations", check.violations()}});
    }
  }
  if (call.nego && call.nego->outbound) {
    const auto& n = *call.nego;
    try {
      answer = mapping::apply_output(*n.outbound, answer);
    } catch (const mapping::ApplyError& e) {
      throw GatewayError(502, "InvalidAgentResponse",
                         "the agent's reply cannot be translated from " + n.served + " to " +
                             n.response_version + ": " + e.location() + " " + e.what());
    }
    if (n.response_output) {
      const auto check = n.response_output->evaluate(answer);
      if (!check.valid) {
        throw GatewayError(502, "InvalidAgentResponse",
                           "translated to " + n.response_version +
                               ", the agent's reply does not match that version: " +
                               check.errors.front().instance_location + " " +
                               check.errors.front().error,
                           bj::object{{"violations", check.violations()}});
      }
    }
  }
  return answer;
}

bj::value GatewayService::invoke_one(std::string_view agent_id, std::string_view operation,
                                     const bj::value& input_value, const registry::Caller& caller,
                                     const exchange::VersionRequest& version, Outcome* info) {
  Call call = prepare(agent_id, operation, input_value, caller, version);
  bj::value out;
  if (!call.op->scenario.empty()) {
    out = run_scenario(call, caller);
  } else if (call.entry.card->speaks_a2a()) {
    out = invoke_a2a(call);
  } else {
    const auto& id = call.entry.card->id;
    const Slot slot(mu_, in_flight_, id, call.limit);
    const auto reply = reaching(id, call.timeout, [&] {
      return transport_.post_json(call.op->endpoint, bj::serialize(call.input), call.timeout,
                                  credentials_for(id));
    });
    out = check_reply(call, reply.status, reply.body);
  }
  if (info) state_version(call, *info);
  return out;
}

bool GatewayService::invoke_async(std::string_view agent_id, std::string_view operation,
                                  const bj::value& body, std::string_view raw_body,
                                  const registry::Caller& caller, InvokeCallback done) {
  if (!body.is_object()) return false;
  auto call = std::make_shared<Call>(prepare(agent_id, operation, body, caller));
  if (call->nego) return false;  // translations take the blocking path
  if (call->entry.card->speaks_a2a()) return false;
  if (!call->op->scenario.empty()) {
    // Seed 000 behind the gateway: the exchange checks, completes and sends on the payload.
    try {
      return exchange_.submit_async(
          "", call->input, caller.client_id, call->op->scenario, call->version,
          [this, call, done](bj::object answer, std::exception_ptr error) {
            Outcome out;
            std::exception_ptr failure;
            try {
              if (error) std::rethrow_exception(error);
              out.body = scenario_reply(*call, std::move(answer));
              state_version(*call, out);
            } catch (const exchange::ExchangeError& e) {
              failure = std::make_exception_ptr(gateway_error_of(e));
            } catch (...) {
              failure = std::current_exception();
            }
            done(std::move(out), failure);
          });
    } catch (const exchange::ExchangeError& e) {
      throw gateway_error_of(e);
    }
  }
  const std::string id = call->entry.card->id;
  auto slot = std::make_shared<Slot>(mu_, in_flight_, id, call->limit);
  const bool untouched = call->input.get_object().size() == body.get_object().size();
  transport_.post_json_async(
      call->op->endpoint, untouched ? std::string(raw_body) : bj::serialize(call->input),
      call->timeout, credentials_for(id),
      [this, call, slot, done = std::move(done)](exchange::AgentTransport::Reply reply,
                                                 std::exception_ptr error) mutable {
        slot.reset();
        Outcome out;
        std::exception_ptr failure;
        try {
          if (error) std::rethrow_exception(error);
          out.body = check_reply(*call, reply.status, reply.body);
          out.verbatim = std::move(reply.body);
          state_version(*call, out);
        } catch (const exchange::AgentTimeout&) {
          failure = std::make_exception_ptr(timeout_error(call->entry.card->id, call->timeout));
        } catch (const exchange::AgentUnreachable& e) {
          failure = std::make_exception_ptr(unreachable_error(call->entry.card->id, e));
        } catch (...) {
          failure = std::current_exception();
        }
        done(std::move(out), failure);
      });
  return true;
}

namespace {

std::string sse_event(std::string_view event, const bj::value& data) {
  return "event: " + std::string(event) + "\ndata: " + util::json_text(data) + "\n\n";
}

// A finished answer as a one-event stream.
class SingleEvent final : public EventStream {
 public:
  explicit SingleEvent(std::string event) : event_(std::move(event)) {}
  bool next(std::string& piece) override {
    piece = std::move(event_);
    return false;
  }

 private:
  std::string event_;
};

// The agent's own event stream, relayed piece by piece; holds the agent's concurrency slot
// until the stream ends or the client goes away.
class RelayedEvents final : public EventStream {
 public:
  RelayedEvents(std::unique_ptr<Slot> slot, std::unique_ptr<exchange::AgentTransport::Stream> up,
                std::string agent, std::chrono::milliseconds timeout)
      : slot_(std::move(slot)), up_(std::move(up)), agent_(std::move(agent)), timeout_(timeout) {}
  bool next(std::string& piece) override {
    if (done_) return false;
    try {
      if (up_->read(piece)) return true;
    } catch (const exchange::AgentTimeout&) {
      piece += (piece.empty() ? "" : "\n\n") + failure(timeout_error(agent_, timeout_));
    } catch (const exchange::AgentUnreachable& e) {
      piece += (piece.empty() ? "" : "\n\n") + failure(unreachable_error(agent_, e));
    }
    done_ = true;
    slot_.reset();
    return false;
  }

 private:
  static std::string failure(const GatewayError& e) { return sse_event("error", error_body(e)); }
  std::unique_ptr<Slot> slot_;
  std::unique_ptr<exchange::AgentTransport::Stream> up_;
  std::string agent_;
  std::chrono::milliseconds timeout_;
  bool done_ = false;
};

// Largest non-streamed reply read from an agent that was asked for a stream.
constexpr std::size_t kMaxBufferedReply = 8 << 20;

}  // namespace

std::unique_ptr<EventStream> GatewayService::invoke_stream(
    std::string_view agent_id, std::string_view operation, const bj::value& body,
    const registry::Caller& caller, const exchange::VersionRequest& version) {
  if (!body.is_object()) {
    throw GatewayError(400, "InvalidInput",
                       "a streamed invocation takes one input object; batches are not streamed");
  }
  bj::value input = body;
  const bool stream_flag = input.get_object().erase("stream") > 0;
  Call call = prepare(agent_id, operation, input, caller, version);
  if (call.nego && call.op->scenario.empty() && call.nego->translated()) {
    throw GatewayError(400, "InvalidInput",
                       "version " + call.nego->requested + " of \"" + call.op->name +
                           "\" is served by translation, which a stream cannot carry; call "
                           "without streaming, or in version " +
                           call.op->version);
  }
  if (!call.op->scenario.empty()) {
    return std::make_unique<SingleEvent>(sse_event("result", run_scenario(call, caller)));
  }
  if (call.entry.card->speaks_a2a()) {
    return std::make_unique<SingleEvent>(sse_event("result", invoke_a2a(call)));
  }
  if (stream_flag) call.input.get_object()["stream"] = true;  // §6.3: the agent's own parameter
  const auto& id = call.entry.card->id;
  auto slot = std::make_unique<Slot>(mu_, in_flight_, id, call.limit);
  auto up = reaching(id, call.timeout, [&] {
    return transport_.post_for_stream(call.op->endpoint, bj::serialize(call.input), call.timeout,
                                      credentials_for(id));
  });
  if (up->status >= 200 && up->status <= 299 && up->content_type.starts_with("text/event-stream")) {
    return std::make_unique<RelayedEvents>(std::move(slot), std::move(up), id, call.timeout);
  }
  // Not a stream: read it whole, check it like any reply, send it as one event.
  std::string reply;
  reaching(id, call.timeout, [&] {
    while (up->read(reply)) {
      if (reply.size() > kMaxBufferedReply) {
        throw GatewayError(
            502, "InvalidAgentResponse",
            "the agent's reply is larger than " + std::to_string(kMaxBufferedReply) + " bytes");
      }
    }
  });
  return std::make_unique<SingleEvent>(sse_event("result", check_reply(call, up->status, reply)));
}

void GatewayService::set_credentials(std::string_view agent_id,
                                     const std::map<std::string, std::string>& headers,
                                     const registry::Caller& caller) {
  try {
    registry_.get(agent_id, caller);
  } catch (const registry::RegistryError& e) {
    throw GatewayError(404, "NotFound", e.what());
  }
  {
    std::lock_guard lock(credentials_mu_);
    credentials_.erase(std::string(agent_id));
  }
  if (headers.empty()) {
    store_.remove(std::string(kCredentials), std::string(agent_id));
    return;
  }
  bj::object h;
  for (const auto& [name, value] : headers)
    h[name] = value;
  store_.put(std::string(kCredentials), std::string(agent_id),
             bj::object{{"headers", std::move(h)}});
  std::lock_guard lock(credentials_mu_);
  credentials_.erase(std::string(agent_id));  // a reader may have cached the old value meanwhile
}

GatewayService::Outcome GatewayService::invoke(std::string_view agent_id,
                                               std::string_view operation, const bj::value& body,
                                               const registry::Caller& caller,
                                               std::string_view idempotency_key,
                                               const exchange::VersionRequest& version) {
  // A repeat with the same key and body is answered from the store; another body is a conflict.
  std::string idem_key;
  std::string body_hash;
  if (!idempotency_key.empty()) {
    if (util::char_count(idempotency_key) > 255) {
      throw GatewayError(400, "InvalidInput", "Idempotency-Key is longer than 255 characters");
    }
    idem_key = caller.client_id + "|" + std::string(agent_id) + "|" + std::string(operation) + "|" +
               version.schema_version.value_or("") + "|" + std::string(idempotency_key);
    body_hash = std::to_string(util::fnv1a64(json::canonicalize(body)));
    if (const auto prior = store_.get(kIdempotency, idem_key)) {
      const auto& p = prior->body.as_object();
      if (p.at("expires_at_ms").as_int64() > clock_.now_unix_ms()) {
        if (p.at("body_hash").as_string() != body_hash.c_str()) {
          throw GatewayError(409, "Conflict",
                             "Idempotency-Key \"" + std::string(idempotency_key) +
                                 "\" was already used with another body");
        }
        Outcome replay;
        replay.status = static_cast<int>(p.at("status").as_int64());
        replay.body = p.at("response");
        replay.replayed = true;
        return replay;
      }
    }
  }
  Outcome out;
  if (body.is_array()) {
    const auto& items = body.get_array();
    if (items.empty() || items.size() > limits_.max_batch) {
      throw GatewayError(400, "InvalidInput",
                         "a batch holds 1 to " + std::to_string(limits_.max_batch) + " inputs");
    }
    bj::array results;
    for (const auto& item : items) {
      try {
        results.push_back(
            bj::object{{"status", 200},
                       {"body", invoke_one(agent_id, operation, item, caller, version, &out)}});
      } catch (const GatewayError& e) {
        results.push_back(bj::object{{"status", e.status()}, {"body", error_body(e)}});
      }
    }
    out.body = std::move(results);
  } else {
    out.body = invoke_one(agent_id, operation, body, caller, version, &out);
  }
  if (!idem_key.empty()) {
    const std::int64_t expires =
        clock_.now_unix_ms() +
        std::chrono::duration_cast<std::chrono::milliseconds>(limits_.idempotency_window).count();
    store_.put(std::string(kIdempotency), idem_key,
               bj::object{{"body_hash", body_hash},
                          {"status", out.status},
                          {"response", out.body},
                          {"expires_at_ms", expires}});
  }
  return out;
}

namespace {

// The agent's reply data: the data part tagged with the operation's output schema, else the
// first data part, else the text (as {"text": ...}).
std::optional<bj::value> reply_data(const bj::array& parts, const std::string& schema_name,
                                    std::string& text) {
  std::optional<bj::value> first;
  for (const auto& pv : parts) {
    const auto& part = pv.as_object();
    if (const auto* d = part.if_contains("data")) {
      const auto mt = util::parse_media_type(a2a::media_type_of(part));
      if (!schema_name.empty() && mt.schema == schema_name) return *d;
      if (!first) first = *d;
    } else if (const auto* t = part.if_contains("text"); t && t->is_string()) {
      text += (text.empty() ? "" : "\n") + std::string(t->get_string());
    }
  }
  return first;
}

// The A2A version the agent's card declared.
a2a::WireVersion a2a_wire_version(const registry::AgentCard& card) {
  return card.a2a_version() == "0.3" ? a2a::WireVersion::v0_3 : a2a::WireVersion::v1_0;
}

}  // namespace

// The agent's credentials and the protocol version its card declared.
std::vector<std::pair<std::string, std::string>> GatewayService::a2a_headers(
    const std::string& agent_id, a2a::WireVersion version) {
  auto headers = credentials_for(agent_id);
  headers.emplace_back("A2A-Version", version == a2a::WireVersion::v0_3 ? "0.3" : "1.0");
  return headers;
}

bj::object GatewayService::post_a2a(const Call& call, const bj::object& request) {
  const auto& id = call.entry.card->id;
  const auto version = a2a_wire_version(*call.entry.card);
  const auto headers = a2a_headers(id, version);
  const Slot slot(mu_, in_flight_, id, call.limit);
  const auto reply = reaching(id, call.timeout, [&] {
    return transport_.post_json(call.op->endpoint,
                                a2a::upstream_send_body(request, version, util::new_uuid()),
                                call.timeout, headers);
  });
  if (reply.status < 200 || reply.status > 299) {
    throw GatewayError(502, "AgentError",
                       "agent \"" + id + "\" answered HTTP " + std::to_string(reply.status),
                       bj::object{{"agent_status", reply.status}});
  }
  try {
    return a2a::read_upstream_reply(reply.body, version);
  } catch (const a2a::A2AError& e) {
    throw GatewayError(502, "InvalidAgentResponse", "agent \"" + id + "\": " + e.what());
  }
}

bj::value GatewayService::invoke_a2a(const Call& call) {
  bj::object part{{"data", call.input}};
  if (!a2a::says_nothing(call.op->input_schema)) {
    const auto mt = a2a::schema_media_type(call.op->input_schema_name);
    part["mediaType"] = mt;
    part["metadata"] = bj::object{{"mimeType", mt}};
  } else {
    part["mediaType"] = "application/json";
  }
  const auto reply =
      post_a2a(call, bj::object{{"message", bj::object{{"messageId", util::new_uuid()},
                                                       {"role", "ROLE_USER"},
                                                       {"parts", bj::array{std::move(part)}}}}});
  const auto& id = call.entry.card->id;
  std::string text;
  std::optional<bj::value> data;
  if (const auto* t = reply.if_contains("task")) {
    const auto& task = t->as_object();
    const std::string state(task.at("status").at("state").as_string());
    if (state != "TASK_STATE_COMPLETED") {
      std::string why;
      if (const auto* m = task.at("status").as_object().if_contains("message");
          m && m->is_object()) {
        reply_data(m->at("parts").as_array(), "", why);
      }
      throw GatewayError(
          502, "AgentError",
          "agent \"" + id + "\" ended the task " + state + (why.empty() ? "" : ": " + why),
          bj::object{{"task_state", state}});
    }
    if (const auto* arts = task.if_contains("artifacts"); arts && arts->is_array()) {
      for (const auto& a : arts->get_array()) {
        if (auto d = reply_data(a.at("parts").as_array(), call.op->output_schema_name, text);
            d && !data) {
          data = std::move(d);
        }
      }
    }
  } else {
    data =
        reply_data(reply.at("message").at("parts").as_array(), call.op->output_schema_name, text);
  }
  if (!data) {
    if (text.empty()) {
      throw GatewayError(502, "InvalidAgentResponse",
                         "agent \"" + id + "\" answered without data or text");
    }
    data = bj::object{{"text", text}};
  }
  return check_output(call, std::move(*data));
}

GatewayService::Call GatewayService::a2a_call(std::string_view agent_id,
                                              const registry::Caller& caller) {
  Call call;
  call.entry = visible(registry_, agent_id, caller);
  const auto& card = *call.entry.card;
  if (!card.speaks_a2a() || card.operations.empty()) {
    throw GatewayError(400, "InvalidInput", "agent \"" + card.id + "\" does not speak A2A");
  }
  call.op = &card.operations.front();
  call.schema_key = card.id + "#" + std::to_string(call.entry.revision) + "#" + call.op->name;
  apply_limits(call);
  return call;
}

bj::object GatewayService::send_a2a(std::string_view agent_id, const bj::object& request,
                                    const registry::Caller& caller) {
  return post_a2a(a2a_call(agent_id, caller), request);
}

namespace {

// A fronted agent's server-sent events, read as they come and turned into StreamResponses;
// holds the agent's concurrency slot until the stream ends.
class UpstreamEvents final : public a2a::EventSource {
 public:
  UpstreamEvents(std::unique_ptr<Slot> slot, std::unique_ptr<exchange::AgentTransport::Stream> up,
                 std::string agent, std::chrono::milliseconds timeout, a2a::WireVersion version)
      : slot_(std::move(slot)),
        up_(std::move(up)),
        agent_(std::move(agent)),
        timeout_(timeout),
        version_(version),
        sse_(up_->content_type.starts_with("text/event-stream")) {}

  bool next(bj::object& out) override {
    for (;;) {
      if (auto data = take_event(); !data.empty()) {
        out = decode(data);
        return true;
      }
      if (done_) return false;
      const bool more = reaching(agent_, timeout_, [&] { return up_->read(buffer_); });
      if (buffer_.size() > kMaxBufferedReply) {
        throw GatewayError(502, "InvalidAgentResponse",
                           "agent \"" + agent_ + "\" sent an event larger than " +
                               std::to_string(kMaxBufferedReply) + " bytes");
      }
      if (!more) {
        done_ = true;
        slot_.reset();
        if (!sse_) {  // a plain JSON-RPC answer: one event
          const auto reply = decode_reply(buffer_);
          buffer_.clear();
          out = reply;
          return true;
        }
        buffer_ += "\n\n";  // a last event without its blank line
      }
    }
  }

 private:
  // The data of the next complete event in the buffer ("" when none is complete yet).
  std::string take_event() {
    if (!sse_) return {};
    for (;;) {
      auto end = buffer_.find("\n\n");
      std::size_t skip = 2;
      if (const auto crlf = buffer_.find("\r\n\r\n"); crlf < end) {
        end = crlf;
        skip = 4;
      }
      if (end == std::string::npos) return {};
      const std::string block = buffer_.substr(0, end);
      buffer_.erase(0, end + skip);
      std::string data;
      std::size_t at = 0;
      while (at <= block.size()) {
        auto eol = block.find('\n', at);
        if (eol == std::string::npos) eol = block.size();
        std::string_view line(block.data() + at, eol - at);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.starts_with("data:")) {
          line.remove_prefix(5);
          if (line.starts_with(" ")) line.remove_prefix(1);
          data += (data.empty() ? "" : "\n") + std::string(line);
        }
        at = eol + 1;
      }
      if (!data.empty()) return data;
    }
  }
  bj::object decode(const std::string& data) const {
    try {
      return a2a::read_upstream_event(data, version_);
    } catch (const a2a::A2AError& e) {
      throw GatewayError(502, "InvalidAgentResponse", "agent \"" + agent_ + "\": " + e.what());
    }
  }
  bj::object decode_reply(const std::string& body) const {
    try {
      return a2a::read_upstream_reply(body, version_);
    } catch (const a2a::A2AError& e) {
      throw GatewayError(502, "InvalidAgentResponse", "agent \"" + agent_ + "\": " + e.what());
    }
  }

  std::unique_ptr<Slot> slot_;
  std::unique_ptr<exchange::AgentTransport::Stream> up_;
  std::string agent_;
  std::chrono::milliseconds timeout_;
  a2a::WireVersion version_;
  bool sse_;
  bool done_ = false;
  std::string buffer_;
};

}  // namespace

std::unique_ptr<a2a::EventSource> GatewayService::stream_a2a(std::string_view agent_id,
                                                             const bj::object& request,
                                                             const registry::Caller& caller) {
  const Call call = a2a_call(agent_id, caller);
  const auto& id = call.entry.card->id;
  const auto version = a2a_wire_version(*call.entry.card);
  const auto headers = a2a_headers(id, version);
  auto slot = std::make_unique<Slot>(mu_, in_flight_, id, call.limit);
  auto up = reaching(id, call.timeout, [&] {
    return transport_.post_for_stream(
        call.op->endpoint, a2a::upstream_send_body(request, version, util::new_uuid(), true),
        call.timeout, headers);
  });
  if (up->status < 200 || up->status > 299) {
    throw GatewayError(502, "AgentError",
                       "agent \"" + id + "\" answered HTTP " + std::to_string(up->status),
                       bj::object{{"agent_status", up->status}});
  }
  return std::make_unique<UpstreamEvents>(std::move(slot), std::move(up), id, call.timeout,
                                          version);
}

}  // namespace schemagate::gateway
