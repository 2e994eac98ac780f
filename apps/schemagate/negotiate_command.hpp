#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace schemagate::cli {

// `schemagate negotiate --scenario S --say "TEXT"`: get_schema_template from a server, then the
// offline payload builder (seed 000 §6.1) turns the request into a payload for it.
struct NegotiateCommand {
  CLI::App* command = nullptr;
  std::string server = "http://127.0.0.1:8080";
  std::string api_key;
  std::string scenario, say, today, language;
  std::string chat_url, chat_model;  // an OpenAI-compatible chat model instead of the rules
  bool submit = false, trace = false;
};

void add_negotiate(CLI::App& app, NegotiateCommand& c);
std::optional<int> run_negotiate(const NegotiateCommand& c);

}  // namespace schemagate::cli
