// Agent cards from arbitrary JSON, as registered (seed 004) and as crawled from an A2A agent
// card (converted first): parsed into an AgentCard or a list of problems.
#include "registry/agent_card.hpp"
#include "json_input.hpp"
#include "registry/registry_service.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace schemagate;
  const auto input = json_input(data, size);
  if (!input) return 0;
  const auto& doc = *input;
  (void)registry::parse_agent_card(doc);
  if (doc.is_object()) {
    try {
      (void)registry::parse_agent_card(registry::card_from_a2a(doc.get_object(), "fuzz-agent"));
    } catch (const std::exception&) {
      // card_from_a2a refuses what is not an A2A card with an exception naming why.
    }
  }
  return 0;
}
