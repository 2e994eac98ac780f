#include "a2a/a2a_service.hpp"

#include "jsonschema/schema.hpp"
#include "registry/registry_service.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/contract_error.hpp"
#include "util/ids.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <deque>
#include <thread>

namespace schemagate::a2a {

namespace bj = boost::json;
using Kind = A2AError::Kind;

namespace {

std::string string_at(const bj::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

const bj::object& params_object(const bj::value& params) {
  if (!params.is_object()) throw A2AError(Kind::invalid_params, "params must be an object");
  return params.get_object();
}

std::optional<std::int64_t> int_param(const bj::object& p, std::string_view key) {
  const auto* v = p.if_contains(key);
  if (!v || v->is_null()) return std::nullopt;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<std::int64_t>(v->get_uint64());
  if (v->is_string()) {  // query parameters arrive as strings
    try {
      std::size_t used = 0;
      const auto n = std::stoll(std::string(v->get_string()), &used);
      if (used == v->get_string().size()) return n;
    } catch (const std::exception&) {
    }
  }
  throw A2AError(Kind::invalid_params, std::string(key) + " must be an integer");
}

bool bool_param(const bj::object& p, std::string_view key) {
  const auto* v = p.if_contains(key);
  if (!v || v->is_null()) return false;
  if (v->is_bool()) return v->get_bool();
  if (v->is_string() && (v->get_string() == "true" || v->get_string() == "false")) {
    return v->get_string() == "true";
  }
  throw A2AError(Kind::invalid_params, std::string(key) + " must be true or false");
}

std::string describe_part(PartKind k) {
  return k == PartKind::text ? "text" : k == PartKind::data ? "data" : "file";
}

// The task as a caller asked to see it: at most `history` messages, artifacts on request.
bj::object shown(bj::object task, std::optional<std::int64_t> history, bool artifacts = true) {
  if (history) {
    if (*history <= 0) {
      task.erase("history");
    } else if (auto* h = task.if_contains("history"); h && h->is_array()) {
      auto& list = h->get_array();
      if (list.size() > static_cast<std::size_t>(*history)) {
        list.erase(list.begin(), list.end() - *history);
      }
    }
  }
  if (!artifacts) task.erase("artifacts");
  return task;
}

A2AError task_not_found(std::string_view id) {
  return A2AError(Kind::task_not_found, "no task \"" + std::string(id) + "\"", {},
                  bj::object{{"taskId", id}});
}

std::vector<FieldViolation> violations_of(const jsonschema::ValidationResult& r,
                                          const std::string& field) {
  std::vector<FieldViolation> out;
  for (const auto& e : r.errors)
    out.push_back({field + e.instance_location, e.error + " (" + e.keyword_location + ")"});
  return out;
}

std::string first_message(const std::vector<FieldViolation>& v) {
  return v.empty() ? std::string() : v.front().field + ": " + v.front().description;
}

}  // namespace

struct A2AService::Prepared {
  registry::RegistryService::Entry entry;
  AgentProfile profile;
  const Skill* skill = nullptr;
  bj::object message;    // the user's message, v1.0
  bj::value input;       // what the operation receives (translated agents)
  bool forward = false;  // a fronted agent gets the message itself
  registry::Caller caller;
  std::optional<std::int64_t> history_length;
  bool return_immediately = false;
  bool streamed = false;  // others may look the task up while it runs
  StoredTask stored;
  std::optional<A2AError> failure;  // the agent's answer broke the protocol or its schemas
};

A2AService::A2AService(registry::RegistryService& registry, store::Store& store,
                       const util::Clock& clock, Invoker invoker,
                       std::function<bj::value(const std::string&)> scenario_schema,
                       A2AOptions options)
    : registry_(registry),
      clock_(clock),
      invoker_(std::move(invoker)),
      scenario_schema_(std::move(scenario_schema)),
      options_(options),
      tasks_(store, clock, options.task_retention) {}

A2AService::~A2AService() {
  {
    std::lock_guard lock(jobs_mu_);
    stopping_ = true;
  }
  jobs_cv_.notify_all();
  for (auto& w : workers_)
    w.join();
}

void A2AService::run_in_background(std::function<void()> job) {
  std::lock_guard lock(jobs_mu_);
  if (workers_.empty()) {
    for (unsigned i = 0; i < std::max(1u, options_.background_workers); ++i) {
      workers_.emplace_back([this] {
        for (;;) {
          std::function<void()> next;
          {
            std::unique_lock lock(jobs_mu_);
            jobs_cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
            if (jobs_.empty()) return;  // stopping, and nothing left to run
            next = std::move(jobs_.front());
            jobs_.pop_front();
          }
          next();
        }
      });
    }
  }
  jobs_.push_back(std::move(job));
  jobs_cv_.notify_one();
}

std::shared_ptr<const jsonschema::Schema> A2AService::compiled(const std::string& key,
                                                               const bj::value& schema) {
  std::lock_guard lock(schemas_mu_);
  // Keys carry the card's revision: re-registrations leave old entries behind, so the cache is
  // emptied now and then rather than grow without bound.
  if (schemas_.size() >= 4096 && !schemas_.contains(key)) schemas_.clear();
  auto& slot = schemas_[key];
  if (!slot) slot = std::make_shared<jsonschema::Schema>(jsonschema::Schema::compile(schema));
  return slot;
}

A2AService::Card A2AService::card(std::string_view agent, const registry::Caller& caller,
                                  const CardContext& context, WireVersion version) {
  const auto entry = registry_.get(agent, caller);
  const auto profile = profile_of(*entry.card, scenario_schema_);
  return Card{agent_card(profile, *entry.card, context, version), entry.updated_at_ms,
              entry.card->is_public};
}

std::shared_ptr<A2AService::Prepared> A2AService::prepare(std::string_view agent,
                                                          const bj::value& params_value,
                                                          const registry::Caller& caller) {
  const auto& params = params_object(params_value);
  auto p = std::make_shared<Prepared>();
  p->entry = registry_.get(agent, caller);
  p->profile = profile_of(*p->entry.card, scenario_schema_);
  p->caller = caller;
  const auto* m = params.if_contains("message");
  if (!m) {
    throw A2AError(Kind::invalid_params, "params.message is required",
                   {bad_request({{"message", "a SendMessageRequest needs a message"}})});
  }
  p->message = read_message(*m, "message");
  if (const auto* c = params.if_contains("configuration"); c && c->is_object()) {
    p->history_length = int_param(c->get_object(), "historyLength");
    p->return_immediately = bool_param(c->get_object(), "returnImmediately");
    if (const auto* b = c->get_object().if_contains("blocking"); b && b->is_bool()) {
      p->return_immediately = !b->get_bool();  // 0.3's inverse
    }
  }
  const auto& parts = p->message.at("parts").as_array();

  // Seed 001 §3: the first data part tagged application/json;schema=<name> is the structured
  // input; later ones are ignored.
  std::optional<std::size_t> structured;
  std::string schema_name;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& part = parts[i].as_object();
    if (kind_of(part) != PartKind::data) continue;
    const auto mt = util::parse_media_type(media_type_of(part));
    if (mt.essence == "application/json" && !mt.schema.empty()) {
      structured = i;
      schema_name = mt.schema;
      break;
    }
  }

