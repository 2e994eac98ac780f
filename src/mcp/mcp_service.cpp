#include "mcp/mcp_service.hpp"

#include "exchange/exchange_service.hpp"
#include "gateway/gateway_service.hpp"
#include "util/hash.hpp"
#include "util/ids.hpp"
#include "util/json_text.hpp"

#include <algorithm>
#include <cstdio>

namespace schemagate::mcp {

namespace bj = boost::json;

namespace {

// JSON-RPC 2.0 error codes.
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;

class RpcError : public std::runtime_error {
 public:
  RpcError(int code, std::string message) : std::runtime_error(std::move(message)), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

bj::object rpc_error(const bj::value& id, int code, const std::string& message) {
  return bj::object{
      {"jsonrpc", "2.0"}, {"id", id}, {"error", bj::object{{"code", code}, {"message", message}}}};
}

// Tool names allow A-Z a-z 0-9 _ - . and at most 128 characters (MCP 2025-11-25). Ids that
// need no change keep their form; others are cleaned and tagged with a hash of the original,
// so that two ids never meet under one name.
std::string clean(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  }
  return out;
}

std::string tool_name(std::string_view prefix, std::string_view rest) {
  const std::string a = clean(prefix), b = clean(rest);
  std::string name = a + "." + b;
  if (a == prefix && b == rest && name.size() <= 128) return name;
  char tag[24];
  std::snprintf(tag, sizeof tag, "_%08x",
                static_cast<unsigned>(
                    util::fnv1a64(std::string(prefix) + "\n" + std::string(rest)) & 0xffffffffu));
  if (name.size() > 128 - 9) name.resize(128 - 9);
  return name + tag;
}

// MCP wants an object schema for a tool's input: an operation schema that says nothing of its
// type is one; one of another type cannot be a tool.
std::optional<bj::object> input_schema_of(const bj::value& schema) {
  if (schema.is_null()) return bj::object{{"type", "object"}};
  if (!schema.is_object()) return std::nullopt;
  bj::object s = schema.get_object();
  const auto* t = s.if_contains("type");
  if (!t) {
    s["type"] = "object";
    return s;
  }
  if (t->is_string() && t->get_string() == "object") return s;
  return std::nullopt;
}

std::optional<bj::object> output_schema_of(const bj::value& schema) {
  if (!schema.is_object()) return std::nullopt;
  const auto* t = schema.get_object().if_contains("type");
  if (t && t->is_string() && t->get_string() == "object") return schema.get_object();
  return std::nullopt;
}

bj::object text_result(const std::string& text, bool is_error) {
  return bj::object{{"content", bj::array{bj::object{{"type", "text"}, {"text", text}}}},
                    {"isError", is_error}};
}

// A reply as the model reads it: the JSON as text, and as structuredContent when an object.
bj::object reply_result(const bj::value& body) {
  bj::object out = text_result(util::json_text(body), false);
  if (body.is_object()) out["structuredContent"] = body;
  return out;
}

// A refusal the model can act on: the code, the message and each violation with its place.
bj::object error_result(std::string_view code, std::string_view message, const bj::value& details) {
  std::string text = std::string(code) + ": " + std::string(message);
  if (const auto* d = details.if_object()) {
    if (const auto* v = d->if_contains("violations"); v && v->is_array()) {
      for (const auto& x : v->get_array()) {
        const auto* o = x.if_object();
        if (!o) continue;
        const auto* at = o->if_contains("instanceLocation");
        const auto* m = o->if_contains("message");
        text += "\n- " + std::string(at && at->is_string() ? at->get_string() : "") + ": " +
                std::string(m && m->is_string() ? m->get_string() : "");
      }
    }
  }
  return text_result(text, true);
}

const bj::object& object_param(const bj::object& params, const char* key) {
  static const bj::object empty;
  const auto* v = params.if_contains(key);
  if (!v || v->is_null()) return empty;
  if (!v->is_object()) throw RpcError(kInvalidParams, std::string(key) + " must be an object");
  return v->get_object();
}

std::string string_arg(const bj::object& args, const char* key, bool required) {
  const auto* v = args.if_contains(key);
  if (!v || v->is_null()) {
    if (required) throw RpcError(kInvalidParams, std::string("arguments.") + key + " is required");
    return {};
  }
  if (!v->is_string()) {
    throw RpcError(kInvalidParams, std::string("arguments.") + key + " must be a string");
  }
  return std::string(v->get_string());
}

}  // namespace

McpService::McpService(registry::RegistryService& registry, gateway::GatewayService& gateway,
                       exchange::ExchangeService& exchange, ScenarioSchema scenario_schema,
                       McpOptions options)
    : registry_(registry),
      gateway_(gateway),
      exchange_(exchange),
      scenario_schema_(std::move(scenario_schema)),
      options_(std::move(options)) {}

McpService::Reply McpService::handle(const bj::value& message, const std::string& session,
                                     const registry::Caller& caller) {
  Reply reply;
  if (message.is_array()) {
    reply.message = rpc_error(nullptr, kInvalidRequest,
                              "send one JSON-RPC message per request (MCP has no batches since "
                              "2025-06-18)");
    return reply;
  }
  const auto* o = message.if_object();
  const auto* version = o ? o->if_contains("jsonrpc") : nullptr;
  if (!o || !version || !version->is_string() || version->get_string() != "2.0") {
    reply.message = rpc_error(nullptr, kInvalidRequest, "expected a JSON-RPC 2.0 object");
    return reply;
  }
  const auto* method = o->if_contains("method");
  const auto* id = o->if_contains("id");
  if (!method) {
    if (!o->contains("result") && !o->contains("error")) {
      reply.message = rpc_error(id ? *id : nullptr, kInvalidRequest,
                                "a JSON-RPC message needs a method (a request or notification) "
                                "or a result or an error (a response)");
      return reply;
    }
    // A response to something this server never asks: accepted and dropped.
    if (!session.empty()) touch_session(session, caller);
    return reply;
  }
  if (!method->is_string()) {
    reply.message = rpc_error(id ? *id : nullptr, kInvalidRequest, "method must be a string");
    return reply;
  }
  const std::string name(method->get_string());
  if (name != "initialize") {
    if (session.empty()) {
      throw McpTransportError(400, "Mcp-Session-Id is required: call initialize first");
    }
    touch_session(session, caller);
  }
  if (!id || id->is_null()) return reply;  // a notification (notifications/initialized, ...)
  try {
    const auto& params = object_param(*o, "params");
    bj::value result;
    if (name == "initialize") {
      result = initialize(params, caller, reply.new_session);
    } else if (name == "ping") {
      result = bj::object{};
    } else if (name == "tools/list") {
      result = list_tools(params, caller);
    } else if (name == "tools/call") {
      result = call_tool(params, caller);
    } else {
      throw RpcError(kMethodNotFound, "method \"" + name + "\" is not served here");
    }
    reply.message = bj::object{{"jsonrpc", "2.0"}, {"id", *id}, {"result", std::move(result)}};
  } catch (const RpcError& e) {
    reply.message = rpc_error(*id, e.code(), e.what());
  }
  return reply;
}

bj::value McpService::initialize(const bj::object& params, const registry::Caller& caller,
                                 std::string& new_session) {
  const auto* asked = params.if_contains("protocolVersion");
  if (!asked || !asked->is_string()) {
    throw RpcError(kInvalidParams, "params.protocolVersion must be a string");
  }
  std::string version = kProtocolVersions.front();
  if (std::find(kProtocolVersions.begin(), kProtocolVersions.end(),
                std::string(asked->get_string())) != kProtocolVersions.end()) {
    version = asked->get_string();
  }
  {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    std::erase_if(sessions_, [&](const auto& kv) {
      return now - kv.second.last_seen > options_.session_idle;
    });
    if (sessions_.size() >= options_.max_sessions) {
      sessions_.erase(std::min_element(sessions_.begin(), sessions_.end(), [](auto& a, auto& b) {
        return a.second.last_seen < b.second.last_seen;
      }));
    }
    new_session = util::new_uuid();
    sessions_[new_session] = Session{caller.client_id, version, false, now};
  }
  return bj::object{
      {"protocolVersion", version},
      {"capabilities", bj::object{{"tools", bj::object{{"listChanged", true}}}}},
      {"serverInfo", bj::object{{"name", "schemagate"},
                                {"title", "schemagate agent registry and gateway"},
                                {"version", options_.server_version}}},
      {"instructions",
       "Find an agent with search_agents, read its card with get_agent, then call its "
       "operation's tool (named <agent>.<operation>) with arguments that match the tool's "
       "inputSchema. A refused call lists each violation with the JSON Pointer of the value "
       "to fix."}};
}

void McpService::touch_session(const std::string& id, const registry::Caller& caller) {
  std::lock_guard lock(mu_);
  const auto it = sessions_.find(id);
  // Another client's session answers like a missing one.
  if (it == sessions_.end() || it->second.client_id != caller.client_id) {
    throw McpTransportError(404, "no MCP session " + id + ": initialize again");
  }
  it->second.last_seen = std::chrono::steady_clock::now();
}

bool McpService::end_session(const std::string& session, const registry::Caller& caller) {
  std::lock_guard lock(mu_);
  const auto it = sessions_.find(session);
  if (it == sessions_.end() || it->second.client_id != caller.client_id) return false;
  sessions_.erase(it);
  wake_.notify_all();
  return true;
}

std::vector<bj::value> McpService::next_notifications(const std::string& session,
                                                      const registry::Caller& caller,
                                                      std::chrono::milliseconds wait) {
  std::unique_lock lock(mu_);
  auto ready = [&] {
    const auto it = sessions_.find(session);
    return stopping_ || it == sessions_.end() || it->second.list_changed;
  };
  wake_.wait_for(lock, wait, ready);
  const auto it = sessions_.find(session);
  if (stopping_ || it == sessions_.end() || it->second.client_id != caller.client_id) {
    throw McpTransportError(404, "no MCP session " + session);
  }
  std::vector<bj::value> out;
  if (it->second.list_changed) {
    it->second.list_changed = false;
    out.push_back(bj::object{{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}});
  }
  return out;
}

void McpService::tools_changed() {
  std::lock_guard lock(mu_);
  for (auto& [id, s] : sessions_)
    s.list_changed = true;
  wake_.notify_all();
}

void McpService::stop() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  wake_.notify_all();
}

