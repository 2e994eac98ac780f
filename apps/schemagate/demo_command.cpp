#include "demo_command.hpp"

#include "demo_agents.hpp"
#include "exchange/exchange_service.hpp"
#include "registry/registry_service.hpp"
#include "server/app.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace schemagate::cli {

int run_demo(const server::Config& config) {
  auto demos = examples::demo_agents();
  std::vector<std::unique_ptr<sdk::AgentServer>> agents;
  for (auto& demo : demos) {
    auto agent = std::make_unique<sdk::AgentServer>(demo.template_json, demo.handler);
    if (demo.stream) agent->stream_with(demo.stream);
    agent->start();
    agents.push_back(std::move(agent));
  }
  return server::run(config, [&](exchange::ExchangeService& exchange,
                                 registry::RegistryService& registry) {
    for (std::size_t i = 0; i < agents.size(); ++i) {
      const auto& agent = agents[i];
      const auto& t = agent->schema_template();
      boost::json::object body = t.to_json();
      body["endpoint"] = agent->execute_url();
      const auto published = exchange.publish(t.scenario, t.version, body);
      spdlog::info("demo: {} {} ({}) {} at {}", t.scenario, t.version, t.schema_id,
                   published.created ? "published, agent" : "agent", agent->execute_url());
      // Listed in the registry too, so that search finds it and the gateway invokes it (its one
      // operation runs the scenario through the exchange).
      std::string id = t.scenario;
      std::replace(id.begin(), id.end(), '_', '-');
      boost::json::object operation{
          {"name", "execute"}, {"description", demos[i].description}, {"scenario", t.scenario}};
      if (demos[i].operation.is_object()) operation = demos[i].operation.get_object();
      const bool seed001 = demos[i].operation.is_object();
      registry.put(id, boost::json::object{
                           {"name", demos[i].name},
                           {"description", demos[i].description},
                           {"capabilities", boost::json::array{t.scenario.c_str()}},
                           {"tags", boost::json::array{"demo", seed001 ? "seed-001" : "seed-000"}},
                           {"endpoint", agent->execute_url()},
                           {"operations", boost::json::array{std::move(operation)}}});
    }
  });
}

}  // namespace schemagate::cli
