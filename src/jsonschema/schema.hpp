#pragma once

#include <boost/json/value.hpp>

#include <cstddef>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace schemagate::jsonschema {

enum class Dialect { draft7, draft2019_09, draft2020_12 };
std::string_view to_string(Dialect d);  // "draft-07", "2019-09", "2020-12"

// The schema itself is wrong: an unresolvable $ref, a keyword with a value of the wrong type, a
// pattern RE2 cannot run, a limit exceeded. The message names the keyword's location.
class SchemaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Documents that $ref may reach, registered up front: the validator never touches the network.
// The official metaschemas of every supported dialect are always present.
class SchemaRegistry {
 public:
  SchemaRegistry();
  // `uri` is absolute; a trailing empty fragment is ignored. Replaces an earlier document.
  void add(std::string uri, boost::json::value document);
  const boost::json::value* find(std::string_view uri) const;

 private:
  std::map<std::string, boost::json::value, std::less<>> documents_;
};

struct CompileOptions {
  Dialect default_dialect = Dialect::draft2020_12;  // when $schema is absent
  bool assert_format = false;                // treat `format` as an assertion (off: an annotation)
  const SchemaRegistry* registry = nullptr;  // nullptr: metaschemas only
  std::string base_uri;                      // used when the root has no absolute $id
  std::size_t max_schema_nodes = 100'000;    // subschemas compiled, across all documents
  std::size_t max_schema_depth = 256;        // nesting of subschemas (and $ref chains) compiled
  std::size_t max_evaluation_depth = 512;    // nested subschema evaluations (incl. $ref hops)
  bool fast_patterns = true;  // simple patterns skip RE2 (off only to cross-check the two)
};

enum class OutputFormat { flag, basic };

struct OutputUnit {
  std::string keyword_location;           // JSON Pointer, through $ref
  std::string absolute_keyword_location;  // URI of the keyword in its resource
  std::string instance_location;          // JSON Pointer into the instance
  std::string error;                      // for a person: "expected integer, got string"
};

// An annotation a keyword attached to a location of a valid instance (title, default, readOnly,
// ...). Annotations of subschemas that failed are dropped, as the specification requires.
struct AnnotationUnit {
  std::string keyword_location;
  std::string absolute_keyword_location;
  std::string instance_location;
  boost::json::value annotation;
};

struct ValidationResult {
  bool valid = true;
  std::vector<OutputUnit> errors;           // basic format, when invalid
  std::vector<AnnotationUnit> annotations;  // basic format, when valid

  // The errors as the external contract lists validation failures:
  // [{instanceLocation, keywordLocation, message}].
  boost::json::array violations() const;

  // {"valid": ...} plus "errors" or "annotations", per the 2020-12 output formats.
  boost::json::value to_json(OutputFormat format) const;
};

namespace detail {
struct CompiledSchema;
}

// A schema compiled once into a program and run many times; thread-safe to share.
class Schema {
 public:
  // Throws SchemaError.
  static Schema compile(const boost::json::value& schema, const CompileOptions& options = {});

  // Stops at the first failure.
  bool validate(const boost::json::value& instance) const;

  // Every failure with its locations (basic) or only the verdict (flag).
  ValidationResult evaluate(const boost::json::value& instance,
                            OutputFormat format = OutputFormat::basic) const;

  Dialect dialect() const;

 private:
  explicit Schema(std::shared_ptr<const detail::CompiledSchema> program)
      : program_(std::move(program)) {}
  std::shared_ptr<const detail::CompiledSchema> program_;
};

}  // namespace schemagate::jsonschema
