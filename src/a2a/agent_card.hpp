#pragma once

#include "a2a/wire.hpp"

#include <boost/json/value.hpp>

#include <functional>
#include <string>
#include <vector>

namespace schemagate::registry {
struct AgentCard;
}

namespace schemagate::a2a {

// Seed 002: one named input or output of a skill.
struct FieldDefinition {
  std::string name;
  std::string kind;  // "text", "data" or "file"
  std::vector<std::string> mime_types;
  boost::json::value schema;  // null when none
  std::string description;
  bool optional = false;
  boost::json::object to_json() const;
};

// A schema that accepts anything ({}, true, absent) declares nothing worth naming: the A2A
// face gives it no schema name, and the gateway tags no data part with one.
bool says_nothing(const boost::json::value& schema);

// One registry operation as an A2A skill: its seed 001 named schemas and seed 002 fields.
struct Skill {
  std::string operation;  // the registry operation it invokes (also the skill id)
  std::string name;
  std::string description;
  std::vector<std::string> tags;
  std::vector<std::string> examples;
  std::string input_schema_name;   // empty: the skill declares no input schema
  std::string output_schema_name;  // empty: no output schema
  boost::json::value input_schema;
  boost::json::value output_schema;
  std::vector<FieldDefinition> input_fields;
  std::vector<FieldDefinition> output_fields;
  // The one text input a plain text message fills, when the skill has one.
  const FieldDefinition* text_field() const;
};

// An agent as the A2A face sees it.
struct AgentProfile {
  std::string agent_id;
  bool upstream_a2a = false;  // the agent speaks A2A itself (fronted, not translated)
  std::vector<Skill> skills;
  boost::json::object schemas;  // every declared name -> JSON Schema

  const Skill* skill_for_input_schema(std::string_view name) const;
  const Skill* skill(std::string_view id) const;
  std::string input_schema_names() const;  // "a, b" for error messages
};

// Reads a registry card into its A2A profile. `scenario_schema` gives the JSON Schema of a
// scenario's latest template (seed 000), for operations that name one; null when unknown.
AgentProfile profile_of(
    const registry::AgentCard& card,
    const std::function<boost::json::value(const std::string&)>& scenario_schema);

struct CardContext {
  std::string base_url;          // http://host:port, where /a2a/{agent} is served
  bool requires_key = false;     // the gateway needs an API key: securitySchemes are declared
  bool with_v03_fields = false;  // a v1.0 card also carries 0.3's url, preferredTransport, ...
};

// The agent's A2A card (spec §4.4.1 / §8) in the shape of `version`: v1.0 (supportedInterfaces
// with JSONRPC and HTTP+JSON at 1.0, and JSONRPC at 0.3) or 0.3 (url, preferredTransport,
// protocolVersion). Both carry the seed 001 extension, the root `schemas` map and skills with
// seed 002 inputFields/outputFields.
boost::json::object agent_card(const AgentProfile& profile, const registry::AgentCard& card,
                               const CardContext& context, WireVersion version);

// Seed 002 fields of an object schema: one per property, text for a string, data otherwise,
// optional unless required.
std::vector<FieldDefinition> fields_from_schema(const boost::json::value& schema);

}  // namespace schemagate::a2a
