#pragma once

// The two server agents of seed 000 (§5.1 flight booking, §5.2 photo retouch) and seed 001's
// fight comparison, as small real HTTP services built on the server-agent SDK.

#include "sdk/agent.hpp"

#include <boost/json/value.hpp>

#include <string>
#include <vector>

namespace schemagate::examples {

struct DemoAgent {
  std::string scenario;
  std::string name;                  // as the registry lists it
  std::string description;           // what search reads
  boost::json::value template_json;  // examples/templates/<scenario>.json
  sdk::AgentServer::Handler handler;
  // How the registry lists its operation: null for the scenario itself (seed 000); else a plain
  // operation with its own schemas (seed 001 names them), the agent's URL filled in.
  boost::json::value operation;
  // Its streamed replies, when it streams (seed 004 §6.3); else null.
  sdk::AgentServer::StreamHandler stream;
};

std::vector<DemoAgent> demo_agents();

}  // namespace schemagate::examples
