#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace schemagate::exchange {

// One key of a schema template (seed 000 §4.1), with the JSON Schema constraints its publisher
// uses to make the semantic description enforceable.
struct KeyDefinition {
  std::string name;
  std::string type;                // a JSON Schema type name
  boost::json::value description;  // a string, or {"en": ..., "zh": ...}
  bool required = false;
  std::optional<boost::json::value> default_value;  // absent (or null) = no default
  boost::json::object constraints;                  // enum, minimum, pattern, items, ...
  bool experimental = false;                        // added by a patch, on trial (§6.2.3)
  bool deprecated = false;

  boost::json::object to_json() const;
  // The JSON Schema of this key's value.
  boost::json::object value_schema(std::string_view language) const;
};

struct Template {
  std::string schema_id;
  std::string scenario;
  std::string version = "1.0.0";
  std::string default_language = "en";
  std::vector<KeyDefinition> keys;  // always includes the reserved "other"
  std::optional<boost::json::value> response_schema;
  // The agent's HTTP endpoint, when the publish body names one. It is a binding of the
  // scenario, not part of the immutable version: to_json() leaves it out.
  std::string endpoint;
  // Part of the same binding: whether that agent understands keys added by patches. When it
  // does not, their values reach it folded into `other` as text (seed 000 §4.3).
  bool accepts_patch_keys = false;

  const KeyDefinition* key(std::string_view name) const;
  boost::json::object to_json() const;  // the stored, publishable form
  // JSON Schema 2020-12 for payloads: every key's constraints, required keys, nothing else.
  boost::json::object json_schema() const;
  // The negotiation view (seed 000 Figure 7): one description language, chosen from
  // `preferred_language` (exact tag, then primary subtag, then the template's default).
  boost::json::object negotiated(std::string_view preferred_language, std::string& language) const;
};

struct TemplateProblem {
  std::string path;  // JSON Pointer into the submitted template
  std::string message;
};

inline constexpr std::string_view kOtherKey = "other";

// Reads a published template and checks every rule of §4 plus ours: snake_case unique key
// names, known types, constraint keywords that fit the type, defaults that satisfy their own
// key, the reserved `other` (added when missing; never redefined), a compilable response
// schema. Returns the template or every problem found.
std::variant<Template, std::vector<TemplateProblem>> parse_template(const boost::json::value& body,
                                                                    std::string_view scenario,
                                                                    std::string_view version);

// One key definition on its own (a patch's new key), checked as a template's keys are; problem
// paths are relative to the key.
std::variant<KeyDefinition, std::vector<TemplateProblem>> parse_key_definition(
    const boost::json::value& key);

// Best description for a language preference among the tags of `description` (or the string
// itself).
std::string pick_description(const boost::json::value& description, std::string_view preferred,
                             std::string_view fallback_language, std::string* chosen = nullptr);

}  // namespace schemagate::exchange
