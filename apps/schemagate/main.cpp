// schemagate: one binary for the server and its command-line tools.

#include "client_commands.hpp"
#include "demo_command.hpp"
#include "embed/word_vectors.hpp"
#include "evolve_command.hpp"
#include "gateway/access.hpp"
#include "json/jcs.hpp"
#include "json/parse.hpp"
#include "negotiate_command.hpp"
#include "server/app.hpp"
#include "server/config.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/files.hpp"
#include "validate_command.hpp"
#include "versioning_commands.hpp"

#include <CLI/CLI.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

using schemagate::server::Config;

// `serve` and `demo` take the same options.
CLI::App* add_server_command(CLI::App& app, const std::string& name, const std::string& help,
                             Config& config, std::string& listen, std::string& tls_cert,
                             std::string& tls_key, std::string& config_file) {
  auto* serve = app.add_subcommand(name, help);
  serve
      ->add_option("--config", config_file,
                   "Read options from a file of 'key = value' lines named as the long flags "
                   "(precedence: flags, then SCHEMAGATE_* variables, then the file)")
      ->envname("SCHEMAGATE_CONFIG");
  serve->add_option("--listen", listen, "Address to listen on, HOST:PORT (port 0 picks a free one)")
      ->envname("SCHEMAGATE_LISTEN")
      ->capture_default_str();
  serve
      ->add_option("--db", config.store.target,
                   "SQLite database file, or a postgres:// URL for replicas sharing PostgreSQL")
      ->envname("SCHEMAGATE_DB")
      ->capture_default_str();
  serve->add_option("--db-pool-size", config.store.pool_size, "PostgreSQL connections per replica")
      ->envname("SCHEMAGATE_DB_POOL_SIZE")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000}))
      ->capture_default_str();
  serve->add_option("--tls-cert", tls_cert, "PEM certificate chain; enables HTTPS with --tls-key")
      ->envname("SCHEMAGATE_TLS_CERT");
  serve->add_option("--tls-key", tls_key, "PEM private key for --tls-cert")
      ->envname("SCHEMAGATE_TLS_KEY");
  serve->add_option("--max-body-bytes", config.http.max_body_bytes, "Largest request body accepted")
      ->envname("SCHEMAGATE_MAX_BODY_BYTES")
      ->capture_default_str();
  serve
      ->add_option("--max-header-bytes", config.http.max_header_bytes,
                   "Largest request header block accepted")
      ->envname("SCHEMAGATE_MAX_HEADER_BYTES")
      ->capture_default_str();
  serve
      ->add_option("--max-json-depth", config.json_limits.max_depth,
                   "Deepest nesting of arrays and objects accepted in a JSON body")
      ->envname("SCHEMAGATE_MAX_JSON_DEPTH")
      ->capture_default_str();
  serve
      ->add_option("--max-string-bytes", config.json_limits.max_string_bytes,
                   "Longest JSON string or key accepted in a body")
      ->envname("SCHEMAGATE_MAX_STRING_BYTES")
      ->capture_default_str();
  serve
      ->add_option("--handler-threads", config.http.handler_threads,
                   "Threads that run request handlers, which may block on the database or on "
                   "agents (0: run them on the I/O threads)")
      ->envname("SCHEMAGATE_HANDLER_THREADS")
      ->capture_default_str();
  serve->add_option("--threads", config.http.threads, "I/O threads (0: one per core)")
      ->envname("SCHEMAGATE_THREADS")
      ->capture_default_str();
  serve
      ->add_option("--busy-poll-us", config.http.busy_poll,
                   "How long an I/O thread keeps polling its sockets after work before it "
                   "sleeps: lower latency for idle CPU time (0: sleep at once)")
      ->envname("SCHEMAGATE_BUSY_POLL_US");
  serve
      ->add_option("--shutdown-grace-ms", config.http.shutdown_grace,
                   "How long in-flight requests may run after SIGTERM")
      ->envname("SCHEMAGATE_SHUTDOWN_GRACE_MS");
  serve
      ->add_option("--idle-timeout-ms", config.http.idle_timeout,
                   "Keep-alive idle and slow-client timeout")
      ->envname("SCHEMAGATE_IDLE_TIMEOUT_MS");
  serve
      ->add_flag("!--no-access-log", config.http.access_log, "Do not log one JSON line per request")
      ->envname("SCHEMAGATE_ACCESS_LOG");
  serve->add_flag("--list-routes", config.list_routes,
                  "Print every route served (METHOD PATTERN) and exit, without listening");
  serve
      ->add_option("--agent-timeout-ms", config.exchange.agent_timeout,
                   "How long an agent may take to answer an executed payload (then 504)")
      ->envname("SCHEMAGATE_AGENT_TIMEOUT_MS");
  serve
      ->add_option("--max-name-chars", config.card_limits.name_chars,
                   "Longest agent or operation name, in characters (code points)")
      ->envname("SCHEMAGATE_MAX_NAME_CHARS")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  serve
      ->add_option("--max-description-chars", config.card_limits.description_chars,
                   "Longest agent or operation description, in characters (code points)")
      ->envname("SCHEMAGATE_MAX_DESCRIPTION_CHARS")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
      ->capture_default_str();
  serve
      ->add_option("--max-other-chars", config.exchange.max_other_chars,
                   "Longest `other` text kept from a payload (the rest is cut)")
      ->envname("SCHEMAGATE_MAX_OTHER_CHARS")
      ->capture_default_str();
  serve
      ->add_option("--embedder", config.search.embedder,
                   "How search embeds text: word-vectors (built in, offline), http (an "
                   "OpenAI-compatible /v1/embeddings server) or none (lexical ranking only)")
      ->envname("SCHEMAGATE_EMBEDDER")
      ->capture_default_str();
  serve
      ->add_option("--word-vectors", config.search.word_vectors,
                   "The .sgwv file of the word-vectors embedder (default: the one "
                   "scripts/install-deps.sh builds in data/word-vectors/)")
      ->envname("SCHEMAGATE_WORD_VECTORS");
  serve
      ->add_option("--embedding-url", config.search.embedding_url,
                   "Base URL of the http embedder, e.g. http://127.0.0.1:8000 (the API key comes "
                   "from SCHEMAGATE_EMBEDDING_API_KEY)")
      ->envname("SCHEMAGATE_EMBEDDING_URL");
  serve
      ->add_option("--embedding-model", config.search.embedding_model, "Model of the http embedder")
      ->envname("SCHEMAGATE_EMBEDDING_MODEL");
  serve
      ->add_option("--exact-vector-search-below", config.search.exact_vector_search_below,
                   "Vector search scans every agent below this many, and uses an HNSW graph "
                   "from there on")
      ->envname("SCHEMAGATE_EXACT_VECTOR_SEARCH_BELOW")
      ->capture_default_str();
  serve
      ->add_option("--vector-graph-file", config.search.vector_graph_file,
                   "Where the HNSW graph is kept between runs, so that a restart reads it "
                   "instead of building it (default: beside a SQLite database as "
                   "<db>.vector-graph; none for PostgreSQL unless given; \"none\": never)")
      ->envname("SCHEMAGATE_VECTOR_GRAPH_FILE");
  serve
      ->add_option("--public-url", config.a2a.public_url,
                   "Base URL clients reach this server at, used in A2A agent cards (default: "
                   "the request's Host)")
      ->envname("SCHEMAGATE_PUBLIC_URL");
  serve
      ->add_option("--a2a-task-retention-hours", config.a2a.task_retention,
                   "How long an A2A task is kept after its last update")
      ->envname("SCHEMAGATE_A2A_TASK_RETENTION_HOURS")
      ->capture_default_str();
  serve
      ->add_option("--compat-policy", config.versioning.policy,
                   "Breaking-change policy for new schema versions: strict (clients validate "
                   "what they receive) or lenient (tolerant readers)")
      ->envname("SCHEMAGATE_COMPAT_POLICY")
      ->check(CLI::IsMember({"strict", "lenient"}))
      ->capture_default_str();
  serve
      ->add_option("--min-deprecation-days", config.versioning.min_deprecation_days,
                   "Least notice a version deprecation must give (seed 003 §3.5)")
      ->envname("SCHEMAGATE_MIN_DEPRECATION_DAYS")
      ->capture_default_str();
  serve
      ->add_option("--sign-responses", config.versioning.sign_responses,
                   "Sign negotiation responses, negotiated versions, update suggestions and "
                   "compatibility profiles with the server's Ed25519 key")
      ->envname("SCHEMAGATE_SIGN_RESPONSES")
      ->capture_default_str();
  serve
      ->add_option("--evolution", config.evolution.enabled,
                   "Learn new keys from what clients put in `other` (seed 000 §6.2; needs an "
                   "embedder)")
      ->envname("SCHEMAGATE_EVOLUTION")
      ->capture_default_str();
  serve
      ->add_option("--evolution-interval-ms", config.evolution.interval_ms,
                   "How often the semantic pools take in new fragments")
      ->envname("SCHEMAGATE_EVOLUTION_INTERVAL_MS")
      ->capture_default_str();
  serve
      ->add_option("--evolution-similarity", config.evolution.similarity_threshold,
                   "Cosine similarity to join a cluster (0: calibrated for the embedder: 0.70 "
                   "for the word vectors, 0.85 otherwise)")
      ->envname("SCHEMAGATE_EVOLUTION_SIMILARITY")
      ->capture_default_str();
  serve
      ->add_option("--evolution-heat-threshold", config.evolution.heat_threshold,
                   "Heat a cluster needs to trigger (10 per fragment, 24 h half-life)")
      ->envname("SCHEMAGATE_EVOLUTION_HEAT_THRESHOLD")
      ->capture_default_str();
  serve
      ->add_option("--evolution-max-experimental-keys", config.evolution.max_experimental_keys,
                   "Experimental keys a scenario may have at once; further triggers wait")
      ->envname("SCHEMAGATE_EVOLUTION_MAX_EXPERIMENTAL_KEYS")
      ->capture_default_str();
  serve
      ->add_option("--evolution-settings", config.evolution.settings_file,
                   "JSON file naming any evolution threshold (trial_days, promote_usage, ...; "
                   "see docs/api.md)")
      ->envname("SCHEMAGATE_EVOLUTION_SETTINGS");
  serve
      ->add_option("--chat-url", config.evolution.chat_url,
                   "An OpenAI-compatible chat model server for intent induction (key in "
                   "SCHEMAGATE_CHAT_API_KEY); unset: the offline rule-based inducer")
      ->envname("SCHEMAGATE_CHAT_URL");
  serve->add_option("--chat-model", config.evolution.chat_model, "The chat model's name")
      ->envname("SCHEMAGATE_CHAT_MODEL");
  serve->add_option("--log-level", config.log_level, "trace, debug, info, warn, error or off")
      ->envname("SCHEMAGATE_LOG_LEVEL")
      ->capture_default_str();
  return serve;
}

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