  if (const auto* task_id = p->message.if_contains("taskId")) {
    // A message for a task that exists.
    const auto existing = tasks_.get(task_id->as_string());
    if (!existing || existing->agent != p->entry.card->id || existing->owner != caller.client_id) {
      throw task_not_found(task_id->as_string());
    }
    if (structured) {
      throw A2AError(Kind::unsupported_operation,
                     "structured input (" + schema_name + ") was rejected: task \"" +
                         std::string(task_id->as_string()) +
                         "\" is already running; structured input starts a new task, so send it "
                         "without taskId",
                     {}, bj::object{{"taskId", *task_id}, {"schema", schema_name}});
    }
    if (const auto* ctx = p->message.if_contains("contextId");
        ctx && *ctx != existing->task.at("contextId")) {
      throw A2AError(Kind::invalid_params, "contextId does not match the context of task \"" +
                                               std::string(task_id->as_string()) + "\"");
    }
    throw A2AError(Kind::unsupported_operation,
                   "task \"" + std::string(task_id->as_string()) + "\" is " + existing->state() +
                       " and takes no further messages",
                   {}, bj::object{{"taskId", *task_id}});
  }

  if (structured) {
    const Skill* skill = p->profile.skill_for_input_schema(schema_name);
    if (!skill) {
      const auto accepted = p->profile.input_schema_names();
      throw A2AError(
          Kind::content_type_not_supported,
          "schema \"" + schema_name + "\" is not declared by agent \"" + p->entry.card->id + "\"" +
              (accepted.empty() ? std::string(" (it declares none)") : "; it accepts " + accepted),
          {bad_request({{"message.parts[" + std::to_string(*structured) + "].mediaType",
                         "undeclared schema \"" + schema_name + "\""}})},
          bj::object{{"schema", schema_name}, {"acceptedSchemas", accepted}});
    }
    p->skill = skill;
    p->input = parts[*structured].as_object().at("data");
    const auto check =
        compiled(p->entry.card->id + "#" + std::to_string(p->entry.revision) + "#in#" + schema_name,
                 skill->input_schema)
            ->evaluate(p->input);
    if (!check.valid) {
      const auto v =
          violations_of(check, "message.parts[" + std::to_string(*structured) + "].data");
      throw A2AError(Kind::invalid_params,
                     "the data does not match schema \"" + schema_name + "\": " + first_message(v),
                     {bad_request(v)},
                     bj::object{{"schema", schema_name}, {"violations", std::to_string(v.size())}});
    }
    p->forward = p->profile.upstream_a2a;
    return p;
  }

