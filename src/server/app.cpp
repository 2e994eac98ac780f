#include "server/app.hpp"

#include "a2a/a2a_service.hpp"
#include "api/a2a_routes.hpp"
#include "api/auth.hpp"
#include "api/evolution_routes.hpp"
#include "api/exchange_routes.hpp"
#include "api/gateway_routes.hpp"
#include "api/mcp_routes.hpp"
#include "api/ops.hpp"
#include "api/registry_routes.hpp"
#include "api/ui_routes.hpp"
#include "api/versioning_routes.hpp"
#include "embed/http_embedder.hpp"
#include "embed/word_vectors.hpp"
#include "evolution/evolution_engine.hpp"
#include "exchange/exchange_service.hpp"
#include "gateway/access.hpp"
#include "gateway/gateway_service.hpp"
#include "http/client.hpp"
#include "json/parse.hpp"
#include "llm/chat_model.hpp"
#include "mcp/mcp_service.hpp"
#include "registry/registry_service.hpp"
#include "server/change_feed.hpp"
#include "server/http_agent_transport.hpp"
#include "server/http_card_fetcher.hpp"
#include "signing/key_store.hpp"
#include "util/clock.hpp"
#include "util/files.hpp"
#include "util/log.hpp"
#include "util/metrics.hpp"
#include "versioning/versioning_service.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>

