// JSON Schema compile and evaluate: the input is read as a schema (compiled or refused with
// SchemaError) and, when it compiles, evaluated against itself and a few fixed instances.
#include "json_input.hpp"
#include "jsonschema/schema.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace schemagate;
  const auto input = json_input(data, size);
  if (!input) return 0;
  const auto& doc = *input;
  try {
    jsonschema::CompileOptions opts;
    opts.assert_format = (size % 2) == 0;
    const auto schema = jsonschema::Schema::compile(doc, opts);
    (void)schema.evaluate(doc);
    for (const char* text :
         {"null", "0", "-1.5", "\"abc\"", "[1, [2], {}]", "{\"a\": {\"b\": []}}"})
      (void)schema.evaluate(json::parse(text));
  } catch (const jsonschema::SchemaError&) {
  }
  return 0;
}