void McpService::add_agent_tools(const registry::AgentCard& card, bj::array& tools) {
  for (const auto& op : card.operations) {
    bj::value input = op.input_schema;
    if (!op.scenario.empty()) input = scenario_schema_(op.scenario);
    const auto schema = input_schema_of(input);
    if (!schema) continue;
    const std::string name = tool_name(card.id, op.name);
    bj::object tool{{"name", name},
                    {"title", card.name + ": " + op.name},
                    {"description", op.description.empty() ? card.description : op.description},
                    {"inputSchema", *schema}};
    if (const auto out = output_schema_of(op.output_schema)) tool["outputSchema"] = *out;
    tool["_meta"] = bj::object{{"schemagate/agent", card.id}, {"schemagate/operation", op.name}};
    tools.push_back(std::move(tool));
    std::lock_guard lock(mu_);
    tools_[name] = Target{card.id, op.name, ""};
  }
}

bj::object McpService::list_tools(const bj::object& params, const registry::Caller& caller) {
  std::string cursor;
  if (const auto* c = params.if_contains("cursor"); c && !c->is_null()) {
    if (!c->is_string()) throw RpcError(kInvalidParams, "params.cursor must be a string");
    cursor = c->get_string();
  }
  bj::array tools;
  if (cursor.empty()) {
    tools.push_back(bj::object{
        {"name", "search_agents"},
        {"title", "Search agents"},
        {"description",
         "Finds agents by describing a need in plain words (hybrid lexical and semantic "
         "ranking), optionally filtered by capability, tag, language or provider."},
        {"inputSchema",
         bj::object{{"type", "object"},
                    {"properties",
                     bj::object{{"query", bj::object{{"type", "string"},
                                                     {"description", "What the agent should do"}}},
                                {"top", bj::object{{"type", "integer"},
                                                   {"minimum", 1},
                                                   {"maximum", 50},
                                                   {"default", 10}}},
                                {"capability", bj::object{{"type", "string"}}},
                                {"tag", bj::object{{"type", "string"}}},
                                {"language", bj::object{{"type", "string"}}},
                                {"provider", bj::object{{"type", "string"}}}}},
                    {"required", bj::array{"query"}}}}});
    tools.push_back(bj::object{
        {"name", "get_agent"},
        {"title", "Get an agent"},
        {"description", "An agent's card: what it does, its operations and their JSON Schemas."},
        {"inputSchema",
         bj::object{{"type", "object"},
                    {"properties", bj::object{{"id", bj::object{{"type", "string"}}}}},
                    {"required", bj::array{"id"}}}}});
    for (const auto& s : exchange_.list_scenarios()) {
      const auto& o = s.as_object();
      const std::string scenario(o.at("scenario").as_string());
      const auto schema = input_schema_of(scenario_schema_(scenario));
      if (!schema) continue;
      const std::string name = tool_name("scenario", scenario);
      tools.push_back(bj::object{
          {"name", name},
          {"title", "Scenario " + scenario},
          {"description", "Submits a payload to the " + scenario +
                              " scenario (seed 000): validated against its published template, "
                              "completed with defaults and executed by its agent."},
          {"inputSchema", *schema},
          {"_meta", bj::object{{"schemagate/scenario", scenario}}}});
      std::lock_guard lock(mu_);
      tools_[name] = Target{"", "", scenario};
    }
  }
  const auto page = registry_.list({}, cursor, options_.agents_per_page, caller);
  for (const auto& entry : page.agents)
    add_agent_tools(*entry.card, tools);
  bj::object out{{"tools", std::move(tools)}};
  if (page.next_cursor) out["nextCursor"] = *page.next_cursor;
  return out;
}