// A config file is 'key = value' lines (TOML-style: '#' comments, an optional [serve] header,
// optionally quoted values). Its values are handed to CLI11 as flags placed before the real
// ones, skipped where the flag or its environment variable is given, so that the precedence is
// flags > environment > file. An unknown key is an error naming its line.
std::vector<std::string> config_file_arguments(const CLI::App& serve, const std::string& path,
                                               const std::vector<std::string>& given) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read config file " + path);
  std::vector<std::string> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto hash = line.find('#');
    line = trim(hash == std::string::npos ? line : line.substr(0, hash));
    if (line.empty() || line == "[serve]") continue;
    const auto eq = line.find('=');
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (eq == std::string::npos) throw std::runtime_error(where + "expected 'key = value'");
    const std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    const CLI::Option* opt = serve.get_option_no_throw("--" + key);
    if (opt == nullptr || key == "config" || key == "help") {
      throw std::runtime_error(where + "unknown option '" + key + "'");
    }
    const bool on_command_line = std::any_of(given.begin(), given.end(), [&](const auto& a) {
      return a == "--" + key || a.rfind("--" + key + "=", 0) == 0;
    });
    const auto env = opt->get_envname();
    if (on_command_line || (!env.empty() && std::getenv(env.c_str()) != nullptr)) continue;
    out.push_back("--" + key + "=" + value);
  }
  return out;
}

