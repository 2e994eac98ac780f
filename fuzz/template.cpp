// Seed 000 templates from arbitrary JSON: parsed into a Template or a list of problems; a
// template that parses gives a JSON Schema that compiles.
#include "exchange/template.hpp"
#include "json/parse.hpp"
#include "jsonschema/schema.hpp"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace schemagate;
  json::ParseLimits limits;
  limits.max_depth = 32;
  boost::json::value doc;
  try {
    doc = json::parse(std::string_view(reinterpret_cast<const char*>(data), size), limits);
  } catch (const json::ParseError&) {
    return 0;
  }
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
