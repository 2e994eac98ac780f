#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace schemagate::cli {

// The client side of the REST API from a shell: `agents list|get|register|delete`, `search`,
// `invoke`, `templates list|get|publish`. Tables for people by default, `--json` for scripts.
// Exit codes: 0 done, 1 the server refused (the error is printed, with each violation or card
// problem on its own line), 2 a usage error, 3 the server could not be reached or failed (5xx).
struct ClientCommands {
  // Shared by every client command.
  std::string server = "http://127.0.0.1:8080";
  std::string api_key;
  bool json = false;
  unsigned timeout_ms = 30000;

  CLI::App *agents = nullptr, *agents_list = nullptr, *agents_get = nullptr,
           *agents_register = nullptr, *agents_delete = nullptr;
  CLI::App *search = nullptr, *invoke = nullptr;
  CLI::App *templates = nullptr, *templates_list = nullptr, *templates_get = nullptr,
           *templates_publish = nullptr;

  std::string id, file, query, operation, data, scenario, version, language;
  std::string capability, tag, provider, search_language;
  unsigned limit = 20, top = 10;
  bool all = false, replace = false, stream = false;
};

void add_client_commands(CLI::App& app, ClientCommands& c);
// The exit code when one of these commands ran; nullopt otherwise.
std::optional<int> run_client_commands(const ClientCommands& c);

}  // namespace schemagate::cli
