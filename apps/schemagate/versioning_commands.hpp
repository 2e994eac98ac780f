#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace schemagate::cli {

// Seed 003 from the shell: `compat`, `mapping apply|verify|sign|keygen`, `conformance`.
struct VersioningCommands {
  CLI::App* compat = nullptr;
  std::string old_file, new_file, direction = "input", policy = "strict", operation;
  std::string from_version, to_version;
  bool json = false;

  CLI::App* mapping_apply = nullptr;
  CLI::App* mapping_verify = nullptr;
  CLI::App* mapping_sign = nullptr;
  CLI::App* mapping_keygen = nullptr;
  std::string mapping_file, document_file, key_file, jwks_source, from_schema, to_schema;
  bool reverse = false, outputs = false;

  CLI::App* conformance = nullptr;
  std::string level = "V1", url, api_key;
};

void add_versioning_commands(CLI::App& app, VersioningCommands& c);

// The exit status of the command that ran, or nullopt when none of these was given.
std::optional<int> run_versioning_commands(const VersioningCommands& c);

}  // namespace schemagate::cli
