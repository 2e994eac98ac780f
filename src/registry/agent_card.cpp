#include "registry/agent_card.hpp"

#include "versioning/semver.hpp"

#include "json/pointer.hpp"
#include "jsonschema/schema.hpp"
#include "util/text.hpp"

#include <boost/url/parse.hpp>

#include <algorithm>
#include <cctype>

namespace schemagate::registry {

namespace bj = boost::json;

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains_lower(const std::vector<std::string>& list, std::string_view wanted) {
  const std::string w = lower(wanted);
  return std::any_of(list.begin(), list.end(), [&](const std::string& s) { return lower(s) == w; });
}

bool id_ok(std::string_view id) {
  if (id.empty() || id.size() > 512) return false;
  const bool slug = id.size() <= 128 && std::isalnum(static_cast<unsigned char>(id[0])) &&
                    std::all_of(id.begin(), id.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                             c == '.' || c == '~';
                    });
  if (slug) return true;
  const auto uri = boost::urls::parse_uri(id);  // URIs: urn:..., https://...
  return uri.has_value();
}

bool http_url(std::string_view s) {
  const auto u = boost::urls::parse_uri(s);
  return u && (u->scheme() == "http" || u->scheme() == "https") && !u->host().empty();
}

constexpr std::string_view kSimpleTypes[] = {"string", "number", "integer", "boolean",
                                             "array",  "object", "null"};

class CardReader {
 public:
  std::vector<CardProblem> problems;
  void problem(std::string path, std::string message) {
    problems.push_back({std::move(path), std::move(message)});
  }

  std::string text(const bj::object& o, std::string_view key, bool required, std::size_t max,
                   const std::string& base = "") {
    const std::string path = base + "/" + json::escape_token(key);
    const auto* v = o.if_contains(key);
    if (!v || v->is_null()) {
      if (required) problem(path, std::string(key) + " is required");
      return {};
    }
    if (!v->is_string()) {
      problem(path, std::string(key) + " must be a string");
      return {};
    }
    if (required && v->get_string().empty()) problem(path, std::string(key) + " must not be empty");
    if (util::char_count(v->get_string()) > max) {
      problem(path, std::string(key) + " is longer than " + std::to_string(max) + " characters");
    }
    return std::string(v->get_string());
  }

  std::vector<std::string> strings(const bj::object& o, std::string_view key) {
    std::vector<std::string> out;
    const auto* v = o.if_contains(key);
    if (!v || v->is_null()) return out;
    const std::string path = "/" + std::string(key);
    if (!v->is_array()) {
      problem(path, std::string(key) + " must be an array of strings");
      return out;
    }
    for (std::size_t i = 0; i < v->get_array().size(); ++i) {
      const auto& s = v->get_array()[i];
      if (!s.is_string() || s.get_string().empty()) {
        problem(path + "/" + std::to_string(i), "must be a non-empty string");
      } else {
        out.emplace_back(s.get_string());
      }
    }
    return out;
  }

  bj::value schema(const bj::value& v, const std::string& path) {
    try {
      jsonschema::Schema::compile(v);
      return v;
    } catch (const jsonschema::SchemaError& e) {
      problem(path, std::string("not a valid JSON Schema: ") + e.what());
      return nullptr;
    }
  }

  // {"text": "string", ...} -> an object schema requiring every listed field.
  bj::value simple_schema(const bj::value& v, const std::string& path) {
    if (!v.is_object()) {
      problem(path, "must map field names to type names, e.g. {\"text\": \"string\"}");
      return nullptr;
    }
    bj::object props;
    bj::array required;
    for (const auto& kv : v.get_object()) {
      const auto* t = kv.value().if_string();
      if (!t || std::find(std::begin(kSimpleTypes), std::end(kSimpleTypes), std::string_view(*t)) ==
                    std::end(kSimpleTypes)) {
        problem(path + "/" + json::escape_token(kv.key()),
                "must be a JSON type name (string, number, integer, boolean, array, object, null)");
        continue;
      }
      props[kv.key()] = bj::object{{"type", *t}};
      required.push_back(bj::value(kv.key()));
    }
    return bj::object{
        {"type", "object"}, {"properties", std::move(props)}, {"required", std::move(required)}};
  }
};

}  // namespace

bool AgentCard::has_capability(std::string_view c) const {
  return contains_lower(capabilities, c);
}
bool AgentCard::has_tag(std::string_view t) const {
  return contains_lower(tags, t);
}
bool AgentCard::speaks_a2a() const {
  return contains_lower(protocols, "a2a");
}

std::string AgentCard::a2a_version() const {
  if (const auto* v = raw.if_contains("a2a_protocol_version"); v && v->is_string()) {
    return std::string(v->get_string());
  }
  return "1.0";
}

bool AgentCard::supports_language(std::string_view l) const {
  if (contains_lower(supported_languages, l)) return true;
  // "zh" also matches an agent that lists "zh-CN".
  const std::string w = lower(l);
  return std::any_of(supported_languages.begin(), supported_languages.end(),
                     [&](const std::string& s) {
                       const std::string ls = lower(s);
                       return ls.starts_with(w + "-") || w.starts_with(ls + "-");
                     });
}

