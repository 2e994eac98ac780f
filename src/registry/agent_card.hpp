#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <variant>
#include <vector>

namespace schemagate::registry {

struct Operation {
  std::string name;
  std::string description;
  boost::json::value input_schema;   // null when `scenario` names a template instead
  boost::json::value output_schema;  // null when absent
  std::string endpoint;              // full URL; the card's endpoint when not given
  std::string scenario;
  // Seed 001 names of the input and output schemas (the A2A face's
  // application/json;schema=<name>); "<name>.input" / "<name>.output" when not given.
  std::string input_schema_name;
  std::string output_schema_name;
  // Seed 002 FieldDefinitions an A2A agent declared on its skill (null: derived from the
  // schemas' properties).
  boost::json::value input_fields;
  boost::json::value output_fields;
  // The semantic version of the operation's schemas (seed 003): as declared by the card, or
  // given by the registry when the schemas are published (1.0.0, then a minor per compatible
  // change). Empty for a scenario operation, whose template carries the versions.
  std::string version;
};

// Seed 004 §4 agent metadata, checked and normalized. The card as stored keeps every field
// the publisher sent (the format is extensible); these are the ones schemagate reads.
struct AgentCard {
  std::string id;
  std::string name;
  std::string description;
  std::vector<std::string> capabilities;
  std::vector<std::string> tags;
  std::vector<std::string> supported_languages;
  std::vector<std::string> protocols;
  std::string provider;
  std::string authentication;  // as published ("API Key", "none", "oauth2", ...)
  std::string endpoint;
  std::vector<Operation> operations;
  bool is_public = true;
  std::vector<std::string> visible_to_clients;
  std::vector<std::string> visible_to_groups;
  boost::json::object raw;  // the normalized card, as stored and served

  // Lower-cased, for exact filters.
  bool has_capability(std::string_view c) const;
  bool has_tag(std::string_view t) const;
  bool supports_language(std::string_view l) const;
  // The agent itself speaks A2A (`protocols` names it): the gateway reaches it with A2A
  // messages instead of plain JSON posts.
  bool speaks_a2a() const;
  // The A2A protocol version its endpoint speaks ("1.0" or "0.3"), from its crawled card.
  std::string a2a_version() const;
};

struct CardProblem {
  std::string path;
  std::string message;
};

// The longest texts a card may carry, in characters (code points, not bytes: seed 000 §4.2 wants
// descriptions in any language). --max-name-chars and --max-description-chars set them.
struct CardLimits {
  std::size_t name_chars = 200;          // the card's and its operations' names
  std::size_t description_chars = 4000;  // the card's and its operations' descriptions
  // No text limit: for cards already stored, which a lowered limit must not make disappear.
  static CardLimits unlimited() { return {SIZE_MAX, SIZE_MAX}; }
};

// Validates a card (every problem listed) and normalizes it: the seed's simple top-level
// `inputs`/`outputs` maps ({"text": "string"}) become a default operation's JSON Schemas.
std::variant<AgentCard, std::vector<CardProblem>> parse_agent_card(const boost::json::value& body,
                                                                   const CardLimits& limits = {});

}  // namespace schemagate::registry
