#pragma once

// Runs JSON-Schema-Test-Suite files (../shared/testdata/JSON-Schema-Test-Suite) through the
// validator; remotes/ is registered as http://localhost:1234/.

#include "jsonschema/schema.hpp"

#include <string>
#include <vector>

namespace schemagate::testing {

struct SuiteFailure {
  std::string where;  // file: group / test
  std::string detail;
};

struct SuiteCounts {
  int passed = 0;
  int failed = 0;
  std::vector<SuiteFailure> failures;
};

std::string suite_root();
const jsonschema::SchemaRegistry& suite_remotes();

// Runs every file under tests/<dialect_dir>/<sub> (sub "" = the required tests only).
SuiteCounts run_suite_dir(const std::string& dialect_dir, jsonschema::Dialect dialect,
                          const std::string& sub, bool assert_format);

}  // namespace schemagate::testing
