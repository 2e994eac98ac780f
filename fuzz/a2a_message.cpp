// A2A messages and upstream replies from arbitrary bytes: a message is read (or refused with
// A2AError), converted to the 0.3 shape and back; replies and events from an upstream agent
// are read in both protocol versions.
#include "a2a/wire.hpp"
#include "json/parse.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace schemagate;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto version : {a2a::WireVersion::v1_0, a2a::WireVersion::v0_3}) {
    try {
      (void)a2a::read_upstream_reply(text, version);
    } catch (const std::exception&) {
    }
    try {
      (void)a2a::read_upstream_event(text, version);
    } catch (const std::exception&) {
    }
  }
  json::ParseLimits limits;
  limits.max_depth = 32;
  try {
    const auto doc = json::parse(text, limits);
    const auto message = a2a::read_message(doc, "message");
    (void)a2a::message_from_v03(a2a::message_v03(message));
  } catch (const std::exception&) {
  }
  return 0;
}
