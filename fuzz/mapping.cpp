// Seed 003 mapping documents from arbitrary JSON: parsed into a Mapping or a list of problems;
// a mapping that parses is applied to a few fixed documents (or refuses them with ApplyError).
#include "mapping/mapping.hpp"
#include "json_input.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace schemagate;
  const auto input = json_input(data, size);
  if (!input) return 0;
  const auto& doc = *input;
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
