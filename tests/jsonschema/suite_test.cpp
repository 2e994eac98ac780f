// The required tests of JSON-Schema-Test-Suite for each dialect must all pass.

#include "jsonschema/suite_support.hpp"

#include <gtest/gtest.h>

#include <iostream>

using schemagate::jsonschema::Dialect;
using schemagate::testing::run_suite_dir;

namespace {

void expect_all_pass(const std::string& dir, Dialect dialect) {
  const auto counts = run_suite_dir(dir, dialect, "", false);
  std::cout << "JSON-Schema-Test-Suite " << dir << ": " << counts.passed << " passed, "
            << counts.failed << " failed\n";
  for (const auto& f : counts.failures)
    ADD_FAILURE() << f.where << ": " << f.detail;
  EXPECT_GT(counts.passed, 500);
}

TEST(JsonSchemaTestSuite, Draft2020_12) {
  expect_all_pass("draft2020-12", Dialect::draft2020_12);
}
TEST(JsonSchemaTestSuite, Draft2019_09) {
  expect_all_pass("draft2019-09", Dialect::draft2019_09);
}
TEST(JsonSchemaTestSuite, Draft7) {
  expect_all_pass("draft7", Dialect::draft7);
}

}  // namespace