std::string config_path(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind("--config=", 0) == 0) return args[i].substr(9);
  }
  const char* env = std::getenv("SCHEMAGATE_CONFIG");
  return env ? env : "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"schemagate: validated, versioned, structured data exchange between AI agents"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "schemagate 0.1.0");

  Config config;
  std::string listen = "127.0.0.1:8080";
  std::string tls_cert, tls_key, config_file;
  CLI::App* serve = add_server_command(
      app, "serve", "Run the HTTP server (registry, exchange, gateway, A2A, console)", config,
      listen, tls_cert, tls_key, config_file);
  CLI::App* demo = add_server_command(
      app, "demo",
      "Run the server with the demo agents (seed 000's flight booking and photo retouch, seed "
      "001's fight comparison) started in-process, their templates published and their "
      "endpoints bound",
      config, listen, tls_cert, tls_key, config_file);

  auto* keys = app.add_subcommand("keys", "Manage API keys");
  keys->require_subcommand(1);
  auto* keys_create = keys->add_subcommand(
      "create", "Create an API key in the database and print it (the only time it is shown)");
  std::string key_db = "schemagate.db", key_client, key_role = "client";
  std::vector<std::string> key_groups;
  double key_rps = 0, key_burst = 0;
  keys_create->add_option("--db", key_db, "SQLite database file")
      ->envname("SCHEMAGATE_DB")
      ->capture_default_str();
  keys_create->add_option("--client-id", key_client, "The client identity the key stands for")
      ->required();
  keys_create->add_option("--role", key_role, "admin, publisher or client")
      ->check(CLI::IsMember({"admin", "publisher", "client"}))
      ->capture_default_str();
  keys_create->add_option("--group", key_groups, "A group the client belongs to (repeatable)");
  keys_create->add_option("--rps", key_rps, "Rate limit: requests per second (0: none)");
  keys_create->add_option("--burst", key_burst, "Rate limit: burst size");

  schemagate::cli::ValidateCommand validate;
  schemagate::cli::add_validate(app, validate);
  schemagate::cli::VersioningCommands versioning;
  schemagate::cli::add_versioning_commands(app, versioning);
  schemagate::cli::EvolveCommand evolve;
  evolve.word_vectors = schemagate::embed::find_word_vectors().found;
  schemagate::cli::add_evolve(app, evolve);
  schemagate::cli::NegotiateCommand negotiate;
  schemagate::cli::add_negotiate(app, negotiate);
  schemagate::cli::ClientCommands client;
  schemagate::cli::add_client_commands(app, client);

  auto* jcs = app.add_subcommand(
      "jcs", "Print the RFC 8785 canonical form of a JSON file (no trailing newline)");
  std::string jcs_file;
  jcs->add_option("FILE", jcs_file, "JSON file to canonicalize ('-' for standard input)")
      ->required();

  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "serve" || args[0] == "demo")) {
    try {
      const auto path = config_path(args);
      if (!path.empty()) {
        const auto from_file =
            config_file_arguments(args[0] == "serve" ? *serve : *demo, path, args);
        args.insert(args.begin() + 1, from_file.begin(), from_file.end());
      }
    } catch (const std::exception& e) {
      std::cerr << "schemagate serve: " << e.what() << "\n";
      return 2;
    }
  }
  try {
    std::reverse(args.begin(), args.end());  // CLI11 takes the arguments in reverse order
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (app.got_subcommand("serve") || app.got_subcommand("demo")) {
    const std::string command = app.got_subcommand("serve") ? "serve" : "demo";
    try {
      schemagate::server::apply_listen_address(listen, config.http);
    } catch (const std::exception& e) {
      std::cerr << "schemagate " << command << ": " << e.what() << "\n";
      return 2;
    }
    if (config.json_limits.max_depth < 1 ||
        config.json_limits.max_depth > schemagate::json::kMaxParseDepth) {
      std::cerr << "schemagate " << command << ": --max-json-depth must be between 1 and "
                << schemagate::json::kMaxParseDepth << "\n";
      return 2;
    }
    if (config.store.target.empty()) {
      std::cerr << "schemagate " << command
                << ": --db must name a SQLite file or a postgres:// URL\n";
      return 2;
    }
    if (tls_cert.empty() != tls_key.empty()) {
      std::cerr << "schemagate " << command << ": --tls-cert and --tls-key go together\n";
      return 2;
    }
    if (!tls_cert.empty()) config.http.tls = schemagate::http::TlsFiles{tls_cert, tls_key};
    if (const char* key = std::getenv("SCHEMAGATE_ADMIN_KEY")) config.admin_key = key;
    if (const char* key = std::getenv("SCHEMAGATE_CHAT_API_KEY")) {
      config.evolution.chat_api_key = key;
    }
    if (const char* key = std::getenv("SCHEMAGATE_EMBEDDING_API_KEY")) {
      config.search.embedding_api_key = key;
    }
    if (command == "serve") return schemagate::server::run(config);
    return schemagate::cli::run_demo(config);
  }

  if (app.got_subcommand("validate")) return schemagate::cli::run_validate(validate);
  if (const auto status = schemagate::cli::run_versioning_commands(versioning)) return *status;
  if (const auto status = schemagate::cli::run_evolve(evolve)) return *status;
  if (const auto status = schemagate::cli::run_negotiate(negotiate)) return *status;
  if (const auto status = schemagate::cli::run_client_commands(client)) return *status;

  if (keys_create->parsed()) {
    try {
      schemagate::util::SystemClock clock;
      auto store = schemagate::store::open_store({key_db}, clock);
      schemagate::gateway::AccessControl access(*store, clock, "");
      const auto created = access.create_key(key_client, *schemagate::gateway::role_from(key_role),
                                             key_groups, {key_rps, key_burst});
      boost::json::array groups;
      for (const auto& g : key_groups)
        groups.push_back(boost::json::value(g));
      std::cout << boost::json::serialize(boost::json::object{{"key", created.key},
                                                              {"client_id", key_client},
                                                              {"role", key_role},
                                                              {"groups", std::move(groups)}})
                << "\n";
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "schemagate keys create: " << e.what() << "\n";
      return 1;
    }
  }

  if (app.got_subcommand("jcs")) {
    try {
      const auto text = schemagate::util::read_file(jcs_file);
      schemagate::json::ParseLimits limits;
      limits.max_document_bytes = std::size_t{1} << 31;
      limits.max_depth = 1000;
      const auto canonical = schemagate::json::canonicalize(schemagate::json::parse(text, limits));
      std::fwrite(canonical.data(), 1, canonical.size(), stdout);
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "schemagate jcs: " << jcs_file << ": " << e.what() << "\n";
      return 1;
    }
  }
  return 2;
}
