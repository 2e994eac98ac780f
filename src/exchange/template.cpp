#include "exchange/template.hpp"

#include "json/pointer.hpp"
#include "jsonschema/schema.hpp"
#include "versioning/semver.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>
#include <set>

namespace schemagate::exchange {

namespace bj = boost::json;

namespace {

constexpr std::string_view kTypes[] = {"string", "integer", "number", "boolean",
                                       "array",  "object",  "null"};

// Constraint keywords a key may carry, and the types they make sense for ("" = any type).
struct Constraint {
  std::string_view keyword;
  std::string_view types;
};
constexpr Constraint kConstraints[] = {
    {"enum", ""},
    {"const", ""},
    {"minimum", "integer number"},
    {"maximum", "integer number"},
    {"exclusiveMinimum", "integer number"},
    {"exclusiveMaximum", "integer number"},
    {"multipleOf", "integer number"},
    {"minLength", "string"},
    {"maxLength", "string"},
    {"pattern", "string"},
    {"format", "string"},
    {"items", "array"},
    {"minItems", "array"},
    {"maxItems", "array"},
    {"uniqueItems", "array"},
    {"properties", "object"},
    {"additionalProperties", "object"},
};

constexpr std::string_view kKeyFields[] = {"key_name",   "key_type",      "semantic_description",
                                           "required",   "default_value", "experimental",
                                           "deprecated", "examples"};

constexpr std::string_view kTemplateFields[] = {
    "schema_id",       "scenario", "version",          "keys",
    "response_schema", "endpoint", "default_language", "accepts_patch_keys"};

bool snake_case(std::string_view s) {
  if (s.empty() || !std::islower(static_cast<unsigned char>(s[0]))) return false;
  char prev = 0;
  for (char c : s) {
    const bool ok = std::islower(static_cast<unsigned char>(c)) ||
                    std::isdigit(static_cast<unsigned char>(c)) || c == '_';
    if (!ok || (c == '_' && prev == '_')) return false;
    prev = c;
  }
  return s.back() != '_';
}

bool known_type(std::string_view t) {
  return std::find(std::begin(kTypes), std::end(kTypes), t) != std::end(kTypes);
}

std::string primary_subtag(std::string_view tag) {
  std::string out(tag.substr(0, tag.find_first_of("-_")));
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool same_tag(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x =
        a[i] == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(a[i])));
    const char y =
        b[i] == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(b[i])));
    if (x != y) return false;
  }
  return true;
}

}  // namespace

std::string pick_description(const bj::value& description, std::string_view preferred,
                             std::string_view fallback_language, std::string* chosen) {
  if (description.is_string()) {
    if (chosen) *chosen = std::string(fallback_language);
    return std::string(description.get_string());
  }
  if (!description.is_object() || description.get_object().empty()) return {};
  const auto& map = description.get_object();
  auto take = [&](const bj::key_value_pair& kv) {
    if (chosen) *chosen = std::string(kv.key());
    return std::string(kv.value().as_string());
  };
  if (!preferred.empty()) {
    for (const auto& kv : map) {
      if (same_tag(kv.key(), preferred)) return take(kv);
    }
    const std::string primary = primary_subtag(preferred);
    for (const auto& kv : map) {
      if (same_tag(kv.key(), primary)) return take(kv);
    }
    for (const auto& kv : map) {
      if (primary_subtag(kv.key()) == primary) return take(kv);
    }
  }
  for (const auto& kv : map) {
    if (same_tag(kv.key(), fallback_language)) return take(kv);
  }
  return take(*map.begin());
}

bj::object KeyDefinition::to_json() const {
  bj::object o{{"key_name", name},
               {"key_type", type},
               {"required", required},
               {"semantic_description", description}};
  if (default_value) o["default_value"] = *default_value;
  for (const auto& kv : constraints)
    o[kv.key()] = kv.value();
  if (experimental) o["experimental"] = true;
  if (deprecated) o["deprecated"] = true;
  return o;
}