  // Seed 002: named parts (metadata.name) and the keys of an untagged data object fill the
  // skill's inputFields; plain text fills its one text field.
  const Skill* skill = nullptr;
  // The skill a caller names: message.metadata.skillId, else the request's metadata.skillId.
  std::string wanted;
  for (const bj::object* holder : {static_cast<const bj::object*>(&p->message), &params}) {
    const auto* md = holder->if_contains("metadata");
    if (wanted.empty() && md && md->is_object()) wanted = string_at(md->get_object(), "skillId");
  }
  std::vector<std::string> names;
  bool has_text = false;
  for (const auto& pv : parts) {
    const auto& part = pv.as_object();
    if (auto n = name_of(part); !n.empty()) {
      names.push_back(n);
    } else if (kind_of(part) == PartKind::data && part.at("data").is_object()) {
      for (const auto& kv : part.at("data").as_object())
        names.emplace_back(kv.key());
    } else if (kind_of(part) == PartKind::text) {
      has_text = true;
    }
  }
  if (!wanted.empty()) {
    skill = p->profile.skill(wanted);
    if (!skill)
      throw A2AError(Kind::invalid_params,
                     "agent \"" + p->entry.card->id + "\" has no skill \"" + wanted + "\"");
  } else if (p->profile.skills.size() == 1) {
    skill = &p->profile.skills.front();
  } else {
    std::vector<const Skill*> fits;
    for (const auto& s : p->profile.skills) {
      const bool all = std::all_of(names.begin(), names.end(), [&](const std::string& n) {
        return std::any_of(s.input_fields.begin(), s.input_fields.end(),
                           [&](const FieldDefinition& f) { return f.name == n; });
      });
      if (!names.empty() ? all : (has_text && s.text_field())) fits.push_back(&s);
    }
    if (fits.size() == 1) skill = fits.front();
  }
  if (!skill) {
    const auto accepted = p->profile.input_schema_names();
    throw A2AError(Kind::content_type_not_supported,
                   "agent \"" + p->entry.card->id +
                       "\" could not tell which skill this message is for: send a data part with "
                       "mediaType application/json;schema=<name>" +
                       (accepted.empty() ? std::string() : " (" + accepted + ")") +
                       ", or name the skill in message.metadata.skillId",
                   {}, bj::object{{"acceptedSchemas", accepted}});
  }
  p->skill = skill;
  if (p->profile.upstream_a2a && skill->input_fields.empty()) {
    p->forward = true;  // the agent's own text handling
    return p;
  }
  bj::object assembled;
  std::vector<FieldViolation> problems;
  std::string text;
  bool matched = false;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& part = parts[i].as_object();
    const std::string where = "message.parts[" + std::to_string(i) + "]";
    const auto kind = kind_of(part);
    const auto name = name_of(part);
    if (!name.empty()) {
      const auto f = std::find_if(skill->input_fields.begin(), skill->input_fields.end(),
                                  [&](const FieldDefinition& d) { return d.name == name; });
      if (f == skill->input_fields.end()) {
        problems.push_back(
            {where, "skill \"" + skill->operation + "\" has no input field \"" + name + "\""});
        continue;
      }
      if (!f->kind.empty() && f->kind != describe_part(kind)) {
        problems.push_back({where, "input field \"" + name + "\" is a " + f->kind +
                                       " field, got a " + describe_part(kind) + " part"});
        continue;
      }
      if (const auto mt = media_type_of(part); !mt.empty() && !f->mime_types.empty()) {
        const auto essence = util::parse_media_type(mt).essence;
        if (std::none_of(f->mime_types.begin(), f->mime_types.end(), [&](const std::string& x) {
              return util::parse_media_type(x).essence == essence;
            })) {
          problems.push_back({where + ".mediaType", "input field \"" + name + "\" takes " +
                                                        f->mime_types.front() + ", not " + mt});
          continue;
        }
      }
      assembled[name] = kind == PartKind::text   ? part.at("text")
                        : kind == PartKind::data ? part.at("data")
                                                 : bj::value(part);
      matched = true;
    } else if (kind == PartKind::data && part.at("data").is_object()) {
      for (const auto& kv : part.at("data").as_object())
        assembled[kv.key()] = kv.value();
      matched = true;
    } else if (kind == PartKind::text) {
      text += (text.empty() ? "" : "\n") + std::string(part.at("text").as_string());
    } else {
      problems.push_back({where, "a " + describe_part(kind) +
                                     " part without metadata.name matches no input field"});
    }
  }
  if (!text.empty()) {
    if (const auto* tf = skill->text_field(); tf && !assembled.contains(tf->name)) {
      assembled[tf->name] = text;
      matched = true;
    } else if (!matched) {
      const auto accepted = p->profile.input_schema_names();
      throw A2AError(Kind::content_type_not_supported,
                     "skill \"" + skill->operation + "\" of agent \"" + p->entry.card->id +
                         "\" takes structured input, not text/plain: send a data part with "
                         "mediaType application/json;schema=" +
                         (skill->input_schema_name.empty() ? accepted : skill->input_schema_name),
                     {}, bj::object{{"acceptedSchemas", accepted}});
    }
  }
  for (const auto& f : skill->input_fields) {
    if (!f.optional && !assembled.contains(f.name)) {
      problems.push_back({f.name, "missing input field \"" + f.name + "\" (" + f.kind + ")"});
    }
  }
  if (!problems.empty()) {
    throw A2AError(Kind::invalid_params,
                   "the message does not fill the inputs of skill \"" + skill->operation +
                       "\": " + first_message(problems),
                   {bad_request(problems)}, bj::object{{"skill", skill->operation}});
  }
  p->input = std::move(assembled);
  if (!skill->input_schema.is_null()) {
    const auto check = compiled(p->entry.card->id + "#" + std::to_string(p->entry.revision) +
                                    "#in#" + skill->operation,
                                skill->input_schema)
                           ->evaluate(p->input);
    if (!check.valid) {
      const auto v = violations_of(check, "input");
      throw A2AError(
          Kind::invalid_params,
          "the input fields do not match skill \"" + skill->operation + "\": " + first_message(v),
          {bad_request(v)}, bj::object{{"skill", skill->operation}});
    }
  }
  p->forward = p->profile.upstream_a2a;
  return p;
}