std::optional<McpService::Target> McpService::find_tool(const std::string& name,
                                                        const registry::Caller& caller) {
  // Names are shared by every caller: one this caller may not see is unknown to it.
  const auto visible = [&](const Target& t) {
    if (t.agent.empty()) return true;
    try {
      registry_.get(t.agent, caller);
      return true;
    } catch (const registry::RegistryError&) {
      return false;
    }
  };
  std::optional<Target> known;
  {
    std::lock_guard lock(mu_);
    if (const auto it = tools_.find(name); it != tools_.end()) known = it->second;
  }
  if (known) return visible(*known) ? known : std::nullopt;
  // Not handed out by this process yet (a restart, another replica): list what the caller
  // may see, which records every name.
  std::string cursor;
  bool first = true;
  while (first || !cursor.empty()) {
    bj::object params;
    if (!cursor.empty()) params["cursor"] = cursor;
    const auto listed = list_tools(params, caller);
    first = false;
    const auto* next = listed.if_contains("nextCursor");
    cursor = next ? std::string(next->as_string()) : std::string();
  }
  {
    std::lock_guard lock(mu_);
    if (const auto it = tools_.find(name); it != tools_.end()) known = it->second;
  }
  return known && visible(*known) ? known : std::nullopt;
}

bj::object McpService::call_tool(const bj::object& params, const registry::Caller& caller) {
  const auto* n = params.if_contains("name");
  if (!n || !n->is_string()) throw RpcError(kInvalidParams, "params.name must be a string");
  const std::string name(n->get_string());
  const auto& args = object_param(params, "arguments");
  if (name == "search_agents") return search_agents(args, caller);
  if (name == "get_agent") return get_agent(args, caller);
  const auto target = find_tool(name, caller);
  if (!target) throw RpcError(kInvalidParams, "unknown tool \"" + name + "\"");
  const auto start = std::chrono::steady_clock::now();
  const std::string audited = target->scenario.empty() ? target->agent + "/" + target->operation
                                                       : "scenario/" + target->scenario;
  auto audit = [&](int status) {
    if (!options_.audit) return;
    options_.audit(
        caller.client_id, audited, status,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  };
  try {
    bj::value body;
    if (!target->scenario.empty()) {
      body = exchange_.submit("", args, caller.client_id, target->scenario);
    } else {
      // The agent may have become invisible to this caller since it listed the tool: the
      // gateway checks again.
      body = gateway_.invoke(target->agent, target->operation, args, caller, "").body;
    }
    audit(200);
    return reply_result(body);
  } catch (const util::ContractError& e) {
    audit(e.status());
    return error_result(e.code(), e.what(), e.details());
  } catch (const exchange::ExchangeError& e) {
    const auto contract = exchange::contract_of(e.kind());
    audit(contract.status);
    return error_result(contract.code, e.what(), e.details());
  } catch (const registry::RegistryError& e) {
    audit(404);
    return error_result("NotFound", e.what(), e.details());
  }
}

bj::object McpService::search_agents(const bj::object& args, const registry::Caller& caller) {
  registry::RegistryService::SearchRequest request;
  request.query = string_arg(args, "query", true);
  if (const auto* top = args.if_contains("top"); top && !top->is_null()) {
    if (!top->is_int64() || top->get_int64() < 1 || top->get_int64() > 50) {
      throw RpcError(kInvalidParams, "arguments.top must be an integer from 1 to 50");
    }
    request.top = static_cast<std::size_t>(top->get_int64());
  }
  if (auto c = string_arg(args, "capability", false); !c.empty())
    request.filters.capabilities.push_back(c);
  if (auto t = string_arg(args, "tag", false); !t.empty()) request.filters.tags.push_back(t);
  request.filters.language = string_arg(args, "language", false);
  request.filters.provider = string_arg(args, "provider", false);
  auto found = registry_.search(request, caller);
  // Each result names the tools of its operations, so the model can go straight to a call.
  if (auto* results = found.if_contains("results"); results && results->is_array()) {
    for (auto& r : results->get_array()) {
      auto& o = r.as_object();
      try {
        const auto entry = registry_.get(o.at("id").as_string(), caller);
        bj::array names;
        for (const auto& op : entry.card->operations)
          names.push_back(bj::value(tool_name(entry.card->id, op.name)));
        o["tools"] = std::move(names);
      } catch (const registry::RegistryError&) {
        // removed since the search ran
      }
    }
  }
  return reply_result(found);
}

bj::object McpService::get_agent(const bj::object& args, const registry::Caller& caller) {
  const std::string id = string_arg(args, "id", true);
  try {
    const auto entry = registry_.get(id, caller);
    bj::object card = entry.card->raw;
    bj::array names;
    for (const auto& op : entry.card->operations)
      names.push_back(bj::value(tool_name(entry.card->id, op.name)));
    card["tools"] = std::move(names);
    return reply_result(card);
  } catch (const registry::RegistryError& e) {
    return error_result("NotFound", e.what(), nullptr);
  }
}

}  // namespace schemagate::mcp
