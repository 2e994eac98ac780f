// schemagate side of the validator comparison, on Google Benchmark. For each schema folder
// (schema.json + instances.jsonl) given after the benchmark flags, registers:
//   <name>/compile    compiling the schema
//   <name>/preparsed  validating already-parsed instances (flag mode)
//   <name>/raw        parsing the JSON text and validating it
// and reports per-instance times through the items_per_second counter plus `valid`, the number
// of valid instances (compared against ajv's by bench/compare.mjs).

#include "json/parse.hpp"
#include "jsonschema/schema.hpp"
#include "util/files.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;
namespace js = schemagate::jsonschema;

namespace {

struct Corpus {
  std::string name;
  boost::json::value schema;
  std::vector<std::string> lines;
  std::vector<boost::json::value> instances;
};

Corpus load(const fs::path& dir) {
  Corpus c;
  c.name = dir.filename().string();
  c.schema = schemagate::json::parse(schemagate::util::read_file((dir / "schema.json").string()));
  std::istringstream in(schemagate::util::read_file((dir / "instances.jsonl").string()));
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    c.instances.push_back(schemagate::json::parse(line));
    c.lines.push_back(std::move(line));
  }
  return c;
}

js::CompileOptions options() {
  js::CompileOptions opts;
  opts.default_dialect = js::Dialect::draft7;  // the corpus' schemas without $schema are draft-07
  return opts;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::vector<std::shared_ptr<Corpus>> corpora;
  for (int i = 1; i < argc; ++i)
    corpora.push_back(std::make_shared<Corpus>(load(argv[i])));

  for (const auto& c : corpora) {
    std::shared_ptr<js::Schema> schema;
    try {
      schema = std::make_shared<js::Schema>(js::Schema::compile(c->schema, options()));
    } catch (const js::SchemaError& e) {
      std::fprintf(stderr, "skipping %s: %s\n", c->name.c_str(), e.what());
      continue;
    }
    double valid = 0;
    for (const auto& inst : c->instances)
      valid += schema->validate(inst);

    benchmark::RegisterBenchmark((c->name + "/compile").c_str(), [c](benchmark::State& st) {
      for (auto _ : st)
        benchmark::DoNotOptimize(js::Schema::compile(c->schema, options()));
    })->Unit(benchmark::kMillisecond);

    benchmark::RegisterBenchmark((c->name + "/preparsed").c_str(),
                                 [c, schema, valid](benchmark::State& st) {
                                   for (auto _ : st) {
                                     for (const auto& inst : c->instances) {
                                       benchmark::DoNotOptimize(schema->validate(inst));
                                     }
                                   }
                                   st.SetItemsProcessed(st.iterations() * c->instances.size());
                                   st.counters["valid"] = valid;
                                   st.counters["instances"] = c->instances.size();
                                 });

    benchmark::RegisterBenchmark((c->name + "/raw").c_str(), [c, schema](benchmark::State& st) {
      schemagate::json::ScratchDocument document;  // as `schemagate validate --instances`
      for (auto _ : st) {
        for (const auto& line : c->lines) {
          benchmark::DoNotOptimize(schema->validate(document.parse(line)));
        }
      }
      st.SetItemsProcessed(st.iterations() * c->lines.size());
    });
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
