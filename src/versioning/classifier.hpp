#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace schemagate::versioning {

// STRICT assumes clients validate what they receive and rely on every default; LENIENT assumes
// tolerant readers (unknown output members and enum values are ignored, defaults are a hint).
enum class Policy { strict, lenient };
std::optional<Policy> parse_policy(std::string_view text);
const char* policy_name(Policy p);

// Which way data flows through the schema: clients send inputs and receive outputs.
enum class Direction { input, output };

// What a change does to the set of documents the schema accepts.
enum class Effect { narrows, widens, changes, neutral };

struct Change {
  std::string kind;           // property_added_optional, enum_narrowed, ... (docs/versioning.md)
  std::string schema_path;    // JSON Pointer into the new schema (the old one for removals)
  std::string instance_path;  // where in a document: /passengers/*/name
  Direction direction = Direction::input;
  Effect effect = Effect::neutral;
  bool breaking = false;
  std::string message;

  boost::json::object to_json() const;
};

struct Report {
  std::vector<Change> changes;
  bool breaking() const;
  // "major" when breaking, "minor" for compatible changes, "patch" for annotations only,
  // "none" when nothing changed.
  std::string required_bump() const;
  boost::json::object to_json(std::string_view from, std::string_view to, Policy policy) const;
};

// Compares two JSON Schemas of one contract side (local $refs followed; both must compile).
void classify(const boost::json::value& old_schema, const boost::json::value& new_schema,
              Direction direction, Policy policy, Report& report);

// Whether `next` may carry `report` after `previous` (seed 003 §3.4): a breaking change needs a
// new major version (a new minor while the major is 0). Empty when allowed, else why not.
std::string bump_problem(std::string_view previous, std::string_view next, const Report& report);

}  // namespace schemagate::versioning
