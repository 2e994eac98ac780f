// output-tests/draft2020-12: our basic output must satisfy the schema each test gives for it
// (which itself refers to the official output schema).

#include "json/parse.hpp"
#include "jsonschema/suite_support.hpp"
#include "util/files.hpp"

#include <gtest/gtest.h>
#include <boost/json/serialize.hpp>

#include <filesystem>

namespace fs = std::filesystem;
using namespace schemagate;

namespace {

TEST(JsonSchemaOutput, BasicOutputMatchesTheOutputTests) {
  const fs::path root = fs::path(schemagate::testing::suite_root()) / "output-tests/draft2020-12";
  jsonschema::SchemaRegistry registry;
  registry.add("https://json-schema.org/draft/2020-12/output/schema",
               json::parse(util::read_file((root / "output-schema.json").string())));
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(root / "content")) {
    const auto groups = json::parse(util::read_file(entry.path().string()));
    for (const auto& group : groups.as_array()) {
      const auto schema = jsonschema::Schema::compile(group.at("schema"));
      for (const auto& test : group.at("tests").as_array()) {
        const auto result = schema.evaluate(test.at("data"));
        const auto output = result.to_json(jsonschema::OutputFormat::basic);
        jsonschema::CompileOptions opts;
        opts.registry = &registry;
        const auto check = jsonschema::Schema::compile(test.at("output").at("basic"), opts);
        EXPECT_TRUE(check.validate(output))
            << entry.path().filename() << ": " << test.at("description").as_string()
            << "\n  our output: " << boost::json::serialize(output);
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 4);
}

}  // namespace
