#include "validate_command.hpp"

#include "json/parse.hpp"
#include "jsonschema/schema.hpp"
#include "util/files.hpp"
#include "util/json_text.hpp"

#include <boost/json/serialize.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string_view>
#include <vector>

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
      // Read in blocks, a line at a time: memory stays at one block and the largest line
      // whatever the file's size, and the block stays in cache.
      std::FILE* in = c.instances == "-" ? stdin : std::fopen(c.instances.c_str(), "rb");
      if (!in) {
        std::cerr << "schemagate validate: cannot read " << c.instances << ": "
                  << std::strerror(errno) << "\n";
        return 2;
      }
      struct Close {
        std::FILE* f;
        ~Close() {
          if (f != stdin) std::fclose(f);
        }
      } close_in{in};
      json::ScratchDocument document;
      std::string out, pending;
      std::vector<char> block(std::size_t{1} << 20);
      std::size_t number = 0;
      // Validates one line; false stops the run (a line that is not JSON).
      auto one_line = [&](std::string_view line) {
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) return true;
        const boost::json::value* instance = nullptr;
        try {
          instance = &document.parse(line);
        } catch (const json::ParseError& e) {
          std::cout << out << std::flush;
          std::cerr << "schemagate validate: " << c.instances << ":" << number << ": " << e.what()
                    << "\n";
          return false;
        }
        if (format == js::OutputFormat::flag) {
          // The flag answer needs no result object: written as result_line would write it.
          const bool valid = schema->validate(*instance);
          all_valid = all_valid && valid;
          out += valid ? "{\"valid\":true,\"line\":" : "{\"valid\":false,\"line\":";
          out += std::to_string(number);
          out += "}\n";
        } else {
          const boost::json::value n(number);
          out += result_line(*schema, *instance, format, all_valid, &n);
          out += '\n';
        }
        if (out.size() >= (64 << 10)) {
          std::cout << out;
          out.clear();
        }
        return true;
      };
      for (;;) {
        const std::size_t got = std::fread(block.data(), 1, block.size(), in);
        if (got == 0) break;
        std::string_view rest(block.data(), got);
        for (std::size_t eol; (eol = rest.find('\n')) != std::string_view::npos;) {
          bool ok = true;
          if (pending.empty()) {
            ok = one_line(rest.substr(0, eol));
          } else {  // a line that started in the previous block
            pending.append(rest.data(), eol);
            ok = one_line(pending);
            pending.clear();
          }
          if (!ok) return 2;
          rest.remove_prefix(eol + 1);
        }
        pending.append(rest.data(), rest.size());
      }
      if (std::ferror(in)) {
        std::cout << out << std::flush;
        std::cerr << "schemagate validate: cannot read " << c.instances << ": "
                  << std::strerror(errno) << "\n";
        return 2;
      }
      if (!pending.empty() && !one_line(pending)) return 2;
      std::cout << out;
    }
  } catch (const std::exception& e) {
    std::cerr << "schemagate validate: " << e.what() << "\n";
    return 2;
  }
  return all_valid ? 0 : 1;
}

}  // namespace schemagate::cli
