// The strict JSON parser on arbitrary bytes: it returns a value or throws ParseError, and a
// value it returns serializes and parses back to the same value.
#include "json/parse.hpp"

#include <boost/json/serialize.hpp>

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace schemagate;
  json::ParseLimits limits;
  limits.max_depth = 64;
  try {
    const auto v = json::parse(std::string_view(reinterpret_cast<const char*>(data), size), limits);
    if (json::parse(boost::json::serialize(v), limits) != v) std::abort();
  } catch (const json::ParseError&) {
  }
  return 0;
}
