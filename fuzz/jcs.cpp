// RFC 8785 canonical form of any parsed document: canonicalizing is idempotent (the canonical
// text parses to a value whose canonical text is the same).
#include "json/jcs.hpp"
#include "json/parse.hpp"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace schemagate;
  try {
    const auto v = json::parse(std::string_view(reinterpret_cast<const char*>(data), size));
    const auto once = json::canonicalize(v);
    if (json::canonicalize(json::parse(once)) != once) std::abort();
  } catch (const json::ParseError&) {
  }
  return 0;
}