void A2AService::start(Prepared& p) {
  const std::string id = util::new_uuid();
  const std::string context = p.message.contains("contextId")
                                  ? std::string(p.message.at("contextId").as_string())
                                  : util::new_uuid();
  p.message["taskId"] = id;
  p.message["contextId"] = context;
  p.stored.task = bj::object{
      {"id", id},
      {"contextId", context},
      {"status", bj::object{{"state", "TASK_STATE_SUBMITTED"},
                            {"timestamp", util::format_rfc3339(clock_.now())}}},
      {"history", bj::array{p.message}},
      {"metadata",
       bj::object{{"agent", p.entry.card->id}, {"skill", p.skill ? p.skill->operation : ""}}}};
  p.stored.agent = p.entry.card->id;
  p.stored.owner = p.caller.client_id;
  // A blocking SendMessage hands out the task's id only with its end: it is written once, then.
  if (p.return_immediately || p.streamed) tasks_.save(p.stored);
}

void A2AService::check_output(const AgentProfile& profile, const Skill* skill,
                              const bj::object& task, const std::string& cache_key) {
  std::vector<FieldViolation> problems;
  const auto* arts = task.if_contains("artifacts");
  if (!arts || !arts->is_array()) return;
  for (std::size_t a = 0; a < arts->get_array().size(); ++a) {
    const auto& art = arts->get_array()[a].as_object();
    const auto* parts = art.if_contains("parts");
    if (!parts || !parts->is_array()) continue;
    const auto art_name = string_at(art, "name");
    for (std::size_t i = 0; i < parts->get_array().size(); ++i) {
      const auto& part = parts->get_array()[i].as_object();
      if (kind_of(part) != PartKind::data) continue;
      const std::string where =
          "artifacts[" + std::to_string(a) + "].parts[" + std::to_string(i) + "].data";
      const auto mt = util::parse_media_type(media_type_of(part));
      const bj::value* schema = nullptr;
      std::string key;
      if (!mt.schema.empty()) {
        schema = profile.schemas.if_contains(mt.schema);
        key = mt.schema;
        if (!schema) {
          problems.push_back({where, "tagged with schema \"" + mt.schema +
                                         "\", which the agent does not declare"});
          continue;
        }
      } else if (skill && !art_name.empty()) {
        for (const auto& f : skill->output_fields) {
          if (f.name == art_name && !f.schema.is_null()) {
            schema = &f.schema;
            key = "field#" + f.name;
          }
        }
      }
      if (!schema) continue;
      const auto check = compiled(cache_key + "#out#" + key, *schema)->evaluate(part.at("data"));
      if (!check.valid) {
        const auto v = violations_of(check, where);
        problems.insert(problems.end(), v.begin(), v.end());
      }
    }
  }
  if (!problems.empty()) {
    throw A2AError(
        Kind::invalid_agent_response,
        "the agent's artifacts do not match its output schemas: " + first_message(problems),
        {bad_request(problems)});
  }
}