bj::object KeyDefinition::value_schema(std::string_view language) const {
  bj::object s{{"type", type}};
  const std::string text = pick_description(description, language, language);
  if (!text.empty()) s["description"] = text;
  if (default_value) s["default"] = *default_value;
  if (deprecated) s["deprecated"] = true;
  for (const auto& kv : constraints)
    s[kv.key()] = kv.value();
  return s;
}

const KeyDefinition* Template::key(std::string_view name) const {
  for (const auto& k : keys) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

bj::object Template::to_json() const {
  bj::array list;
  for (const auto& k : keys)
    list.push_back(k.to_json());
  bj::object o{{"schema_id", schema_id},
               {"scenario", scenario},
               {"version", version},
               {"default_language", default_language},
               {"keys", std::move(list)}};
  if (response_schema) o["response_schema"] = *response_schema;
  return o;
}

bj::object Template::json_schema() const {
  bj::object properties;
  bj::array required;
  for (const auto& k : keys) {
    properties[k.name] = k.value_schema(default_language);
    if (k.required) required.push_back(bj::value(k.name));
  }
  bj::object s{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
               {"$id", "urn:schemagate:template:" + schema_id},
               {"title", scenario + " payload (" + schema_id + ", " + version + ")"},
               {"type", "object"},
               {"properties", std::move(properties)},
               {"additionalProperties", false}};
  if (!required.empty()) s["required"] = std::move(required);
  return s;
}

bj::object Template::negotiated(std::string_view preferred_language, std::string& language) const {
  bj::array list;
  language = default_language;
  bool chose = false;
  for (const auto& k : keys) {
    bj::object o = k.to_json();
    std::string picked;
    o["semantic_description"] =
        pick_description(k.description, preferred_language, default_language, &picked);
    if (!chose && k.description.is_object()) {
      language = picked;
      chose = true;
    }
    list.push_back(std::move(o));
  }
  bj::object out{{"schema_id", schema_id},
                 {"scenario", scenario},
                 {"version", version},
                 {"language", language},
                 {"keys", std::move(list)}};
  if (response_schema) out["response_schema"] = *response_schema;
  return out;
}

namespace {

class TemplateReader {
 public:
  std::vector<TemplateProblem> problems;

  void problem(std::string path, std::string message) {
    problems.push_back({std::move(path), std::move(message)});
  }

  std::optional<KeyDefinition> key(const bj::value& v, const std::string& path) {
    if (!v.is_object()) {
      problem(path, "a key definition must be an object");
      return std::nullopt;
    }
    const auto& o = v.get_object();
    const std::size_t before = problems.size();
    for (const auto& kv : o) {
      const auto f = kv.key();
      const bool known =
          std::find(std::begin(kKeyFields), std::end(kKeyFields), f) != std::end(kKeyFields) ||
          std::any_of(std::begin(kConstraints), std::end(kConstraints),
                      [&](const Constraint& c) { return c.keyword == f; });
      if (!known)
        problem(path + "/" + json::escape_token(f), "unknown field \"" + std::string(f) + "\"");
    }
    KeyDefinition k;
    if (const auto* n = o.if_contains("key_name"); !n || !n->is_string()) {
      problem(path + "/key_name", "key_name is required and must be a string");
    } else {
      k.name = n->get_string();
      if (!snake_case(k.name)) {
        problem(path + "/key_name", "key_name \"" + k.name + "\" is not snake_case");
      }
    }
    if (const auto* t = o.if_contains("key_type"); !t || !t->is_string()) {
      problem(path + "/key_type", "key_type is required and must be a string");
    } else {
      k.type = t->get_string();
      if (!known_type(k.type)) {
        problem(path + "/key_type", "unknown key_type \"" + k.type +
                                        "\" (use string, integer, number, boolean, array, "
                                        "object or null)");
      }
    }
    if (const auto* d = o.if_contains("semantic_description")) {
      if (d->is_string() && !d->get_string().empty()) {
        k.description = *d;
      } else if (d->is_object() && !d->get_object().empty() &&
                 std::all_of(d->get_object().begin(), d->get_object().end(), [](const auto& kv) {
                   return kv.value().is_string() && !kv.value().get_string().empty();
                 })) {
        k.description = *d;
      } else {
        problem(path + "/semantic_description",
                "semantic_description must be a non-empty string or a map of language tags to "
                "non-empty strings");
      }
    } else {
      problem(path + "/semantic_description", "semantic_description is required");
    }
    if (const auto* r = o.if_contains("required"); !r || !r->is_bool()) {
      problem(path + "/required", "required is required and must be a boolean");
    } else {
      k.required = r->get_bool();
    }
    for (const char* flag : {"experimental", "deprecated"}) {
      if (const auto* f = o.if_contains(flag)) {
        if (!f->is_bool())
          problem(path + "/" + flag, std::string(flag) + " must be a boolean");
        else
          (flag[0] == 'e' ? k.experimental : k.deprecated) = f->get_bool();
      }
    }
    for (const auto& c : kConstraints) {
      const auto* v2 = o.if_contains(c.keyword);
      if (!v2) continue;
      if (!c.types.empty() && known_type(k.type) &&
          std::string_view(c.types).find(k.type) == std::string_view::npos) {
        problem(path + "/" + std::string(c.keyword),
                std::string(c.keyword) + " does not apply to a key of type " + k.type);
        continue;
      }
      k.constraints[c.keyword] = *v2;
    }
    // A lower bound above its upper bound leaves no value a client could send.
    for (const auto& [low, high] :
         {std::pair{"minimum", "maximum"}, std::pair{"minLength", "maxLength"},
          std::pair{"minItems", "maxItems"}}) {
      const auto *a = k.constraints.if_contains(low), *b = k.constraints.if_contains(high);
      if (a && b && a->is_number() && b->is_number() &&
          a->to_number<double>() > b->to_number<double>()) {
        problem(path + "/" + low,
                std::string(low) + " is above " + high + ": no value can satisfy the key");
      }
    }
    if (problems.size() != before) return std::nullopt;
    // The key's own schema must compile, and its default must satisfy it.
    try {
      jsonschema::CompileOptions opts;
      opts.assert_format = true;
      const auto schema = jsonschema::Schema::compile(k.value_schema("en"), opts);
      if (const auto* d = o.if_contains("default_value"); d && !d->is_null()) {
        const auto result = schema.evaluate(*d);
        if (!result.valid) {
          problem(path + "/default_value",
                  "default_value " + bj::serialize(*d) +
                      " does not satisfy the key: " + result.errors.front().error);
        } else {
          k.default_value = *d;
        }
      }
    } catch (const jsonschema::SchemaError& e) {
      problem(path, std::string("constraints do not form a valid schema: ") + e.what());
    }
    return k;
  }
};

}  // namespace

std::variant<Template, std::vector<TemplateProblem>> parse_template(const bj::value& body,
                                                                    std::string_view scenario,
                                                                    std::string_view version) {
  TemplateReader r;
  Template t;
  if (!body.is_object()) {
    r.problem("", "a template must be a JSON object");
    return r.problems;
  }
  const auto& o = body.get_object();
  for (const auto& kv : o) {
    if (std::find(std::begin(kTemplateFields), std::end(kTemplateFields), kv.key()) ==
        std::end(kTemplateFields)) {
      r.problem("/" + json::escape_token(kv.key()),
                "unknown field \"" + std::string(kv.key()) + "\"");
    }
  }
  if (!versioning::SemVer::parse(version)) {
    r.problem("",
              "version \"" + std::string(version) + "\" is not a semantic version (e.g. 1.0.0)");
  }
  t.version = version;
  if (const auto* v = o.if_contains("version");
      v && !(v->is_string() && v->get_string() == std::string(version).c_str())) {
    r.problem("/version", "version must be \"" + std::string(version) + "\", as in the URL");
  }
  if (const auto* id = o.if_contains("schema_id");
      !id || !id->is_string() || id->get_string().empty()) {
    r.problem("/schema_id", "schema_id is required and must be a non-empty string");
  } else {
    t.schema_id = id->get_string();
  }
  t.scenario = scenario;
  if (const auto* s = o.if_contains("scenario"); !s || !s->is_string()) {
    r.problem("/scenario", "scenario is required and must be a string");
  } else if (s->get_string() != std::string(scenario).c_str()) {
    r.problem("/scenario", "scenario \"" + std::string(s->get_string()) + "\" does not match \"" +
                               std::string(scenario) + "\" in the URL");
  }
  if (const auto* l = o.if_contains("default_language")) {
    if (!l->is_string() || l->get_string().empty()) {
      r.problem("/default_language", "default_language must be a language tag such as \"en\"");
    } else {
      t.default_language = l->get_string();
    }
  }
  if (const auto* e = o.if_contains("endpoint")) {
    const std::string_view url = e->is_string() ? std::string_view(e->get_string()) : "";
    if (!url.starts_with("http://") && !url.starts_with("https://")) {
      r.problem("/endpoint", "endpoint must be an http:// or https:// URL");
    } else {
      t.endpoint = url;
    }
  }
  if (const auto* a = o.if_contains("accepts_patch_keys")) {
    if (!a->is_bool()) {
      r.problem("/accepts_patch_keys", "accepts_patch_keys must be true or false");
    } else {
      t.accepts_patch_keys = a->get_bool();
    }
  }
  if (const auto* rs = o.if_contains("response_schema")) {
    try {
      jsonschema::Schema::compile(*rs);
      t.response_schema = *rs;
    } catch (const jsonschema::SchemaError& e) {
      r.problem("/response_schema",
                std::string("response_schema is not a valid schema: ") + e.what());
    }
  }
  const auto* keys = o.if_contains("keys");
  if (!keys || !keys->is_array() || keys->get_array().empty()) {
    r.problem("/keys", "keys is required and must be a non-empty array of key definitions");
    return r.problems;
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < keys->get_array().size(); ++i) {
    const std::string path = "/keys/" + std::to_string(i);
    const auto& raw = keys->get_array()[i];
    // Duplicates are found even among keys that have other problems.
    if (const auto* n = raw.is_object() ? raw.get_object().if_contains("key_name") : nullptr;
        n && n->is_string() && !seen.insert(std::string(n->get_string())).second) {
      r.problem(path + "/key_name", "duplicate key_name \"" + std::string(n->get_string()) + "\"");
      continue;
    }
    auto k = r.key(raw, path);
    if (!k) continue;
    if (k->name == kOtherKey &&
        (k->type != "string" || k->required || !k->constraints.empty() || k->default_value)) {
      r.problem(path,
                "the reserved key \"other\" must stay an optional string without "
                "constraints or default (seed 000 §4.3)");
      continue;
    }
    t.keys.push_back(std::move(*k));
  }
  if (!r.problems.empty()) return r.problems;
  if (!t.key(kOtherKey)) {
    KeyDefinition other;
    other.name = std::string(kOtherKey);
    other.type = "string";
    other.description =
        "Natural-language fragments that no other key can carry. Example: 'window seat' -> "
        "'window seat'.";
    t.keys.push_back(std::move(other));
  }
  return t;
}

std::variant<KeyDefinition, std::vector<TemplateProblem>> parse_key_definition(
    const bj::value& key) {
  TemplateReader r;
  auto k = r.key(key, "");
  if (!r.problems.empty() || !k) return r.problems;
  return std::move(*k);
}

}  // namespace schemagate::exchange
