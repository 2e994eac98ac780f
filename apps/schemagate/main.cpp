// schemagate: one binary for the server and its command-line tools.

#include "json/jcs.hpp"
#include "json/parse.hpp"
#include "server/app.hpp"
#include "server/config.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

using schemagate::server::Config;

std::string read_file_or_stdin(const std::string& path) {
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void add_serve(CLI::App& app, Config& config, std::string& listen, std::string& tls_cert,
               std::string& tls_key) {
  auto* serve = app.add_subcommand(
      "serve", "Run the HTTP server (registry, exchange, gateway, A2A, console)");
  serve->set_config("--config", "", "Read options from a TOML or INI file (keys as the long flags)");
  serve->add_option("--listen", listen, "Address to listen on, HOST:PORT (port 0 picks a free one)")
      ->envname("SCHEMAGATE_LISTEN")
      ->capture_default_str();
  serve->add_option("--db", config.store.target, "SQLite database file")
      ->envname("SCHEMAGATE_DB")
      ->capture_default_str();
  serve->add_option("--tls-cert", tls_cert, "PEM certificate chain; enables HTTPS with --tls-key")
      ->envname("SCHEMAGATE_TLS_CERT");
  serve->add_option("--tls-key", tls_key, "PEM private key for --tls-cert")
      ->envname("SCHEMAGATE_TLS_KEY");
  serve->add_option("--max-body-bytes", config.http.max_body_bytes, "Largest request body accepted")
      ->envname("SCHEMAGATE_MAX_BODY_BYTES")
      ->capture_default_str();
  serve->add_option("--max-header-bytes", config.http.max_header_bytes,
                    "Largest request header block accepted")
      ->envname("SCHEMAGATE_MAX_HEADER_BYTES")
      ->capture_default_str();
  serve->add_option("--max-json-depth", config.json_limits.max_depth,
                    "Deepest nesting of arrays and objects accepted in a JSON body")
      ->envname("SCHEMAGATE_MAX_JSON_DEPTH")
      ->capture_default_str();
  serve->add_option("--max-string-bytes", config.json_limits.max_string_bytes,
                    "Longest JSON string or key accepted in a body")
      ->envname("SCHEMAGATE_MAX_STRING_BYTES")
      ->capture_default_str();
  serve->add_option("--threads", config.http.threads, "I/O threads (0: one per core)")
      ->envname("SCHEMAGATE_THREADS")
      ->capture_default_str();
  serve->add_option("--shutdown-grace-ms", config.http.shutdown_grace,
                    "How long in-flight requests may run after SIGTERM")
      ->envname("SCHEMAGATE_SHUTDOWN_GRACE_MS");
  serve->add_option("--idle-timeout-ms", config.http.idle_timeout,
                    "Keep-alive idle and slow-client timeout")
      ->envname("SCHEMAGATE_IDLE_TIMEOUT_MS");
  serve->add_flag("!--no-access-log", config.http.access_log, "Do not log one JSON line per request")
      ->envname("SCHEMAGATE_ACCESS_LOG");
  serve->add_option("--log-level", config.log_level, "trace, debug, info, warn, error or off")
      ->envname("SCHEMAGATE_LOG_LEVEL")
      ->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"schemagate: validated, versioned, structured data exchange between AI agents"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "schemagate 0.1.0");

  Config config;
  std::string listen = "127.0.0.1:8080";
  std::string tls_cert, tls_key;
  add_serve(app, config, listen, tls_cert, tls_key);

  auto* jcs = app.add_subcommand(
      "jcs", "Print the RFC 8785 canonical form of a JSON file (no trailing newline)");
  std::string jcs_file;
  jcs->add_option("FILE", jcs_file, "JSON file to canonicalize ('-' for standard input)")
      ->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (app.got_subcommand("serve")) {
    try {
      schemagate::server::apply_listen_address(listen, config.http);
    } catch (const std::exception& e) {
      std::cerr << "schemagate serve: " << e.what() << "\n";
      return 2;
    }
    if (tls_cert.empty() != tls_key.empty()) {
      std::cerr << "schemagate serve: --tls-cert and --tls-key go together\n";
      return 2;
    }
    if (!tls_cert.empty()) config.http.tls = schemagate::http::TlsFiles{tls_cert, tls_key};
    return schemagate::server::run(config);
  }

  if (app.got_subcommand("jcs")) {
    try {
      const auto text = read_file_or_stdin(jcs_file);
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