namespace {

bj::object agent_message(const std::string& task, const std::string& context, bj::array parts) {
  return bj::object{{"messageId", util::new_uuid()},
                    {"role", "ROLE_AGENT"},
                    {"parts", std::move(parts)},
                    {"taskId", task},
                    {"contextId", context}};
}

// A failed invocation as the task's final status: rejected for the caller's fault (4xx),
// failed for the agent's; the message says why in text and as data.
bj::object failure_status(const std::string& task, const std::string& context,
                          std::string_view state, const std::string& text, bj::object error) {
  return bj::object{
      {"state", state},
      {"message",
       agent_message(task, context,
                     bj::array{bj::object{{"text", text}},
                               bj::object{{"data", bj::object{{"error", std::move(error)}}},
                                          {"mediaType", "application/json"}}})}};
}

bj::object failure_status(const std::string& task, const std::string& context,
                          const util::ContractError& e) {
  bj::object error{{"code", e.code()}, {"message", e.what()}};
  if (!e.details().is_null()) error["details"] = e.details();
  return failure_status(task, context,
                        e.status() < 500 ? "TASK_STATE_REJECTED" : "TASK_STATE_FAILED", e.what(),
                        std::move(error));
}

bj::object failure_status(const std::string& task, const std::string& context, const A2AError& e) {
  return failure_status(task, context, "TASK_STATE_FAILED", e.what(),
                        bj::object{{"code", e.reason()}, {"details", e.wire_details()}});
}

// An event of a fronted agent's task, re-addressed to ours.
void readdress(bj::object& o, const std::string& task, const std::string& context) {
  if (o.contains("taskId")) o["taskId"] = task;
  if (o.contains("contextId")) o["contextId"] = context;
}

}  // namespace

// The user's message as a fronted agent receives it: its own task and context ids are its own.
bj::object A2AService::upstream_request(const Prepared& p) {
  bj::object message = p.message;
  message.erase("taskId");
  message.erase("contextId");
  return bj::object{{"message", std::move(message)}};
}

void A2AService::finish(Prepared& p, bj::array artifacts, bj::object status,
                        const std::function<void(bj::object)>& emit) {
  auto& task = p.stored.task;
  const std::string id(task.at("id").as_string());
  const std::string context(task.at("contextId").as_string());
  if (auto* m = status.if_contains("message"); m && m->is_object())
    readdress(m->get_object(), id, context);
  status["timestamp"] = util::format_rfc3339(clock_.now());
  // A cancel that came meanwhile stands.
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (!artifacts.empty()) task["artifacts"] = artifacts;
    task["status"] = status;
    if (const auto* m = status.if_contains("message"); m && m->is_object()) {
      auto& h = task["history"].as_array();
      h.push_back(*m);
      if (h.size() > options_.max_history) {
        h.erase(h.begin(), h.end() - static_cast<std::ptrdiff_t>(options_.max_history));
      }
    }
    try {
      tasks_.save(p.stored);
      break;
    } catch (const store::ConflictError&) {
      auto now = tasks_.get(id);
      if (!now || is_terminal(now->state())) {
        if (now) p.stored = *now;
        break;
      }
      p.stored = *now;
    }
  }
  emit(bj::object{{"statusUpdate", bj::object{{"taskId", id},
                                              {"contextId", context},
                                              {"status", p.stored.task.at("status")}}}});
}

void A2AService::execute(Prepared& p, const std::function<void(bj::object)>& emit) {
  const std::string id(p.stored.task.at("id").as_string());
  const std::string context(p.stored.task.at("contextId").as_string());
  bj::array artifacts;
  bj::object status;
  try {
    if (p.forward) {
      const auto reply = invoker_.forward(p.entry.card->id, upstream_request(p), p.caller);
      if (const auto* t = reply.if_contains("task")) {
        const auto& up = t->as_object();
        check_output(p.profile, p.skill, up,
                     p.entry.card->id + "#" + std::to_string(p.entry.revision));
        p.stored.upstream_task = string_at(up, "id");
        if (const auto* a = up.if_contains("artifacts"); a && a->is_array())
          artifacts = a->get_array();
        status = up.at("status").as_object();
      } else {
        status = {{"state", "TASK_STATE_COMPLETED"}, {"message", reply.at("message")}};
      }
    } else {
      const auto out = invoker_.invoke(p.entry.card->id, p.skill->operation, p.input, p.caller);
      const std::string mt = p.skill->output_schema_name.empty()
                                 ? std::string("application/json")
                                 : schema_media_type(p.skill->output_schema_name);
      artifacts.push_back(bj::object{
          {"artifactId", util::new_uuid()},
          {"name", p.skill->output_schema_name.empty() ? std::string("result")
                                                       : p.skill->output_schema_name},
          {"parts",
           bj::array{bj::object{
               {"data", out}, {"mediaType", mt}, {"metadata", bj::object{{"mimeType", mt}}}}}}});
      // Seed 002: one artifact per named output the reply holds.
      if (out.is_object()) {
        for (const auto& f : p.skill->output_fields) {
          const auto* v = out.get_object().if_contains(f.name);
          if (!v) continue;
          bj::object part = f.kind == "text" && v->is_string()
                                ? bj::object{{"text", *v}}
                                : bj::object{{"data", *v}, {"mediaType", "application/json"}};
          artifacts.push_back(bj::object{{"artifactId", util::new_uuid()},
                                         {"name", f.name},
                                         {"parts", bj::array{std::move(part)}}});
        }
      }
      status = {{"state", "TASK_STATE_COMPLETED"}};
    }
    for (const auto& a : artifacts) {
      emit(bj::object{
          {"artifactUpdate",
           bj::object{
               {"taskId", id}, {"contextId", context}, {"artifact", a}, {"lastChunk", true}}}});
    }
  } catch (const util::ContractError& e) {
    status = failure_status(id, context, e);
    artifacts.clear();
  } catch (const A2AError& e) {
    p.failure = e;
    status = failure_status(id, context, e);
    artifacts.clear();
  }
  finish(p, std::move(artifacts), std::move(status), emit);
}

