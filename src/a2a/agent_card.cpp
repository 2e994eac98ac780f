#include "a2a/agent_card.hpp"

#include "registry/agent_card.hpp"

#include <algorithm>

namespace schemagate::a2a {

namespace bj = boost::json;

namespace {

std::string string_at(const bj::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::vector<std::string> strings_at(const bj::object& o, std::string_view key) {
  std::vector<std::string> out;
  if (const auto* v = o.if_contains(key); v && v->is_array()) {
    for (const auto& x : v->get_array()) {
      if (x.is_string()) out.emplace_back(x.get_string());
    }
  }
  return out;
}

bool text_schema(const bj::value& s) {
  if (!s.is_object()) return false;
  const auto* t = s.get_object().if_contains("type");
  return t && t->is_string() && t->get_string() == "string" &&
         !s.get_object().contains("contentEncoding");
}

std::vector<FieldDefinition> fields_from_json(const bj::value& list) {
  std::vector<FieldDefinition> out;
  for (const auto& f : list.as_array()) {
    if (!f.is_object()) continue;
    const auto& o = f.get_object();
    FieldDefinition d;
    d.name = string_at(o, "name");
    d.kind = string_at(o, "kind");
    d.mime_types = strings_at(o, "mimeTypes");
    if (const auto* s = o.if_contains("schema")) d.schema = *s;
    d.description = string_at(o, "description");
    if (const auto* opt = o.if_contains("optional"); opt && opt->is_bool())
      d.optional = opt->get_bool();
    out.push_back(std::move(d));
  }
  return out;
}

bj::array to_array(const std::vector<std::string>& v) {
  bj::array out;
  for (const auto& s : v)
    out.emplace_back(s);
  return out;
}

}  // namespace

bool says_nothing(const bj::value& s) {
  return s.is_null() || (s.is_object() && s.get_object().empty()) || (s.is_bool() && s.get_bool());
}

bj::object FieldDefinition::to_json() const {
  bj::object o{{"name", name}, {"kind", kind}};
  if (!mime_types.empty()) o["mimeTypes"] = to_array(mime_types);
  if (!schema.is_null()) o["schema"] = schema;
  if (!description.empty()) o["description"] = description;
  o["optional"] = optional;
  return o;
}

std::vector<FieldDefinition> fields_from_schema(const bj::value& schema) {
  std::vector<FieldDefinition> out;
  if (!schema.is_object()) return out;
  const auto* props = schema.get_object().if_contains("properties");
  if (!props || !props->is_object()) return out;
  std::vector<std::string> required;
  if (const auto* r = schema.get_object().if_contains("required"); r && r->is_array()) {
    for (const auto& x : r->get_array()) {
      if (x.is_string()) required.emplace_back(x.get_string());
    }
  }
  for (const auto& kv : props->get_object()) {
    FieldDefinition d;
    d.name = kv.key();
    const bool text = text_schema(kv.value());
    d.kind = text ? "text" : "data";
    d.mime_types = {text ? "text/plain" : "application/json"};
    d.schema = kv.value();
    if (kv.value().is_object()) d.description = string_at(kv.value().get_object(), "description");
    d.optional = std::find(required.begin(), required.end(), d.name) == required.end();
    out.push_back(std::move(d));
  }
  return out;
}

const FieldDefinition* Skill::text_field() const {
  // Seed 000's reserved `other` key is where free text goes.
  for (const auto& f : input_fields) {
    if (f.name == "other" && f.kind == "text") return &f;
  }
  const auto texts = [&](bool required_only) {
    std::vector<const FieldDefinition*> out;
    for (const auto& f : input_fields) {
      if (f.kind == "text" && (!required_only || !f.optional)) out.push_back(&f);
    }
    return out;
  };
  if (const auto required = texts(true); !required.empty()) {
    return required.size() == 1 ? required.front() : nullptr;
  }
  // Nothing textual is required: a lone optional text field will do when nothing else is.
  const bool any_required = std::any_of(input_fields.begin(), input_fields.end(),
                                        [](const FieldDefinition& f) { return !f.optional; });
  const auto optional = texts(false);
  return !any_required && optional.size() == 1 ? optional.front() : nullptr;
}

const Skill* AgentProfile::skill_for_input_schema(std::string_view name) const {
  for (const auto& s : skills) {
    if (!s.input_schema_name.empty() && s.input_schema_name == name) return &s;
  }
  return nullptr;
}

const Skill* AgentProfile::skill(std::string_view id) const {
  for (const auto& s : skills) {
    if (s.operation == id) return &s;
  }
  return nullptr;
}

std::string AgentProfile::input_schema_names() const {
  std::string out;
  for (const auto& s : skills) {
    if (s.input_schema_name.empty()) continue;
    out += (out.empty() ? "" : ", ") + s.input_schema_name;
  }
  return out;
}

AgentProfile profile_of(const registry::AgentCard& card,
                        const std::function<bj::value(const std::string&)>& scenario_schema) {
  AgentProfile p;
  p.agent_id = card.id;
  p.upstream_a2a = card.speaks_a2a();
  for (const auto& op : card.operations) {
    Skill s;
    s.operation = op.name;
    s.name = op.name;
    s.description = op.description.empty() ? card.description : op.description;
    s.tags = card.tags;
    s.input_schema = op.input_schema;
    if (!op.scenario.empty() && scenario_schema) s.input_schema = scenario_schema(op.scenario);
    s.output_schema = op.output_schema;
    if (!says_nothing(s.input_schema)) s.input_schema_name = op.input_schema_name;
    if (!says_nothing(s.output_schema)) s.output_schema_name = op.output_schema_name;
    s.input_fields = op.input_fields.is_array() ? fields_from_json(op.input_fields)
                                                : fields_from_schema(s.input_schema);
    s.output_fields = op.output_fields.is_array() ? fields_from_json(op.output_fields)
                                                  : fields_from_schema(s.output_schema);
    if (!s.input_schema_name.empty()) p.schemas[s.input_schema_name] = s.input_schema;
    if (!s.output_schema_name.empty()) p.schemas[s.output_schema_name] = s.output_schema;
    p.skills.push_back(std::move(s));
  }
  // A fronted agent's skills keep the names, tags and examples its own card gave them.
  if (const auto* a2a = card.raw.if_contains("a2a_card"); a2a && a2a->is_object()) {
    if (const auto* skills = a2a->get_object().if_contains("skills");
        skills && skills->is_array()) {
      for (const auto& sk : skills->get_array()) {
        if (!sk.is_object()) continue;
        const auto& o = sk.get_object();
        for (auto& s : p.skills) {
          if (s.operation != string_at(o, "id")) continue;
          if (auto n = string_at(o, "name"); !n.empty()) s.name = n;
          if (auto t = strings_at(o, "tags"); !t.empty()) s.tags = t;
          s.examples = strings_at(o, "examples");
        }
      }
    }
  }
  return p;
}

bj::object agent_card(const AgentProfile& profile, const registry::AgentCard& card,
                      const CardContext& context, WireVersion version) {
  const std::string url = context.base_url + "/a2a/" + card.id;
  std::string agent_version = "1.0.0";
  if (const auto* v = card.raw.if_contains("version");
      v && v->is_string() && !v->get_string().empty()) {
    agent_version = std::string(v->get_string());
  }
  bj::array skills;
  bool any_text = false;
  for (const auto& s : profile.skills) {
    bj::array in_modes, out_modes, in_fields, out_fields;
    // Seed 001 recommends text/plain beside the schema: offered where a text can fill the input.
    // Text parts can fill a text field: plain text the skill's one text field, or parts named
    // after their fields (seed 002).
    const bool text = std::any_of(s.input_fields.begin(), s.input_fields.end(),
                                  [](const FieldDefinition& f) { return f.kind == "text"; }) ||
                      (profile.upstream_a2a && s.input_schema_name.empty());
    any_text = any_text || text;
    if (text) in_modes.emplace_back("text/plain");
    if (!s.input_schema_name.empty()) in_modes.emplace_back(schema_media_type(s.input_schema_name));
    if (in_modes.empty()) in_modes.emplace_back("application/json");
    if (!s.output_schema_name.empty())
      out_modes.emplace_back(schema_media_type(s.output_schema_name));
    out_modes.emplace_back("application/json");
    if (std::any_of(s.output_fields.begin(), s.output_fields.end(),
                    [](const FieldDefinition& f) { return f.kind == "text"; })) {
      out_modes.emplace_back("text/plain");
    }
    for (const auto& f : s.input_fields)
      in_fields.push_back(f.to_json());
    for (const auto& f : s.output_fields)
      out_fields.push_back(f.to_json());
    bj::object skill{{"id", s.operation},
                     {"name", s.name},
                     {"description", s.description},
                     {"tags", to_array(s.tags)}};
    if (!s.examples.empty()) skill["examples"] = to_array(s.examples);
    skill["inputModes"] = std::move(in_modes);
    skill["outputModes"] = std::move(out_modes);
    if (!in_fields.empty()) skill["inputFields"] = std::move(in_fields);
    if (!out_fields.empty()) skill["outputFields"] = std::move(out_fields);
    skills.push_back(std::move(skill));
  }
  bj::array default_in;
  if (any_text) default_in.emplace_back("text/plain");
  default_in.emplace_back("application/json");
  const bj::array default_out{"application/json", "text/plain"};
  bj::object extension{
      {"uri", kSchemasExtension},
      {"description",
       "Structured input and output: send a data part whose media type is "
       "application/json;schema=<name> to run the skill that accepts that schema; results "
       "come back as data artifacts tagged with their output schema"},
      {"required", false},
      {"params", bj::object{{"schemas", profile.schemas}}}};
  bj::object capabilities{{"streaming", true},
                          {"pushNotifications", false},
                          {"extensions", bj::array{std::move(extension)}}};
  bj::object out;
  out["name"] = card.name;
  out["description"] = card.description;
  if (version == WireVersion::v0_3 || context.with_v03_fields) {
    out["protocolVersion"] = "0.3.0";
    out["url"] = url;
    out["preferredTransport"] = "JSONRPC";
    out["additionalInterfaces"] = bj::array{bj::object{{"url", url}, {"transport", "JSONRPC"}}};
  }
  if (version == WireVersion::v1_0) {
    out["supportedInterfaces"] = bj::array{
        bj::object{{"url", url}, {"protocolBinding", "JSONRPC"}, {"protocolVersion", "1.0"}},
        bj::object{{"url", url}, {"protocolBinding", "HTTP+JSON"}, {"protocolVersion", "1.0"}},
        bj::object{{"url", url}, {"protocolBinding", "JSONRPC"}, {"protocolVersion", "0.3"}}};
  }
  if (!card.provider.empty()) {
    std::string provider_url = context.base_url;
    if (const auto* u = card.raw.if_contains("provider_url"); u && u->is_string()) {
      provider_url = std::string(u->get_string());
    }
    out["provider"] = bj::object{{"organization", card.provider}, {"url", provider_url}};
  }
  out["version"] = agent_version;
  out["capabilities"] = std::move(capabilities);
  if (context.requires_key) {
    const char* description = "a schemagate API key, sent as Authorization: Bearer <key>";
    if (version == WireVersion::v0_3) {
      out["securitySchemes"] = bj::object{
          {"schemagate",
           bj::object{{"type", "http"}, {"scheme", "bearer"}, {"description", description}}}};
      out["security"] = bj::array{bj::object{{"schemagate", bj::array{}}}};
    } else {
      out["securitySchemes"] = bj::object{
          {"schemagate",
           bj::object{{"httpAuthSecurityScheme",
                       bj::object{{"scheme", "Bearer"}, {"description", description}}}}}};
      out["securityRequirements"] = bj::array{
          bj::object{{"schemes", bj::object{{"schemagate", bj::object{{"list", bj::array{}}}}}}}};
    }
  }
  out["defaultInputModes"] = std::move(default_in);
  out["defaultOutputModes"] = default_out;
  out["skills"] = std::move(skills);
  out["schemas"] = profile.schemas;  // seed 001's root map
  return out;
}

}  // namespace schemagate::a2a
