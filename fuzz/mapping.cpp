// Seed 003 mapping documents from arbitrary JSON: parsed into a Mapping or a list of problems;
// a mapping that parses is applied to a few fixed documents (or refuses them with ApplyError).
#include "mapping/mapping.hpp"
#include "json/parse.hpp"

#include <cstdint>

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
  auto parsed = mapping::parse_mapping(doc);
  if (auto* m = std::get_if<mapping::Mapping>(&parsed)) {
    for (const char* text :
         {"{}", "{\"a\": 1, \"b\": \"x\", \"c\": [1, 2]}", "{\"a\": {\"b\": null}}"}) {
      try {
        (void)mapping::apply(*m, json::parse(text));
        (void)mapping::apply_output(*m, json::parse(text));
      } catch (const mapping::ApplyError&) {
      }
    }
  }
  return 0;
}
