// Seed 000 templates from arbitrary JSON: parsed into a Template or a list of problems; a
// template that parses gives a JSON Schema that compiles.
#include "exchange/template.hpp"
#include "json_input.hpp"
#include "jsonschema/schema.hpp"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace schemagate;
  const auto input = json_input(data, size);
  if (!input) return 0;
  const auto& doc = *input;
  auto parsed = exchange::parse_template(doc, "fuzz", "1.0.0");
  if (auto* t = std::get_if<exchange::Template>(&parsed)) {
    try {
      (void)jsonschema::Schema::compile(t->json_schema());
    } catch (const jsonschema::SchemaError&) {
      std::abort();  // a template that was accepted must give a schema that compiles
    }
    (void)t->to_json();
  }
  return 0;
}