bool A2AService::relay(Prepared& p, EventSource& upstream, bj::array& artifacts,
                       const std::function<void(bj::object)>& emit) {
  const std::string id(p.stored.task.at("id").as_string());
  const std::string context(p.stored.task.at("contextId").as_string());
  bj::object event;
  try {
    if (!upstream.next(event)) {
      finish(p, std::move(artifacts),
             failure_status(id, context, "TASK_STATE_FAILED",
                            "the agent ended its stream before the task ended",
                            bj::object{{"code", "AgentError"}}),
             emit);
      return false;
    }
    if (const auto* t = event.if_contains("task")) {
      const auto& up = t->as_object();
      p.stored.upstream_task = string_at(up, "id");
      check_output(p.profile, p.skill, up,
                   p.entry.card->id + "#" + std::to_string(p.entry.revision));
      if (const auto* a = up.if_contains("artifacts"); a && a->is_array()) {
        for (const auto& x : a->get_array()) {
          artifacts.push_back(x);
          emit(bj::object{
              {"artifactUpdate",
               bj::object{
                   {"taskId", id}, {"contextId", context}, {"artifact", x}, {"lastChunk", true}}}});
        }
      }
      const auto& status = up.at("status").as_object();
      if (is_terminal(string_at(status, "state"))) {
        finish(p, std::move(artifacts), status, emit);
        return false;
      }
      return true;
    }
    if (const auto* s = event.if_contains("statusUpdate")) {
      auto status = s->at("status").as_object();
      if (is_terminal(string_at(status, "state"))) {
        finish(p, std::move(artifacts), std::move(status), emit);
        return false;
      }
      if (auto* m = status.if_contains("message"); m && m->is_object())
        readdress(m->get_object(), id, context);
      emit(bj::object{
          {"statusUpdate",
           bj::object{{"taskId", id}, {"contextId", context}, {"status", std::move(status)}}}});
      return true;
    }
    if (const auto* a = event.if_contains("artifactUpdate")) {
      auto update = a->as_object();
      const auto& artifact = update.at("artifact").as_object();
      check_output(p.profile, p.skill, bj::object{{"artifacts", bj::array{artifact}}},
                   p.entry.card->id + "#" + std::to_string(p.entry.revision));
      const auto* append = update.if_contains("append");
      auto same = std::find_if(artifacts.begin(), artifacts.end(), [&](const bj::value& x) {
        return x.at("artifactId") == artifact.at("artifactId");
      });
      if (append && append->is_bool() && append->get_bool() && same != artifacts.end()) {
        auto& parts = same->as_object()["parts"].as_array();
        for (const auto& part : artifact.at("parts").as_array())
          parts.push_back(part);
      } else {
        artifacts.push_back(artifact);
      }
      readdress(update, id, context);
      emit(bj::object{{"artifactUpdate", std::move(update)}});
      return true;
    }
    // A message ends the exchange.
    finish(p, std::move(artifacts),
           bj::object{{"state", "TASK_STATE_COMPLETED"}, {"message", event.at("message")}}, emit);
    return false;
  } catch (const util::ContractError& e) {
    finish(p, std::move(artifacts), failure_status(id, context, e), emit);
  } catch (const A2AError& e) {
    finish(p, std::move(artifacts), failure_status(id, context, e), emit);
  }
  return false;
}

bj::object A2AService::send_message(std::string_view agent, const bj::value& params,
                                    const registry::Caller& caller) {
  auto p = prepare(agent, params, caller);
  start(*p);
  if (p->return_immediately) {
    const auto snapshot = shown(p->stored.task, p->history_length);
    run_in_background([this, p] {
      try {
        execute(*p, [](bj::object) {});
      } catch (const std::exception&) {
        // The task stays as it was last stored; nobody waits for this answer.
      }
    });
    return bj::object{{"task", snapshot}};
  }
  execute(*p, [](bj::object) {});
  if (p->failure) throw *p->failure;  // the task is stored as failed; the caller gets the error
  return bj::object{{"task", shown(p->stored.task, p->history_length)}};
}