namespace schemagate::server {

namespace {

// The embedder the configuration names, or null for lexical search. Throws std::runtime_error
// for a configuration that cannot work.
std::unique_ptr<embed::Embedder> make_embedder(const SearchConfig& config, http::Client& client) {
  if (config.embedder == "none") return nullptr;
  if (config.embedder == "http") {
    if (config.embedding_url.empty() || config.embedding_model.empty()) {
      throw std::runtime_error("--embedder http needs --embedding-url and --embedding-model");
    }
    return std::make_unique<embed::HttpEmbedder>(
        client, embed::HttpEmbedder::Options{config.embedding_url, config.embedding_model,
                                             config.embedding_api_key});
  }
  if (config.embedder != "word-vectors") {
    throw std::runtime_error("--embedder must be word-vectors, http or none, not \"" +
                             config.embedder + "\"");
  }
  if (config.word_vectors.empty()) {
    // Installed: share/schemagate/ beside bin/ (found from the binary, so a package or a
    // moved prefix keeps it). In a build tree: the file scripts/install-deps.sh builds. Without
    // either, search still works, lexically, and says where it looked.
    const auto lookup = embed::find_word_vectors();
    if (!lookup.found.empty()) {
      spdlog::info("search: word vectors from {}", lookup.found);
      return embed::WordVectorEmbedder::load(lookup.found);
    }
    std::string where;
    for (const auto& path : lookup.tried)
      where += (where.empty() ? "" : ", ") + path;
    spdlog::warn(
        "search: no word vectors at {}; ranking is lexical only (install them, run "
        "scripts/install-deps.sh, or pass --word-vectors)",
        where);
    return nullptr;
  }
  return embed::WordVectorEmbedder::load(config.word_vectors);
}

}  // namespace

int run(const Config& given, const StartHook& on_start) {
  Config config = given;
  if (config.list_routes) {
    // The routes are built over a throwaway store: listing them opens or creates no database.
    config.store.target = ":memory:";
    config.log_level = "error";
  }
  util::configure_logging(config.log_level);
  util::SystemClock clock;
  util::MetricsRegistry metrics;

  std::unique_ptr<store::Store> store;
  try {
    store = store::open_store(config.store, clock);
  } catch (const std::exception& e) {
    spdlog::critical("cannot open the store: {}", e.what());
    return 1;
  }
  const auto info = store->info();
  spdlog::info("store: {} at {} (schema version {})", info.backend, info.location,
               info.schema_version);

  signing::KeyStore keys(*store, clock);
  versioning::VersioningOptions versioning_options;
  versioning_options.policy =
      versioning::parse_policy(config.versioning.policy).value_or(versioning::Policy::strict);
  versioning_options.min_deprecation_notice =
      std::chrono::hours(24 * config.versioning.min_deprecation_days);
  versioning_options.sign_responses = config.versioning.sign_responses;
  versioning::VersioningService versioning(*store, clock, keys, versioning_options);
  try {
    spdlog::info("signing: key {} (GET /.well-known/jwks.json)", keys.active().kid);
  } catch (const std::exception& e) {
    spdlog::critical("signing: {}", e.what());
    return 1;
  }

  http::Client agent_client;
  HttpAgentTransport transport(agent_client);
  exchange::ExchangeService exchange(*store, clock, transport, config.exchange);
  exchange.use_versioning(&versioning);
  if (const auto n = exchange.backfill_versions()) {
    spdlog::info("versioning: {} template families recorded as versioned contracts", n);
  }
  http::Client embedding_client;
  std::unique_ptr<embed::Embedder> embedder;
  try {
    embedder = make_embedder(config.search, embedding_client);
  } catch (const std::exception& e) {
    spdlog::critical("search: {}", e.what());
    return 1;
  }
  if (embedder) spdlog::info("search: hybrid ranking with {} embeddings", embedder->model());
  std::string vector_graph_file = config.search.vector_graph_file;
  if (vector_graph_file.empty() && config.store.target != ":memory:" &&
      !config.store.target.starts_with("postgres")) {
    vector_graph_file = config.store.target + ".vector-graph";
  }
  if (vector_graph_file == "none") vector_graph_file.clear();
  registry::RegistryService registry(
      *store, clock,
      {embedder.get(), config.search.exact_vector_search_below,
       [&exchange](const std::string& scenario) { return exchange.key_descriptions(scenario); },
       &versioning, config.card_limits, vector_graph_file});
  spdlog::info("registry: {} agents indexed", registry.size());
  // The MCP face's tool lists follow the registry and the published templates.
  mcp::McpService* mcp_tools = nullptr;
  exchange.on_published([&registry, &mcp_tools](const std::string& scenario) {
    if (const auto n = registry.refresh_scenario(scenario)) {
      spdlog::info("registry: {} agents naming {} indexed with its new template", n, scenario);
    }
    if (mcp_tools) mcp_tools->tools_changed();
  });
  registry.on_changed([&mcp_tools](const std::string&) {
    if (mcp_tools) mcp_tools->tools_changed();
  });
  gateway::GatewayLimits gateway_limits;
  gateway_limits.agent_timeout = config.exchange.agent_timeout;
  gateway::GatewayService gateway(registry, exchange, *store, clock, transport, gateway_limits);
  gateway.use_versioning(&versioning);

  // The A2A face invokes through the gateway: the same validation, forwarding and limits.
  a2a::Invoker invoker{[&gateway](const std::string& agent, const std::string& op,
                                  const boost::json::value& input, const registry::Caller& caller) {
                         return gateway.invoke(agent, op, input, caller, "").body;
                       },
                       [&gateway](const std::string& agent, const boost::json::object& request,
                                  const registry::Caller& caller) {
                         return gateway.send_a2a(agent, request, caller);
                       },
                       [&gateway](const std::string& agent, const boost::json::object& request,
                                  const registry::Caller& caller) {
                         return gateway.stream_a2a(agent, request, caller);
                       }};
  a2a::A2AService a2a_service(
      registry, *store, clock, std::move(invoker),
      [&exchange](const std::string& scenario) -> boost::json::value {
        try {
          return exchange.json_schema(scenario);
        } catch (const exchange::ExchangeError&) {
          return nullptr;  // nothing published under that name yet
        }
      },
      a2a::A2AOptions{config.a2a.task_retention, 100});

  if (on_start) {
    try {
      on_start(exchange, registry);
    } catch (const std::exception& e) {
      spdlog::critical("start-up failed: {}", e.what());
      return 1;
    }
  }

  gateway::AccessControl access(*store, clock, config.admin_key);
  if (access.open()) {
    const auto& host = config.http.host;
    if (host != "127.0.0.1" && host != "::1" && host != "localhost") {
      spdlog::critical(
          "no API key is configured, so the server would be open to anyone on {}; set "
          "SCHEMAGATE_ADMIN_KEY or listen on 127.0.0.1",
          host);
      return 1;
    }
    spdlog::warn(
        "no API key is configured: the server is OPEN on loopback, every caller is an admin "
        "(set SCHEMAGATE_ADMIN_KEY to close it)");
  }
  api::Auth auth(access);
  // Several replicas on one PostgreSQL: each follows what the others commit.
  std::unique_ptr<ChangeFeed> change_feed;
  if (store->info().backend == "postgres") {
    access.count_quotas_in_store(true);
    change_feed = std::make_unique<ChangeFeed>(*store, registry, access,
                                               FollowingServices{&exchange, &versioning, &gateway},
                                               std::chrono::milliseconds(200));
  }

  http::Router router;
  api::add_ops_routes(router,
                      {*store, metrics, config.json_limits, embedder ? embedder->model() : ""});
  api::add_access_routes(router, auth, config.json_limits);
  api::add_exchange_routes(router, exchange, auth, config.json_limits);
  HttpCardFetcher card_fetcher(agent_client);
  api::add_registry_routes(router, registry, auth, card_fetcher, config.json_limits);
  api::add_gateway_routes(router, gateway, auth, config.json_limits);
  api::add_versioning_routes(router, versioning, auth, config.json_limits);
  api::add_ui_routes(router);
  mcp::McpOptions mcp_options;
  mcp_options.audit = [&access](const std::string& client, const std::string& target, int status,
                                double ms) { access.audit(client, "invoke", target, status, ms); };
  mcp::McpService mcp(
      registry, gateway, exchange,
      [&exchange](const std::string& scenario) -> boost::json::value {
        try {
          return exchange.json_schema(scenario);
        } catch (const exchange::ExchangeError&) {
          return nullptr;
        }
      },
      mcp_options);
  mcp_tools = &mcp;
  api::add_mcp_routes(router, mcp, auth, config.json_limits);
  std::unique_ptr<llm::ChatModel> chat;
  std::unique_ptr<evolution::EvolutionEngine> evolution;
  if (config.evolution.enabled && embedder) {
    evolution::EvolutionOptions options;
    if (config.evolution.similarity_threshold > 0) {
      options.similarity_threshold = config.evolution.similarity_threshold;
    }
    options.heat_threshold = config.evolution.heat_threshold;
    options.max_experimental_keys = config.evolution.max_experimental_keys;
    if (!config.evolution.settings_file.empty()) {
      try {
        options = evolution::with_settings(
            options, json::parse(util::read_file(config.evolution.settings_file)));
      } catch (const std::exception& e) {
        spdlog::critical("evolution: {}: {}", config.evolution.settings_file, e.what());
        return 1;
      }
    }
    if (!config.evolution.chat_url.empty()) {
      chat = std::make_unique<llm::HttpChatModel>(
          embedding_client,
          llm::HttpChatModel::Options{config.evolution.chat_url, config.evolution.chat_model,
                                      config.evolution.chat_api_key});
      options.chat_model = chat.get();
      spdlog::info("evolution: intent induction by {} at {}", config.evolution.chat_model,
                   config.evolution.chat_url);
    }
    evolution =
        std::make_unique<evolution::EvolutionEngine>(*store, clock, exchange, *embedder, options);
    api::add_evolution_routes(router, *evolution, auth, config.json_limits);
    evolution->start(std::chrono::milliseconds(config.evolution.interval_ms));
    spdlog::info("evolution: semantic pools every {} ms", config.evolution.interval_ms);
  } else if (config.evolution.enabled) {
    spdlog::warn("evolution: off, it needs an embedder (--embedder)");
  }
  const api::A2ARouteOptions a2a_routes{config.json_limits, config.a2a.public_url,
                                        config.http.tls.has_value()};
  api::add_a2a_routes(router, a2a_service, auth, a2a_routes);

  if (config.list_routes) {
    for (const auto& [method, pattern] : router.routes())
      std::printf("%s %s\n", method.c_str(), pattern.c_str());
    return 0;
  }
  auto http_options = config.http;
  http_options.on_shutdown = [&mcp] { mcp.stop(); };
  http::Server server(router, metrics, http_options);
  // Gateway calls forward on the server's own I/O threads (no thread waits for an agent).
  transport.use_async_client(&server.async_client());
  try {
    server.listen();
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
  server.run();
  return 0;
}

}  // namespace schemagate::server
