#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace schemagate::cli {

struct ValidateCommand {
  std::string schema;
  std::string instance;
  std::string instances;
  std::string output = "basic";
  std::string dialect = "2020-12";
  std::vector<std::string> refs;  // URI=FILE
  bool assert_format = false;
};

void add_validate(CLI::App& app, ValidateCommand& command);

// Exit status: 0 every instance valid, 1 some invalid, 2 usage or schema error.
int run_validate(const ValidateCommand& command);

}  // namespace schemagate::cli