namespace {

// SendStreamingMessage: the Task as it was created, then "working", then what each step of the
// run emits, pulled as the client reads.
class RunEvents final : public EventSource {
 public:
  // Emits the next events; false once the run is over.
  using Step = std::function<bool(const std::function<void(bj::object)>&)>;
  RunEvents(bj::object first, std::string id, std::string context, Step step)
      : step_(std::move(step)) {
    queue_.push_back(bj::object{{"task", std::move(first)}});
    queue_.push_back(bj::object{
        {"statusUpdate", bj::object{{"taskId", id},
                                    {"contextId", context},
                                    {"status", bj::object{{"state", "TASK_STATE_WORKING"}}}}}});
  }
  bool next(bj::object& out) override {
    while (queue_.empty() && step_) {
      if (!step_([this](bj::object e) { queue_.push_back(std::move(e)); })) step_ = nullptr;
    }
    if (queue_.empty()) return false;
    out = std::move(queue_.front());
    queue_.pop_front();
    return true;
  }

 private:
  std::deque<bj::object> queue_;
  Step step_;
};

// SubscribeToTask: the task now, then its changes as they are stored, until it ends.
class TaskWatch final : public EventSource {
 public:
  TaskWatch(TaskStore& tasks, StoredTask current, std::shared_ptr<std::atomic<unsigned>> open)
      : tasks_(tasks), current_(std::move(current)), open_(std::move(open)) {}
  ~TaskWatch() override { --*open_; }
  bool next(bj::object& out) override {
    if (!sent_first_) {
      sent_first_ = true;
      seen_artifacts_ = artifacts(current_.task).size();
      out = bj::object{{"task", current_.task}};
      return true;
    }
    if (!pending_.empty()) {
      out = std::move(pending_.front());
      pending_.pop_front();
      return true;
    }
    if (done_) return false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
    while (std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const auto now = tasks_.get(current_.id());
      if (!now) break;
      if (now->revision == current_.revision) continue;
      current_ = *now;
      const auto arts = artifacts(current_.task);
      const std::string id = current_.id();
      const auto context = current_.task.at("contextId");
      for (std::size_t i = seen_artifacts_; i < arts.size(); ++i) {
        pending_.push_back(bj::object{{"artifactUpdate", bj::object{{"taskId", id},
                                                                    {"contextId", context},
                                                                    {"artifact", arts[i]},
                                                                    {"lastChunk", true}}}});
      }
      seen_artifacts_ = arts.size();
      pending_.push_back(
          bj::object{{"statusUpdate", bj::object{{"taskId", id},
                                                 {"contextId", context},
                                                 {"status", current_.task.at("status")}}}});
      done_ = is_terminal(current_.state());
      return next(out);
    }
    done_ = true;
    return false;
  }

 private:
  static bj::array artifacts(const bj::object& task) {
    const auto* a = task.if_contains("artifacts");
    return a && a->is_array() ? a->get_array() : bj::array{};
  }
  TaskStore& tasks_;
  StoredTask current_;
  bool sent_first_ = false;
  bool done_ = false;
  std::shared_ptr<std::atomic<unsigned>> open_;
  std::size_t seen_artifacts_ = 0;
  std::deque<bj::object> pending_;
};

}  // namespace

std::unique_ptr<EventSource> A2AService::stream_message(std::string_view agent,
                                                        const bj::value& params,
                                                        const registry::Caller& caller) {
  auto p = prepare(agent, params, caller);
  p->streamed = true;
  start(*p);
  const std::string id(p->stored.task.at("id").as_string());
  const std::string context(p->stored.task.at("contextId").as_string());
  auto first = shown(p->stored.task, p->history_length);
  if (!p->forward || !invoker_.stream) {
    return std::make_unique<RunEvents>(std::move(first), id, context,
                                       [this, p](const std::function<void(bj::object)>& emit) {
                                         execute(*p, emit);
                                         return false;
                                       });
  }
  // A fronted agent's own stream, relayed event by event, each artifact checked on the way.
  struct Relay {
    std::shared_ptr<EventSource> upstream;
    bj::array artifacts;
  };
  auto relay_state = std::make_shared<Relay>();
  return std::make_unique<RunEvents>(
      std::move(first), id, context,
      [this, p, relay_state](const std::function<void(bj::object)>& emit) {
        if (!relay_state->upstream) {
          try {
            relay_state->upstream =
                invoker_.stream(p->entry.card->id, upstream_request(*p), p->caller);
          } catch (const util::ContractError& e) {
            const std::string tid(p->stored.task.at("id").as_string());
            const std::string ctx(p->stored.task.at("contextId").as_string());
            finish(*p, {}, failure_status(tid, ctx, e), emit);
            return false;
          }
        }
        return relay(*p, *relay_state->upstream, relay_state->artifacts, emit);
      });
}

