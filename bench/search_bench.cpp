// Registry search at scale: 100,000 agents whose text is drawn from the words of the real tool
// corpora in ../shared/eval/retrieval, searched with the real queries of those corpora.
// Prints registration throughput (one at a time into the index of all the other agents, and
// through RegistryService on SQLite, both with the offline word-vector embedder), resident memory
// per agent, the time a restart takes to build the index in bulk (postings and vector graph) and
// to read a saved graph instead, and p50/p90/p99 search latency
// on one thread, lexical only and hybrid (query embedding + HNSW + fusion), each beside the same
// searches reading every posting (no pruning); then a restart of the registry over all the
// cards in SQLite, as the server does it, with and without the saved graph.
// Usage: search_bench [AGENTS] [QUERIES]

#include "embed/word_vectors.hpp"
#include "json/parse.hpp"
#include "registry/registry_service.hpp"
#include "registry/search_index.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/files.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

namespace fs = std::filesystem;
namespace bj = boost::json;
using namespace schemagate;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<std::string> lines(const fs::path& p) {
  std::vector<std::string> out;
  std::istringstream in(util::read_file(p.string()));
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) out.push_back(std::move(l));
  }
  return out;
}

// Resident set size of this process, in bytes.
double resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) * 1024.0;
  }
  return 0;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t agents = argc > 1 ? std::stoul(argv[1]) : 100'000;
  const std::size_t query_count = argc > 2 ? std::stoul(argv[2]) : 2'000;
  const fs::path root = fs::path(SCHEMAGATE_SHARED_DIR) / "eval/retrieval";

  std::vector<std::string> words, queries;
  for (const char* corpus : {"metatool", "toollens"}) {
    for (const auto& l : lines(root / corpus / "corpus.jsonl")) {
      for (const auto& w : registry::tokenize(std::string(json::parse(l).at("text").as_string()))) {
        words.push_back(w);
      }
    }
    for (const auto& l : lines(root / corpus / "queries.jsonl")) {
      queries.emplace_back(json::parse(l).at("text").as_string());
    }
  }
  std::mt19937_64 rng(2026);
  auto phrase = [&](std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i)
      s += (i ? " " : "") + words[rng() % words.size()];
    return s;
  };
  auto make_card = [&](std::size_t i) {
    bj::array caps;
    for (int k = 0; k < 2; ++k)
      caps.push_back(bj::value(words[rng() % words.size()]));
    return bj::object{
        {"id", "agent-" + std::to_string(i)}, {"name", phrase(3)},
        {"description", phrase(25)},          {"capabilities", std::move(caps)},
        {"endpoint", "http://127.0.0.1:9/a"}, {"inputs", bj::object{{"text", "string"}}}};
  };

  auto embedder = embed::WordVectorEmbedder::load(SCHEMAGATE_DEFAULT_WORD_VECTORS);

  // The index as a restart without a saved graph builds it: cards filed in batches (words
  // counted on every core) and the vector graph built once, on every core. Then the last
  // `single` cards are registered one at a time into the index of all the others, as a
  // registration does (parse, embed, postings, a node added to the graph): registering a
  // million cards that way would take a quarter of an hour for one figure.
  const std::size_t single = std::clamp<std::size_t>(agents / 10, 1, 10'000);
  const double rss_before = resident_bytes();
  auto index_owner = std::make_unique<registry::SearchIndex>();
  auto& index = *index_owner;
  std::vector<registry::AgentCard> cards;
  std::vector<embed::Vector> vectors;
  auto new_card = [&](std::size_t i) {
    auto parsed = registry::parse_agent_card(make_card(i));
    auto& card = std::get<registry::AgentCard>(parsed);
    auto v = embedder->embed_one(registry::embedding_text(card));
    cards.push_back(std::move(card));
    vectors.push_back(std::move(v));
  };
  const auto t_made = Clock::now();
  for (std::size_t i = 0; i + single < agents; ++i)
    new_card(i);
  const double made_s = std::chrono::duration<double>(Clock::now() - t_made).count();
  // Files cards [0, n) into `into` as the registry's start does, a few thousand at a time. The
  // registry moves the cards it has just read from the store into the index; here each batch
  // is copied from the bench's own cards first, outside the clock. Returns the seconds taken,
  // `filing_s` the share of filing the cards (the rest is the graph).
  auto bulk_load = [&](registry::SearchIndex& into, std::size_t n, const std::string& graph,
                       bool& graph_read, double& filing_s) {
    filing_s = 0;
    into.begin_bulk_load();
    for (std::size_t i = 0; i < n;) {
      std::vector<registry::SearchIndex::Entry> batch;
      for (; i < n && batch.size() < 4096; ++i)
        batch.push_back({cards[i], {}, vectors[i]});
      const auto t = Clock::now();
      into.upsert_many(std::move(batch));
      filing_s += std::chrono::duration<double>(Clock::now() - t).count();
    }
    const auto t = Clock::now();
    graph_read = !graph.empty() && into.load_vector_graph(graph);
    into.end_bulk_load();
    return filing_s + std::chrono::duration<double>(Clock::now() - t).count();
  };
  bool unused = false, graph_read = false;
  double built_filing_s = 0;
  const double rebuild_s = bulk_load(index, agents - single, {}, unused, built_filing_s);
  const auto t0 = Clock::now();
  for (std::size_t i = agents - single; i < agents; ++i) {
    new_card(i);
    index.upsert(cards.back(), {}, vectors.back());
  }
  const double index_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double rss_index = resident_bytes() - rss_before;
  const std::size_t card_bytes = [&] {
    std::size_t n = 0;
    for (const auto& c : cards)
      n += c.id.size() + c.name.size() + c.description.size() + sizeof c;
    return n + vectors.size() * (vectors.empty() ? 0 : vectors[0].size() * sizeof(float));
  }();
  const auto dir = fs::temp_directory_path() / "schemagate-search-bench";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string graph_file = (dir / "agents.vector-graph").string();
  const auto t_save = Clock::now();
  index.save_vector_graph(graph_file);
  const double save_s = std::chrono::duration<double>(Clock::now() - t_save).count();
  // The same cards and vectors in a SQLite store as registrations leave them, written in large
  // transactions (registering a million cards one commit at a time would take hours), for the
  // restart through the registry at the end.
  util::SystemClock clock;
  const auto full_db = (dir / "restart.db").string();
  {
    auto full = store::open_store({full_db}, clock);
    for (std::size_t i = 0; i < agents;) {
      std::vector<store::Write> writes;
      for (; i < agents && writes.size() < 20'000; ++i) {
        for (auto& w : registry::RegistryService::card_writes(
                 cards[i], embedder->model(), registry::embedding_text(cards[i]), vectors[i]))
          writes.push_back(std::move(w));
      }
      full->commit(writes);
    }
  }
  // A restart that reads the saved graph instead of building one.
  double reread_cards_s = 0;
  const double reread_s = [&] {
    registry::SearchIndex again;
    return bulk_load(again, agents, graph_file, graph_read, reread_cards_s);
  }();
  // Searches while the graph is built: the registration that crosses the exact-search threshold
  // starts the build on a thread of its own and returns; searches scan exactly until it is
  // ready (on this machine the build shares the cores with them).
  const std::size_t during_n = std::min<std::size_t>(agents, 200'000);
  double crossing_ms = 0, build_during_s = 0;
  std::vector<double> during_ms;
  {
    registry::SearchIndex growing(during_n);
    for (std::size_t i = 0; i + 1 < during_n; ++i)
      growing.upsert(cards[i], {}, vectors[i]);
    const auto tc = Clock::now();
    growing.upsert(cards[during_n - 1], {}, vectors[during_n - 1]);
    crossing_ms = std::chrono::duration<double, std::milli>(Clock::now() - tc).count();
    registry::Filters none;
    for (std::size_t q = 0; !growing.vector_graph_ready(); ++q) {
      const auto& text = queries[(q * 7919) % queries.size()];
      const auto s = Clock::now();
      growing.search(text, embedder->embed_one(text), none, 10, 0, true,
                     [](const registry::AgentCard&) { return true; });
      during_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
    }
    build_during_s = std::chrono::duration<double>(Clock::now() - tc).count();
  }
  cards.clear();
  vectors.clear();

  // Through the service, with every registration committed to SQLite (synchronous=FULL).
  const std::size_t durable = std::min<std::size_t>(agents, 2'000);
  auto store = store::open_store({(dir / "bench.db").string()}, clock);
  double service_s = 0;
  {
    registry::RegistryService service(*store, clock, {embedder.get(), 10000, {}});
    const auto t1 = Clock::now();
    for (std::size_t i = 0; i < durable; ++i)
      service.create(make_card(i));
    service_s = std::chrono::duration<double>(Clock::now() - t1).count();
  }

  registry::Filters none;
  auto measure = [&](bool hybrid, std::size_t& hits) {
    std::vector<double> ms;
    ms.reserve(query_count);
    for (std::size_t q = 0; q < query_count; ++q) {
      const auto& text = queries[(q * 7919) % queries.size()];
      const auto s = Clock::now();
      const auto v = hybrid ? embedder->embed_one(text) : embed::Vector{};
      hits +=
          index.search(text, v, none, 10, 0, true, [](const registry::AgentCard&) { return true; })
              .hits.size();
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
    }
    return ms;
  };
  std::size_t lexical_hits = 0, hits = 0, unused_hits = 0;
  const auto lexical_ms = measure(false, lexical_hits);
  const auto ms = measure(true, hits);
  // The anchor: the same searches reading every posting of every query word.
  index.prune_postings(false);
  const auto full_lexical_ms = measure(false, unused_hits);
  const auto full_ms = measure(true, unused_hits);
  index.prune_postings(true);
  index_owner.reset();  // a million cards twice would not fit in memory

  // A restart through the registry, as the server does it: every card read from SQLite and
  // parsed, its stored vector checked and decoded, postings filed, and the saved graph read (or,
  // without one, built in the background while searches scan: the server answers at once).
  auto registry_restart = [&](const std::string& graph, std::size_t& indexed) {
    auto full = store::open_store({full_db}, clock);
    const auto t = Clock::now();
    registry::RegistryService reopened(*full, clock,
                                       {embedder.get(), 10000, {}, nullptr, {}, graph});
    const double s = std::chrono::duration<double>(Clock::now() - t).count();
    indexed = reopened.size();
    return s;
  };
  std::size_t indexed_with_graph = 0, indexed_without = 0;
  const double restart_s = registry_restart(graph_file, indexed_with_graph);
  const double restart_building_s = registry_restart({}, indexed_without);
  std::printf("agents %zu, queries %zu (real MetaTool/ToolLens queries), top 10, one thread\n",
              agents, query_count);
  std::printf(
      "cards parsed and embedded: %.1f us per agent; registration into the index of %zu others "
      "(one at a time: parse, embed, postings, graph node): %.0f agents/s\n",
      1e6 * made_s / static_cast<double>(agents - single), agents - single,
      static_cast<double>(single) / index_s);
  std::printf("service registration on SQLite (durable, %zu agents): %.0f agents/s\n", durable,
              static_cast<double>(durable) / service_s);
  std::printf(
      "resident memory of the index: %.0f bytes per agent (cards and vectors kept by the "
      "bench: %.0f bytes per agent)\n",
      rss_index / static_cast<double>(agents),
      static_cast<double>(card_bytes) / static_cast<double>(agents));
  std::printf(
      "index built in bulk, as a restart without a saved graph does (%zu agents, all cores): "
      "%.1f s (cards filed in %.1f s, graph built in %.1f s)\n",
      agents - single, rebuild_s, built_filing_s, rebuild_s - built_filing_s);
  std::printf(
      "restart, reading the saved vector graph%s: %.1f s (cards filed in %.1f s; graph saved in "
      "%.1f s, %.0f MB)\n",
      graph_read ? "" : " (NOT READ: built instead)", reread_s, reread_cards_s, save_s,
      static_cast<double>(fs::exists(graph_file + ".hnsw") ? fs::file_size(graph_file + ".hnsw")
                                                           : 0) /
          1e6);
  if (!during_ms.empty()) {
    std::printf(
        "graph built in the background at %zu agents: the registration that starts it took %.1f "
        "ms; %zu hybrid searches during the %.1f s build: p50 %.2f ms, p99 %.2f ms\n",
        during_n, crossing_ms, during_ms.size(), build_during_s, percentile(during_ms, 0.50),
        percentile(during_ms, 0.99));
  }
  std::printf(
      "lexical search latency: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (avg hits "
      "%.1f)\n",
      percentile(lexical_ms, 0.50), percentile(lexical_ms, 0.90), percentile(lexical_ms, 0.99),
      *std::max_element(lexical_ms.begin(), lexical_ms.end()),
      static_cast<double>(lexical_hits) / static_cast<double>(query_count));
  std::printf(
      "hybrid search latency: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (avg hits "
      "%.1f)\n",
      percentile(ms, 0.50), percentile(ms, 0.90), percentile(ms, 0.99),
      *std::max_element(ms.begin(), ms.end()),
      static_cast<double>(hits) / static_cast<double>(query_count));
  std::printf(
      "reading every posting instead (the anchor): lexical p50 %.2f ms, p99 %.2f ms; hybrid p50 "
      "%.2f ms, p99 %.2f ms\n",
      percentile(full_lexical_ms, 0.50), percentile(full_lexical_ms, 0.99),
      percentile(full_ms, 0.50), percentile(full_ms, 0.99));
  std::printf(
      "restart through the registry on SQLite (%zu agents read, parsed and filed; saved graph "
      "read): ready in %.1f s (%.1f us per agent); with no saved graph (built in the background "
      "while searches scan): ready in %.1f s\n",
      indexed_with_graph, restart_s, 1e6 * restart_s / static_cast<double>(agents),
      restart_building_s);
  if (indexed_with_graph != agents || indexed_without != agents) {
    std::printf("RESTART INDEXED %zu and %zu agents of %zu\n", indexed_with_graph, indexed_without,
                agents);
    return 1;
  }
  fs::remove_all(dir);
  return 0;
}
