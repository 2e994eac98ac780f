// The optional tests of JSON-Schema-Test-Suite: counts are printed for the record, and each
// dialect must keep at least the pass count reached when this was written (a regression guard).

#include "jsonschema/suite_support.hpp"

#include <gtest/gtest.h>

#include <iostream>

using schemagate::jsonschema::Dialect;
using schemagate::testing::run_suite_dir;

namespace {

void report(const std::string& dir, Dialect dialect, int min_optional, int min_format) {
  const auto optional = run_suite_dir(dir, dialect, "optional", false);
  const auto format = run_suite_dir(dir, dialect, "optional/format", true);
  std::cout << "optional " << dir << ": " << optional.passed << " passed, " << optional.failed
            << " failed\n";
  std::cout << "optional/format (assert_format) " << dir << ": " << format.passed << " passed, "
            << format.failed << " failed\n";
  if (std::getenv("SCHEMAGATE_SHOW_OPTIONAL_FAILURES")) {
    for (const auto& f : optional.failures)
      std::cout << "  " << f.where << ": " << f.detail << "\n";
    for (const auto& f : format.failures)
      std::cout << "  " << f.where << ": " << f.detail << "\n";
  }
  EXPECT_GE(optional.passed, min_optional);
  EXPECT_GE(format.passed, min_format);
}

TEST(JsonSchemaOptional, Draft2020_12) {
  report("draft2020-12", Dialect::draft2020_12, 162, 705);
}
TEST(JsonSchemaOptional, Draft2019_09) {
  report("draft2019-09", Dialect::draft2019_09, 158, 698);
}
TEST(JsonSchemaOptional, Draft7) {
  report("draft7", Dialect::draft7, 114, 617);
}

}  // namespace
