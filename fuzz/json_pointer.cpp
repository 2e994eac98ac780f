// RFC 6901 pointers from arbitrary text, in string and fragment form: a pointer that parses
// prints back to text that parses to the same pointer.
#include "json/pointer.hpp"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace schemagate::json;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto p = Pointer::parse(text);
    if (Pointer::parse(p.to_string()) != p) std::abort();
  } catch (const PointerError&) {
  }
  try {
    (void)Pointer::parse_fragment(text);
  } catch (const PointerError&) {
  }
  return 0;
}
