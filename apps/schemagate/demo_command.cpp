#include "demo_command.hpp"

#include "demo_agents.hpp"
#include "exchange/exchange_service.hpp"
#include "server/app.hpp"

#include <spdlog/spdlog.h>

namespace schemagate::cli {

int run_demo(const server::Config& config) {
  std::vector<std::unique_ptr<sdk::AgentServer>> agents;
  for (auto& demo : examples::demo_agents()) {
    auto agent = std::make_unique<sdk::AgentServer>(demo.template_json, demo.handler);
    agent->start();
    agents.push_back(std::move(agent));
  }
  return server::run(config, [&agents](exchange::ExchangeService& exchange) {
    for (const auto& agent : agents) {
      const auto& t = agent->schema_template();
      boost::json::object body = t.to_json();
      body["endpoint"] = agent->execute_url();
      const auto published = exchange.publish(t.scenario, t.version, body);
      spdlog::info("demo: {} {} ({}) {} at {}", t.scenario, t.version, t.schema_id,
                   published.created ? "published, agent" : "agent", agent->execute_url());
    }
  });
}

}  // namespace schemagate::cli
