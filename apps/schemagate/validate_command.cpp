#include "validate_command.hpp"

#include "json/parse.hpp"
#include "jsonschema/schema.hpp"
#include "util/files.hpp"
#include "util/json_text.hpp"

#include <boost/json/serialize.hpp>

#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

namespace schemagate::cli {

namespace js = schemagate::jsonschema;

void add_validate(CLI::App& app, ValidateCommand& c) {
  auto* sub = app.add_subcommand(
      "validate",
      "Validate JSON instances against a JSON Schema (2020-12, 2019-09, draft-07); prints the "
      "result as JSON (one line per instance for --instances); exit 0 all valid, 1 some "
      "invalid, 2 usage or schema error");
  sub->add_option("--schema", c.schema, "Schema file")->required();
  auto* one = sub->add_option("--instance", c.instance, "One JSON instance file ('-' for stdin)");
  auto* many = sub->add_option("--instances", c.instances,
                               "A JSON Lines file: one instance per line ('-' for stdin)");
  one->excludes(many);
  many->excludes(one);
  sub->add_option("--output", c.output, "flag (valid or not) or basic (every error)")
      ->check(CLI::IsMember({"flag", "basic"}))
      ->capture_default_str();
  sub->add_option("--ref", c.refs,
                  "Register a document that $ref may reach: URI=FILE (repeatable); nothing is "
                  "fetched from the network");
  sub->add_option("--default-dialect", c.dialect, "Dialect when the schema has no $schema")
      ->check(CLI::IsMember({"2020-12", "2019-09", "draft-07"}))
      ->capture_default_str();
  sub->add_flag("--assert-format", c.assert_format,
                "Treat `format` as an assertion (date-time, email, uri, ...)");
}

namespace {

boost::json::value parse_file_json(const std::string& path, const std::string& what) {
  try {
    json::ParseLimits limits;
    limits.max_document_bytes = std::size_t{1} << 31;
    limits.max_depth = 1000;
    return json::parse(util::read_file(path), limits);
  } catch (const json::ParseError& e) {
    throw std::runtime_error(what + " " + path + ": " + e.what());
  }
}

std::string result_line(const js::Schema& schema, const boost::json::value& instance,
                        js::OutputFormat format, bool& all_valid,
                        const boost::json::value* line_number) {
  const auto result = schema.evaluate(instance, format);
  all_valid = all_valid && result.valid;
  auto out = result.to_json(format);
  if (line_number) out.as_object()["line"] = *line_number;
  return util::json_text(out);
}

}  // namespace

int run_validate(const ValidateCommand& c) {
  if (c.instance.empty() && c.instances.empty()) {
    std::cerr << "schemagate validate: give --instance FILE or --instances FILE.jsonl\n";
    return 2;
  }
  std::optional<js::Schema> schema;
  js::SchemaRegistry registry;
  try {
    for (const auto& ref : c.refs) {
      const auto eq = ref.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::cerr << "schemagate validate: --ref takes URI=FILE, got \"" << ref << "\"\n";
        return 2;
      }
      registry.add(ref.substr(0, eq), parse_file_json(ref.substr(eq + 1), "referenced schema"));
    }
    js::CompileOptions opts;
    opts.registry = &registry;
    opts.assert_format = c.assert_format;
    opts.default_dialect = c.dialect == "draft-07"  ? js::Dialect::draft7
                           : c.dialect == "2019-09" ? js::Dialect::draft2019_09
                                                    : js::Dialect::draft2020_12;
    opts.base_uri = "file://" + std::filesystem::absolute(c.schema).lexically_normal().string();
    schema = js::Schema::compile(parse_file_json(c.schema, "schema"), opts);
  } catch (const std::exception& e) {
    std::cerr << "schemagate validate: " << e.what() << "\n";
    return 2;
  }
  const auto format = c.output == "flag" ? js::OutputFormat::flag : js::OutputFormat::basic;
  bool all_valid = true;
  try {
    if (!c.instance.empty()) {
      std::cout << result_line(*schema, parse_file_json(c.instance, "instance"), format, all_valid,
                               nullptr)
                << "\n";
    } else {
      std::istringstream lines(util::read_file(c.instances));
      std::size_t number = 0;
      for (std::string line; std::getline(lines, line);) {
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        boost::json::value instance;
        try {
          instance = json::parse(line);
        } catch (const json::ParseError& e) {
          std::cerr << "schemagate validate: " << c.instances << ":" << number << ": " << e.what()
                    << "\n";
          return 2;
        }
        const boost::json::value n(number);
        std::cout << result_line(*schema, instance, format, all_valid, &n) << "\n";
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "schemagate validate: " << e.what() << "\n";
    return 2;
  }
  return all_valid ? 0 : 1;
}

}  // namespace schemagate::cli