StoredTask A2AService::owned_task(std::string_view agent, const bj::value& params_value,
                                  const registry::Caller& caller, const char* method) {
  const auto entry = registry_.get(agent, caller);
  const auto& params = params_object(params_value);
  const auto* id = params.if_contains("id");
  if (!id || !id->is_string() || id->get_string().empty()) {
    throw A2AError(Kind::invalid_params, std::string(method) + " needs params.id, the task id",
                   {bad_request({{"id", "the task id is required"}})});
  }
  auto t = tasks_.get(id->get_string());
  // Another caller's task answers exactly like a missing one (spec §13.1).
  if (!t || t->agent != entry.card->id || t->owner != caller.client_id)
    throw task_not_found(id->get_string());
  return *t;
}

bj::object A2AService::get_task(std::string_view agent, const bj::value& params,
                                const registry::Caller& caller) {
  const auto t = owned_task(agent, params, caller, "GetTask");
  return shown(t.task, int_param(params.as_object(), "historyLength"));
}

bj::object A2AService::list_tasks(std::string_view agent, const bj::value& params_value,
                                  const registry::Caller& caller) {
  const auto entry = registry_.get(agent, caller);
  const auto& params = params_object(params_value);
  TaskStore::Query q;
  q.agent = entry.card->id;
  q.owner = caller.client_id;
  q.context_id = string_at(params, "contextId");
  if (const auto s = string_at(params, "status"); !s.empty() && s != "TASK_STATE_UNSPECIFIED") {
    q.state = state_from_v03(s);
    if (q.state == "TASK_STATE_UNSPECIFIED") {
      throw A2AError(
          Kind::invalid_params, "status \"" + s + "\" is not a TaskState",
          {bad_request({{"status", "expected a TaskState such as TASK_STATE_COMPLETED"}})});
    }
  }
  const auto size = int_param(params, "pageSize").value_or(50);
  if (size < 1 || size > 100) {
    throw A2AError(Kind::invalid_params, "pageSize must be 1 to 100",
                   {bad_request({{"pageSize", "must be between 1 and 100"}})});
  }
  q.page_size = static_cast<std::size_t>(size);
  q.page_token = string_at(params, "pageToken");
  if (const auto after = string_at(params, "statusTimestampAfter"); !after.empty()) {
    const auto ms = util::parse_rfc3339_ms(after);
    if (!ms) {
      throw A2AError(Kind::invalid_params, "statusTimestampAfter must be an RFC 3339 UTC timestamp",
                     {bad_request({{"statusTimestampAfter", "e.g. 2026-11-22T10:30:00.000Z"}})});
    }
    q.updated_after_ms = *ms;
  }
  const auto history = int_param(params, "historyLength");
  const bool with_artifacts = bool_param(params, "includeArtifacts");
  TaskStore::Page page;
  try {
    page = tasks_.list(q);
  } catch (const std::invalid_argument& e) {
    throw A2AError(Kind::invalid_params, e.what(), {bad_request({{"pageToken", e.what()}})});
  }
  bj::array list;
  for (auto& t : page.tasks)
    list.push_back(shown(std::move(t.task), history, with_artifacts));
  return bj::object{{"tasks", std::move(list)},
                    {"nextPageToken", page.next_page_token},
                    {"pageSize", static_cast<std::int64_t>(q.page_size)},
                    {"totalSize", static_cast<std::int64_t>(page.total)}};
}

bj::object A2AService::cancel_task(std::string_view agent, const bj::value& params,
                                   const registry::Caller& caller) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto t = owned_task(agent, params, caller, "CancelTask");
    if (is_terminal(t.state())) {
      throw A2AError(Kind::task_not_cancelable,
                     "task \"" + t.id() + "\" is " + t.state() + " and cannot be canceled", {},
                     bj::object{{"taskId", t.id()}, {"state", t.state()}});
    }
    t.task["status"] = bj::object{{"state", "TASK_STATE_CANCELED"},
                                  {"timestamp", util::format_rfc3339(clock_.now())}};
    try {
      tasks_.save(t);
      return t.task;
    } catch (const store::ConflictError&) {
      // Changed meanwhile: look again.
    }
  }
  throw A2AError(Kind::internal, "the task kept changing while it was being canceled; retry");
}

std::unique_ptr<EventSource> A2AService::subscribe(std::string_view agent, const bj::value& params,
                                                   const registry::Caller& caller) {
  auto t = owned_task(agent, params, caller, "SubscribeToTask");
  if (is_terminal(t.state())) {
    throw A2AError(Kind::unsupported_operation,
                   "task \"" + t.id() + "\" is " + t.state() + ": there is nothing to subscribe to",
                   {}, bj::object{{"taskId", t.id()}, {"state", t.state()}});
  }
  if (++*subscriptions_ > options_.max_subscriptions) {
    --*subscriptions_;
    throw A2AError(Kind::internal, "too many open subscriptions (" +
                                       std::to_string(options_.max_subscriptions) +
                                       "); poll GetTask for task \"" + t.id() + "\" instead");
  }
  return std::make_unique<TaskWatch>(tasks_, std::move(t), subscriptions_);
}

}  // namespace schemagate::a2a
