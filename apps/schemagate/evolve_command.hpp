#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace schemagate::cli {

// `schemagate evolve simulate TRAFFIC.jsonl`: seed 000 §6.2 over simulated days.
struct EvolveCommand {
  CLI::App* simulate = nullptr;
  std::string traffic;
  std::string template_file;  // empty: the demo's flight booking template
  std::string word_vectors;
  std::string settings;  // JSON file of evolution thresholds
  double extra_days = 45;
  bool json = false;
};

void add_evolve(CLI::App& app, EvolveCommand& c);
std::optional<int> run_evolve(const EvolveCommand& c);

}  // namespace schemagate::cli
