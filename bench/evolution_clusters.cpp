// Seed 000 §6.2.1 clustering quality and speed with the offline embedder: MetaTool's queries
// (../shared/eval/retrieval/metatool) stand in for `other` fragments; queries of one tool should
// share a cluster. Prints V-measure (homogeneity, completeness) and the number of clusters at
// several thresholds, the default marked, and the ingest rate: fragments per second through the
// engine (store event, embedding, clustering, durable state) and through clustering alone.
//
//   build/release/bench/evolution_clusters [PER_TOOL]   (default 20 queries per tool)

#include "embed/word_vectors.hpp"
#include "evolution/clustering.hpp"
#include "evolution/evolution_engine.hpp"
#include "evolution/inducer.hpp"
#include "exchange/agent_transport.hpp"
#include "exchange/exchange_service.hpp"
#include "json/parse.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"

#include <unistd.h>
#include <boost/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

using namespace schemagate;
namespace bj = boost::json;

namespace {

struct Fragment {
  std::string text;
  std::string tool;
};

std::vector<Fragment> load(std::size_t per_tool) {
  const std::string dir = SCHEMAGATE_SHARED_DIR "/eval/retrieval/metatool/";
  std::map<std::string, std::vector<std::string>> tools_of;
  std::ifstream qrels(dir + "qrels.tsv");
  std::string line;
  std::getline(qrels, line);  // header
  while (std::getline(qrels, line)) {
    const auto a = line.find('\t'), b = line.find('\t', a + 1);
    tools_of[line.substr(0, a)].push_back(line.substr(a + 1, b - a - 1));
  }
  std::map<std::string, std::size_t> taken;
  std::vector<Fragment> out;
  std::ifstream queries(dir + "queries.jsonl");
  while (std::getline(queries, line)) {
    const auto q = json::parse(line);
    const auto& tools = tools_of[std::string(q.at("_id").as_string())];
    if (tools.size() != 1) continue;  // one intent per fragment
    if (taken[tools[0]]++ >= per_tool) continue;
    out.push_back({std::string(q.at("text").as_string()), tools[0]});
  }
  return out;
}

// V-measure (Rosenberg and Hirschberg, 2007) of a clustering against the true classes.
struct VMeasure {
  double homogeneity, completeness, v;
};
VMeasure v_measure(const std::vector<std::string>& classes,
                   const std::vector<std::size_t>& clusters) {
  const double n = static_cast<double>(classes.size());
  std::map<std::pair<std::string, std::size_t>, double> joint;
  std::map<std::string, double> pc;
  std::map<std::size_t, double> pk;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    joint[{classes[i], clusters[i]}] += 1;
    pc[classes[i]] += 1;
    pk[clusters[i]] += 1;
  }
  const auto entropy = [&](const auto& m) {
    double h = 0;
    for (const auto& [k, c] : m)
      h -= c / n * std::log(c / n);
    return h;
  };
  const double hc = entropy(pc), hk = entropy(pk);
  double hc_k = 0, hk_c = 0;
  for (const auto& [ck, c] : joint) {
    hc_k -= c / n * std::log(c / pk[ck.second]);
    hk_c -= c / n * std::log(c / pc[ck.first]);
  }
  const double h = hc == 0 ? 1 : 1 - hc_k / hc;
  const double c = hk == 0 ? 1 : 1 - hk_c / hk;
  return {h, c, h + c == 0 ? 0 : 2 * h * c / (h + c)};
}

class NoAgents final : public exchange::AgentTransport {
 public:
  Reply post_json(const std::string&, const std::string&, std::chrono::milliseconds,
                  const std::vector<std::pair<std::string, std::string>>&) override {
    return {};
  }
  std::unique_ptr<Stream> post_for_stream(
      const std::string&, const std::string&, std::chrono::milliseconds,
      const std::vector<std::pair<std::string, std::string>>&) override {
    return nullptr;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::size_t per_tool = argc > 1 ? std::stoul(argv[1]) : 20;
  const auto fragments = load(per_tool);
  auto embedder = embed::WordVectorEmbedder::load(SCHEMAGATE_DEFAULT_WORD_VECTORS);
  std::vector<std::string> content;
  std::vector<std::string> classes;
  for (const auto& f : fragments) {
    content.push_back(evolution::content_text(f.text));
    classes.push_back(f.tool);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto vectors = embedder->embed(content);
  const double embed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::size_t tools = 0;
  {
    std::map<std::string, int> distinct;
    for (const auto& c : classes)
      distinct[c] = 1;
    tools = distinct.size();
  }
  const double def = evolution::default_threshold(embedder->model());
  std::printf("MetaTool: %zu queries of %zu tools (%zu per tool at most), embedder %s\n",
              fragments.size(), tools, per_tool, embedder->model().c_str());
  std::printf("threshold  clusters  homogeneity  completeness  V-measure  clustering frag/s\n");
  for (const double threshold : {0.5, 0.6, 0.65, def, 0.75, 0.8, 0.85, 0.9}) {
    std::vector<std::vector<float>> centroids;
    std::vector<std::int64_t> sizes;
    std::vector<std::size_t> assigned;
    const auto c0 = std::chrono::steady_clock::now();
    for (const auto& v : vectors) {
      std::vector<const std::vector<float>*> view;
      for (const auto& c : centroids)
        view.push_back(&c);
      const auto match = evolution::nearest(view, v, threshold);
      if (match) {
        evolution::absorb(centroids[*match], sizes[*match]++, v);
        assigned.push_back(*match);
      } else {
        centroids.push_back(v);
        sizes.push_back(1);
        assigned.push_back(centroids.size() - 1);
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
    const auto m = v_measure(classes, assigned);
    std::printf("%9.2f%s %8zu  %11.3f  %12.3f  %9.3f  %17.0f\n", threshold,
                threshold == def ? "*" : " ", centroids.size(), m.homogeneity, m.completeness, m.v,
                static_cast<double>(vectors.size()) / (s + embed_s));
  }
  std::printf("* the default for this embedder\n");

  // The whole path: fragments recorded by the exchange, taken in by one engine step.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("schemagate-evolution-bench-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    util::ManualClock clock;
    auto store = store::open_store({(dir / "bench.db").string()}, clock);
    NoAgents agents;
    exchange::ExchangeService exchange(*store, clock, agents);
    exchange.publish("bench", "1.0.0", json::parse(R"({"schema_id": "bench_v1", "scenario": "bench",
      "keys": [{"key_name": "x", "key_type": "string", "required": false,
                "semantic_description": "x"}]})"));
    std::vector<bj::value> events;
    for (std::size_t i = 0; i < fragments.size(); ++i) {
      events.push_back(bj::object{{"schema_id", "bench_v1"},
                                  {"client_id", "c" + std::to_string(i % 50)},
                                  {"text", fragments[i].text},
                                  {"at", util::format_rfc3339(clock.now())}});
    }
    store->append_events("other/bench", events);
    evolution::EvolutionOptions options;
    options.heat_threshold = 1e12;  // measure ingest, not patch synthesis
    evolution::EvolutionEngine engine(*store, clock, exchange, *embedder, options);
    const auto e0 = std::chrono::steady_clock::now();
    engine.step();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - e0).count();
    std::printf(
        "engine ingest: %zu fragments in %.2f s = %.0f fragments/s (embedding, clustering, "
        "state in SQLite)\n",
        fragments.size(), s, static_cast<double>(fragments.size()) / s);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
