#include "jsonschema/suite_support.hpp"

#include "json/parse.hpp"
#include "util/files.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>

namespace fs = std::filesystem;
namespace bj = boost::json;

namespace schemagate::testing {

std::string suite_root() {
  return std::string(SCHEMAGATE_SHARED_DIR) + "/testdata/JSON-Schema-Test-Suite";
}

namespace {
bj::value load(const fs::path& p) {
  json::ParseLimits limits;
  limits.reject_duplicate_keys = false;
  return json::parse(util::read_file(p.string()), limits);
}
}  // namespace

const jsonschema::SchemaRegistry& suite_remotes() {
  static const jsonschema::SchemaRegistry registry = [] {
    jsonschema::SchemaRegistry r;
    const fs::path root = fs::path(suite_root()) / "remotes";
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (!e.is_regular_file() || e.path().extension() != ".json") continue;
      const auto rel = fs::relative(e.path(), root).generic_string();
      r.add("http://localhost:1234/" + rel, load(e.path()));
    }
    return r;
  }();
  return registry;
}

SuiteCounts run_suite_dir(const std::string& dialect_dir, jsonschema::Dialect dialect,
                          const std::string& sub, bool assert_format) {
  SuiteCounts counts;
  const fs::path dir = fs::path(suite_root()) / "tests" / dialect_dir / sub;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    const auto groups = load(file);
    for (const auto& group : groups.as_array()) {
      const std::string gname =
          file.filename().string() + ": " + std::string(group.at("description").as_string());
      jsonschema::CompileOptions opts;
      opts.default_dialect = dialect;
      opts.registry = &suite_remotes();
      opts.assert_format = assert_format;
      std::optional<jsonschema::Schema> schema;
      std::string compile_error;
      try {
        schema = jsonschema::Schema::compile(group.at("schema"), opts);
      } catch (const std::exception& e) {
        compile_error = e.what();
      }
      for (const auto& test : group.at("tests").as_array()) {
        const std::string where = gname + " / " + std::string(test.at("description").as_string());
        const bool expected = test.at("valid").as_bool();
        if (!schema) {
          ++counts.failed;
          counts.failures.push_back({where, "compile error: " + compile_error});
          continue;
        }
        const bool fast = schema->validate(test.at("data"));
        const auto full = schema->evaluate(test.at("data"));
        if (fast == expected && full.valid == expected && (expected || !full.errors.empty())) {
          ++counts.passed;
        } else {
          ++counts.failed;
          counts.failures.push_back(
              {where, "expected " + std::string(expected ? "valid" : "invalid") + ", flag said " +
                          (fast ? "valid" : "invalid") + ", basic said " +
                          (full.valid ? "valid" : "invalid") + " (" +
                          std::to_string(full.errors.size()) + " errors)"});
        }
      }
    }
  }
  return counts;
}

}  // namespace schemagate::testing