std::variant<AgentCard, std::vector<CardProblem>> parse_agent_card(const bj::value& body,
                                                                   const CardLimits& limits) {
  CardReader r;
  AgentCard card;
  if (!body.is_object()) {
    r.problem("", "an agent card must be a JSON object");
    return r.problems;
  }
  const auto& o = body.get_object();
  card.raw = o;
  card.id = r.text(o, "id", true, 512);
  if (!card.id.empty() && !id_ok(card.id)) {
    r.problem("/id", "id must be a slug (letters, digits, '-', '_', '.', '~'), a UUID or a URI");
  }
  card.name = r.text(o, "name", true, limits.name_chars);
  card.description = r.text(o, "description", true, limits.description_chars);
  card.capabilities = r.strings(o, "capabilities");
  card.tags = r.strings(o, "tags");
  card.supported_languages = r.strings(o, "supported_languages");
  card.protocols = r.strings(o, "protocols");
  card.provider = r.text(o, "provider", false, 200);
  card.authentication = r.text(o, "authentication", false, 100);
  for (const char* k : {"version", "license", "last_update"})
    r.text(o, k, false, 200);
  if (const auto* c = o.if_contains("certification"); c && !c->is_object() && !c->is_null()) {
    r.problem("/certification", "certification must be an object");
  }
  card.endpoint = r.text(o, "endpoint", false, 2048);
  if (!card.endpoint.empty() && !http_url(card.endpoint)) {
    r.problem("/endpoint", "endpoint must be an http:// or https:// URL");
  }
  if (const auto* v = o.if_contains("visibility"); v && !v->is_null()) {
    if (v->is_string() && v->get_string() == "public") {
      card.is_public = true;
    } else if (v->is_object()) {
      card.is_public = false;
      for (const char* k : {"clients", "groups"}) {
        if (const auto* list = v->get_object().if_contains(k)) {
          if (!list->is_array() || !std::all_of(list->get_array().begin(), list->get_array().end(),
                                                [](const bj::value& x) { return x.is_string(); })) {
            r.problem(std::string("/visibility/") + k,
                      std::string(k) + " must be an array of strings");
            continue;
          }
          auto& dest = k[0] == 'c' ? card.visible_to_clients : card.visible_to_groups;
          for (const auto& x : list->get_array())
            dest.emplace_back(x.get_string());
        }
      }
    } else {
      r.problem("/visibility",
                "visibility must be \"public\" or {\"clients\": [...], \"groups\": [...]}");
    }
  }
  if (const auto* ops = o.if_contains("operations"); ops && !ops->is_null()) {
    if (!ops->is_array()) {
      r.problem("/operations", "operations must be an array");
    } else {
      for (std::size_t i = 0; i < ops->get_array().size(); ++i) {
        const std::string path = "/operations/" + std::to_string(i);
        const auto& ov = ops->get_array()[i];
        if (!ov.is_object()) {
          r.problem(path, "an operation must be an object");
          continue;
        }
        const auto& op = ov.get_object();
        Operation out;
        out.name = r.text(op, "name", true, std::min<std::size_t>(128, limits.name_chars), path);
        out.description = r.text(op, "description", false, limits.description_chars, path);
        out.scenario = r.text(op, "scenario", false, 128, path);
        out.endpoint = r.text(op, "endpoint", false, 2048, path);
        if (!out.endpoint.empty() && !http_url(out.endpoint)) {
          r.problem(path + "/endpoint", "endpoint must be an http:// or https:// URL");
        }
        if (out.endpoint.empty()) out.endpoint = card.endpoint;
        out.version = r.text(op, "version", false, 64, path);
        if (!out.version.empty() && !versioning::SemVer::parse(out.version)) {
          r.problem(path + "/version",
                    "version must be a semantic version (MAJOR.MINOR.PATCH), not \"" + out.version +
                        "\"");
        }
        out.input_schema_name = r.text(op, "input_schema_name", false, 128, path);
        out.output_schema_name = r.text(op, "output_schema_name", false, 128, path);
        if (out.input_schema_name.empty()) out.input_schema_name = out.name + ".input";
        if (out.output_schema_name.empty()) out.output_schema_name = out.name + ".output";
        for (const char* k : {"input_fields", "output_fields"}) {
          if (const auto* f = op.if_contains(k); f && !f->is_null()) {
            if (!f->is_array()) {
              r.problem(path + "/" + k, std::string(k) + " must be an array of FieldDefinitions");
              continue;
            }
            (k[0] == 'i' ? out.input_fields : out.output_fields) = *f;
          }
        }
        if (const auto* s = op.if_contains("input_schema"))
          out.input_schema = r.schema(*s, path + "/input_schema");
        if (const auto* s = op.if_contains("output_schema"))
          out.output_schema = r.schema(*s, path + "/output_schema");
        if (out.scenario.empty() && out.input_schema.is_null() && !op.contains("input_schema")) {
          r.problem(path,
                    "an operation needs input_schema (and optionally output_schema) or a scenario");
        }
        if (std::any_of(card.operations.begin(), card.operations.end(),
                        [&](const Operation& x) { return x.name == out.name; })) {
          r.problem(path + "/name", "duplicate operation name \"" + out.name + "\"");
        }
        card.operations.push_back(std::move(out));
      }
    }
  }
  if (o.contains("inputs") || o.contains("outputs")) {
    Operation simple;
    simple.name = "default";
    simple.description = card.description;
    simple.endpoint = card.endpoint;
    simple.input_schema_name = "default.input";
    simple.output_schema_name = "default.output";
    if (const auto* in = o.if_contains("inputs"))
      simple.input_schema = r.simple_schema(*in, "/inputs");
    if (const auto* out = o.if_contains("outputs"))
      simple.output_schema = r.simple_schema(*out, "/outputs");
    if (card.operations.empty()) card.operations.push_back(std::move(simple));
  }
  for (std::size_t i = 0; i < card.operations.size(); ++i) {
    if (card.operations[i].endpoint.empty()) {
      r.problem(
          o.contains("operations") ? "/operations/" + std::to_string(i) + "/endpoint" : "/endpoint",
          "no endpoint: give the operation's URL or the card's endpoint");
    }
  }
  if (!r.problems.empty()) return r.problems;
  return card;
}

}  // namespace schemagate::registry
