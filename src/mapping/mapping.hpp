#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace schemagate::jsonschema {
class Schema;
}

namespace schemagate::mapping {

// One translation step (seed 003 §3.3). Paths are JSON Pointers relative to the object the step
// runs on; `in` runs its steps inside a nested object, or inside each element of an array.
struct Step {
  enum class Kind { rename, add, remove, convert, derive, in };
  Kind kind = Kind::rename;
  std::string path;                    // rename: the source; others: the target
  std::string to;                      // rename: the destination
  boost::json::value value;            // add: the constant or default; remove: the restore value
  bool only_if_absent = false;         // add: a default (kept when present) rather than a constant
  bool has_restore = false;            // remove: `restore` was given
  boost::json::object table;           // convert, derive lookup
  std::string function;                // derive: concat, split, lookup, to_number, to_string, date
  std::vector<std::string> from;       // derive: source paths
  std::string separator;               // derive concat/split
  std::size_t index = 0;               // derive split
  std::string from_format, to_format;  // derive date
  bool remove_sources = false;         // derive
  std::vector<Step> steps;             // in

  boost::json::object to_json() const;
};

// A mapping document between two versions of one contract.
struct Mapping {
  std::string contract;
  std::string from, to;
  bool bidirectional = false;
  std::vector<Step> steps;             // for request documents (inputs, template payloads)
  std::vector<Step> output_steps;      // for response documents of version `from`
  boost::json::array examples;         // source documents the publisher vouches for (verified)
  boost::json::array output_examples;  // response documents of version `from` (verified)

  // The document form (without signature), as stored, signed and served.
  boost::json::object to_json() const;
};

struct Problem {
  std::string path;  // JSON Pointer into the mapping document
  std::string message;
};

// Reads a mapping document: every problem found, or the mapping. Known keys only: a typo in a
// step is an error, not a silently skipped rule.
std::variant<Mapping, std::vector<Problem>> parse_mapping(const boost::json::value& document);

// A document the mapping cannot translate (a value the conversion table does not know, a
// string that is not a number, ...), with where it happened in the document.
class ApplyError : public std::runtime_error {
 public:
  ApplyError(std::string location, std::string message)
      : std::runtime_error(std::move(message)), location_(std::move(location)) {}
  const std::string& location() const { return location_; }

 private:
  std::string location_;
};

// The source document translated to the destination version. A step whose source is absent is
// skipped: optional fields stay optional.
boost::json::value apply(const Mapping& mapping, const boost::json::value& source);
boost::json::value apply_output(const Mapping& mapping, const boost::json::value& source);

// The mapping the other way, when every step can be undone; otherwise the reason (naming the
// step) why not.
std::variant<Mapping, std::string> invert(const Mapping& mapping);

// One mapping doing `first` then `second` (second.from must equal first.to).
Mapping compose(const Mapping& first, const Mapping& second);

// Edges of the version graph and the shortest chain between two versions (breadth first; ties
// go to the edge listed first). Empty when `to` cannot be reached; [] for from == to.
struct Edge {
  std::string from, to;
  std::size_t mapping = 0;  // caller's index
  bool inverse = false;
};
std::optional<std::vector<Edge>> shortest_path(const std::vector<Edge>& edges,
                                               const std::string& from, const std::string& to);

// Seed 003 §3.3 verifiability: each example, translated, must validate against the destination
// schema (and, for a bidirectional mapping, come back to what it was). Every failure listed.
// The schemas are those of the two versions: inputs (examples) and outputs (output_examples);
// a null schema is not checked.
struct VersionSchemas {
  const jsonschema::Schema* input = nullptr;
  const jsonschema::Schema* output = nullptr;
};
std::vector<Problem> verify(const Mapping& mapping, const VersionSchemas& source,
                            const VersionSchemas& destination);

}  // namespace schemagate::mapping
