// The embedders, the vector index and the hybrid ranking, without a socket.

#include "embed/word_vectors.hpp"
#include "registry/registry_service.hpp"
#include "registry/search_index.hpp"
#include "registry/vector_index.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/text.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>

namespace {

using namespace schemagate;
namespace bj = boost::json;

const std::string kWordVectors = SCHEMAGATE_SOURCE_DIR "/data/word-vectors/glove-100d.sgwv";

float dot(const embed::Vector& a, const embed::Vector& b) {
  float s = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

TEST(Text, SplitsWordsAtPunctuationAndCamelCase) {
  EXPECT_EQ(util::split_words("getWeatherForecast, for PARIS-2026!"),
            (std::vector<std::string>{"get", "weather", "forecast", "for", "paris", "2026"}));
  EXPECT_TRUE(util::split_words(" ,;- ").empty());
  EXPECT_EQ(util::split_words("ABCdef xY caf\xc3\xa9"
                              "Bar"),
            (std::vector<std::string>{"abcdef", "x", "y",
                                      "caf\xc3\xa9"
                                      "bar"}));
  // The same words as the C library's classes give, on random bytes of every kind.
  const auto by_libc = [](std::string_view text) {
    std::vector<std::string> out;
    std::string cur;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x80 || std::isalnum(c)) {
        if (!cur.empty() && std::isupper(c) &&
            std::islower(static_cast<unsigned char>(text[i - 1]))) {
          out.push_back(std::move(cur));
          cur.clear();
        }
        cur += c >= 0x80 ? static_cast<char>(c) : static_cast<char>(std::tolower(c));
      } else if (!cur.empty()) {
        out.push_back(std::move(cur));
        cur.clear();
      }
    }
    if (!cur.empty()) out.push_back(std::move(cur));
    return out;
  };
  std::mt19937 rng(7);
  for (int n = 0; n < 5'000; ++n) {
    std::string text(rng() % 40, ' ');
    for (auto& c : text)
      c = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : "aZ9 -Ab"[rng() % 7]);
    ASSERT_EQ(util::split_words(text), by_libc(text)) << text;
  }
}

TEST(Text, Base64RoundTripsEveryLengthAndRejectsGarbage) {
  std::mt19937 rng(7);
  for (std::size_t n = 0; n < 40; ++n) {
    std::string bytes(n, '\0');
    for (auto& c : bytes)
      c = static_cast<char>(rng());
    std::string back;
    const auto text = util::encode_base64(bytes);
    EXPECT_EQ(text.size() % 4, 0u);
    ASSERT_TRUE(util::decode_base64(text, back));
    EXPECT_EQ(back, bytes);
  }
  EXPECT_EQ(util::encode_base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(util::encode_base64("fo"), "Zm8=");
  std::string out;
  EXPECT_FALSE(util::decode_base64("Zm9", out));
  EXPECT_FALSE(util::decode_base64("Zm!v", out));
  EXPECT_FALSE(util::decode_base64("Zm==Zm9v", out));
}

class WordVectors : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { embedder_ = embed::WordVectorEmbedder::load(kWordVectors); }
  static void TearDownTestSuite() { embedder_.reset(); }
  static std::unique_ptr<embed::WordVectorEmbedder> embedder_;
};
std::unique_ptr<embed::WordVectorEmbedder> WordVectors::embedder_;

TEST_F(WordVectors, RelatedTextsAreCloserThanUnrelatedOnes) {
  ASSERT_EQ(embedder_->dimensions(), 100u);
  EXPECT_GT(embedder_->vocabulary_size(), 100000u);
  const auto flight = embedder_->embed_one("book a flight to Paris");
  const auto airline = embedder_->embed_one("airline ticket reservations");
  const auto pdf = embedder_->embed_one("convert a PDF document to plain text");
  const auto weather = embedder_->embed_one("will it rain tomorrow");
  const auto forecast = embedder_->embed_one("seven-day weather forecast");
  EXPECT_NEAR(dot(flight, flight), 1.0f, 1e-4);
  EXPECT_GT(dot(flight, airline), dot(flight, pdf) + 0.1f);
  EXPECT_GT(dot(weather, forecast), dot(weather, airline) + 0.1f);
  // Unknown words contribute nothing; a text of nothing known is the zero vector.
  const auto none = embedder_->embed_one("zzqxv qqzzx");
  EXPECT_EQ(dot(none, none), 0.0f);
  const auto batch = embedder_->embed({"book a flight to Paris", "zzqxv"});
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0], flight);
}

TEST(WordVectorsFile, DamagedOrMissingFilesAreNamedInTheError) {
  const auto dir = std::filesystem::temp_directory_path() / "schemagate-wv-test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "bad.sgwv").string();
  auto expect_error = [&](const std::string& content, const std::string& fragment) {
    std::ofstream(path, std::ios::binary) << content;
    try {
      embed::WordVectorEmbedder::load(path);
      ADD_FAILURE() << "loaded a damaged file: " << fragment;
    } catch (const embed::EmbedError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error("not a vector file at all", "no SGWV header");
  std::string header("SGWV\x01\0\0\0\x02\0\0\0\x01\0\0\0", 16);
  expect_error(header +
                   "\x03"
                   "cat" +
                   std::string("\x01\x02", 2),
               "size does not match");
  expect_error(header +
                   "\x09"
                   "ca",
               "word list ends early");
  EXPECT_THROW(embed::WordVectorEmbedder::load((dir / "missing.sgwv").string()), embed::EmbedError);
  std::filesystem::remove_all(dir);
}

std::vector<embed::Vector> random_unit_vectors(std::size_t n, std::size_t dims, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g;
  std::vector<embed::Vector> out(n, embed::Vector(dims));
  for (auto& v : out) {
    for (auto& x : v)
      x = g(rng);
    embed::normalize(v);
  }
  return out;
}

TEST(VectorIndexTest, GraphSearchAgreesWithExactSearch) {
  const auto vectors = random_unit_vectors(3000, 32, 1);
  registry::VectorIndex exact(1'000'000), graph(500);
  for (std::uint32_t i = 0; i < vectors.size(); ++i) {
    exact.add(i, vectors[i]);
    graph.add(i, vectors[i]);
  }
  graph.wait_for_graph();  // built in the background from the 500th vector on
  EXPECT_FALSE(exact.approximate());
  EXPECT_TRUE(graph.approximate());
  const auto queries = random_unit_vectors(100, 32, 2);
  const auto all = [](std::uint32_t) { return true; };
  std::size_t found = 0;
  for (const auto& q : queries) {
    const auto want = exact.nearest(q, 10, all);
    const auto got = graph.nearest(q, 10, all);
    ASSERT_EQ(want.size(), 10u);
    ASSERT_EQ(got.size(), 10u);
    EXPECT_GE(want.front().similarity, want.back().similarity);
    std::set<std::uint32_t> truth;
    for (const auto& n : want)
      truth.insert(n.slot);
    for (const auto& n : got)
      found += truth.count(n.slot);
  }
  EXPECT_GE(static_cast<double>(found) / 1000.0, 0.95);  // recall@10
}

TEST(VectorIndexTest, ABulkLoadBuildsTheGraphOnceWithTheSameAnswers) {
  const auto vectors = random_unit_vectors(3000, 32, 4);
  registry::VectorIndex exact(1'000'000), bulk(500);
  bulk.begin_bulk_load();
  for (std::uint32_t i = 0; i < vectors.size(); ++i) {
    exact.add(i, vectors[i]);
    bulk.add(i, vectors[i]);
  }
  EXPECT_FALSE(bulk.approximate());  // nothing built while loading
  bulk.end_bulk_load();
  ASSERT_TRUE(bulk.approximate());
  const auto all = [](std::uint32_t) { return true; };
  std::size_t found = 0;
  for (const auto& q : random_unit_vectors(100, 32, 5)) {
    std::set<std::uint32_t> truth;
    for (const auto& n : exact.nearest(q, 10, all))
      truth.insert(n.slot);
    for (const auto& n : bulk.nearest(q, 10, all))
      found += truth.count(n.slot);
  }
  EXPECT_GE(static_cast<double>(found) / 1000.0, 0.95);
}

// A restart reads the saved graph back: its nodes follow their cards to new slots, nodes of
// removed or changed cards are dropped, new vectors are added, and search answers as an exact
// scan would.
TEST(VectorIndexTest, ASavedGraphIsReadBackWhereItsCardsNowAre) {
  const auto dir = std::filesystem::temp_directory_path() / "schemagate-vector-graph-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "agents.vector-graph").string();
  const auto vectors = random_unit_vectors(3000, 32, 7);
  {
    registry::VectorIndex first(500);
    first.begin_bulk_load();
    for (std::uint32_t i = 0; i < vectors.size(); ++i)
      first.add(i, vectors[i]);
    first.end_bulk_load();
    first.erase(5);  // a card removed before the save
    ASSERT_TRUE(first.save_graph(path, [](std::uint32_t s) { return "k" + std::to_string(s); }));
  }
  ASSERT_TRUE(std::filesystem::exists(path + ".hnsw"));

  // The next run: cards in reverse order, k0..k99 gone, k100 changed, 200 new cards.
  std::vector<std::pair<std::string, embed::Vector>> now;
  for (std::size_t i = vectors.size(); i-- > 100;)
    now.emplace_back("k" + std::to_string(i), vectors[i]);
  const auto fresh = random_unit_vectors(201, 32, 8);
  now.back().second = fresh[200];  // k100
  for (std::size_t i = 0; i < 200; ++i)
    now.emplace_back("new" + std::to_string(i), fresh[i]);
  std::map<std::string, std::uint32_t> slots;
  registry::VectorIndex exact(1'000'000), second(500);
  second.begin_bulk_load();
  for (std::uint32_t s = 0; s < now.size(); ++s) {
    slots[now[s].first] = s;
    exact.add(s, now[s].second);
    second.add(s, now[s].second);
  }
  const auto slot_of = [&](std::string_view key) -> std::optional<std::uint32_t> {
    const auto it = slots.find(std::string(key));
    if (it == slots.end()) return std::nullopt;
    return it->second;
  };
  ASSERT_TRUE(second.load_graph(path, slot_of));
  second.end_bulk_load();
  ASSERT_TRUE(second.approximate());
  const auto all = [](std::uint32_t) { return true; };
  // Each card, new or changed, is its own nearest neighbour, where it now is.
  for (const char* key : {"k100", "k2999", "k1500", "new0", "new199"}) {
    const auto s = slots.at(key);
    const auto got = second.nearest(now[s].second, 1, all);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got.front().slot, s) << key;
  }
  std::size_t found = 0;
  for (const auto& q : random_unit_vectors(100, 32, 9)) {
    std::set<std::uint32_t> truth;
    for (const auto& n : exact.nearest(q, 10, all))
      truth.insert(n.slot);
    for (const auto& n : second.nearest(q, 10, all)) {
      EXPECT_LT(n.slot, now.size());
      found += truth.count(n.slot);
    }
  }
  EXPECT_GE(static_cast<double>(found) / 1000.0, 0.95);  // recall@10 as a fresh build

  // A damaged graph file, or one for other dimensions, is not read: the graph is built.
  std::filesystem::resize_file(path + ".hnsw", std::filesystem::file_size(path + ".hnsw") / 2);
  registry::VectorIndex damaged(500);
  damaged.begin_bulk_load();
  for (std::uint32_t s = 0; s < now.size(); ++s)
    damaged.add(s, now[s].second);
  EXPECT_FALSE(damaged.load_graph(path, slot_of));
  damaged.end_bulk_load();
  EXPECT_TRUE(damaged.approximate());
  ASSERT_TRUE(second.save_graph(path, [&](std::uint32_t s) { return now[s].first; }));
  registry::VectorIndex other_dims(500);
  other_dims.begin_bulk_load();
  for (std::uint32_t s = 0; s < 600; ++s)
    other_dims.add(s, random_unit_vectors(1, 16, s).front());
  EXPECT_FALSE(other_dims.load_graph(path, slot_of));
  std::filesystem::remove_all(dir);
}

// Crossing the threshold starts the graph on a thread of its own: searches meanwhile scan
// exactly, and what is added or erased during the build is in the graph when it is taken.
TEST(VectorIndexTest, TheGraphIsBuiltInTheBackgroundAndCatchesUp) {
  const auto vectors = random_unit_vectors(20000, 32, 11);
  registry::VectorIndex index(10000);
  for (std::uint32_t i = 0; i < 10000; ++i)
    index.add(i, vectors[i]);  // the 10,000th starts the build and returns at once
  const auto all = [](std::uint32_t) { return true; };
  // Added and erased while the graph may still be building.
  for (std::uint32_t i = 10000; i < vectors.size(); ++i)
    index.add(i, vectors[i]);
  index.erase(3);
  index.erase(15000);
  for (std::uint32_t s : {0u, 9999u, 10000u, 19999u}) {
    const auto got = index.nearest(vectors[s], 1, all);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got.front().slot, s);  // exact or through the graph, the same answer
  }
  index.wait_for_graph();
  ASSERT_TRUE(index.approximate());
  for (std::uint32_t s : {0u, 9999u, 10000u, 12345u, 19999u}) {
    const auto got = index.nearest(vectors[s], 1, all);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got.front().slot, s) << "a vector added during the build is in the graph";
  }
  for (std::uint32_t s : {3u, 15000u}) {
    for (const auto& n : index.nearest(vectors[s], 10, all))
      EXPECT_NE(n.slot, s) << "a vector erased during the build is not";
  }
  EXPECT_EQ(index.size(), 19998u);
}

TEST(VectorIndexTest, NarrowFiltersAndErasedSlotsAreHonoured) {
  const auto vectors = random_unit_vectors(2000, 16, 3);
  registry::VectorIndex graph(100);
  for (std::uint32_t i = 0; i < vectors.size(); ++i)
    graph.add(i, vectors[i]);
  graph.wait_for_graph();
  ASSERT_TRUE(graph.approximate());
  // One slot in a hundred passes: the graph's candidates rarely include enough, so the index
  // falls back to scanning, and the answer is the exact one.
  const auto rare = [](std::uint32_t s) { return s % 100 == 7; };
  const auto got = graph.nearest(vectors[1234], 5, rare);
  ASSERT_EQ(got.size(), 5u);
  for (const auto& n : got)
    EXPECT_EQ(n.slot % 100, 7u);
  registry::VectorIndex exact(1'000'000);
  for (std::uint32_t i = 0; i < vectors.size(); ++i)
    exact.add(i, vectors[i]);
  const auto want = exact.nearest(vectors[1234], 5, rare);
  for (std::size_t i = 0; i < 5; ++i)
    EXPECT_EQ(got[i].slot, want[i].slot);
  // An erased slot is never returned, not even for its own vector.
  graph.erase(1234);
  EXPECT_EQ(graph.size(), 1999u);
  for (const auto& n : graph.nearest(vectors[1234], 20, [](std::uint32_t) { return true; }))
    EXPECT_NE(n.slot, 1234u);
  EXPECT_EQ(graph.similarity(1234, vectors[1234]), 0.0f);
  EXPECT_THROW(graph.add(5000, embed::Vector(8, 0.5f)), std::invalid_argument);
}

registry::AgentCard card(const std::string& id, const std::string& name,
                         const std::string& description, const std::string& provider = "Acme") {
  registry::AgentCard c;
  c.id = id;
  c.name = name;
  c.description = description;
  c.provider = provider;
  return c;
}

// Counts what it is asked to embed, and asks the real embedder.
class CountingEmbedder final : public embed::Embedder {
 public:
  explicit CountingEmbedder(embed::Embedder& inner) : inner_(inner) {}
  std::string model() const override { return inner_.model(); }
  std::size_t dimensions() const override { return inner_.dimensions(); }
  std::vector<embed::Vector> embed(const std::vector<std::string>& texts) override {
    embedded += texts.size();
    return inner_.embed(texts);
  }
  std::size_t embedded = 0;

 private:
  embed::Embedder& inner_;
};

// A restart reads each card's stored vector instead of embedding it again, over many pages of
// cards and vectors, where some cards have no vector (stored before the embedder was on).
TEST_F(WordVectors, ARestartReusesStoredVectorsAcrossPages) {
  util::SystemClock clock;
  const auto dir = std::filesystem::temp_directory_path() / "schemagate-restart-vectors";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    auto db = store::open_store({(dir / "r.db").string()}, clock);
    std::vector<store::Write> writes;
    std::size_t without = 0;
    for (int i = 0; i < 2'600; ++i) {
      const std::string id = (i % 3 ? "b-" : "a-") + std::to_string(i);
      const std::string description =
          i == 1'234 ? "Seven-day weather forecasts for any city."
                     : "Keeps stock counts for shop " + std::to_string(i) + ".";
      auto parsed = registry::parse_agent_card(bj::object{{"id", id},
                                                          {"name", "Agent " + std::to_string(i)},
                                                          {"description", description},
                                                          {"endpoint", "http://127.0.0.1:9/a"}});
      const auto& c = std::get<registry::AgentCard>(parsed);
      const auto text = registry::embedding_text(c);
      const bool vector = i % 11 != 0;
      without += vector ? 0 : 1;
      for (auto& w : registry::RegistryService::card_writes(
               c, embedder_->model(), text, vector ? embedder_->embed_one(text) : embed::Vector{}))
        writes.push_back(std::move(w));
    }
    db->commit(writes);
    CountingEmbedder counting(*embedder_);
    registry::RegistryService registry(*db, clock, {&counting, 10000, {}});
    EXPECT_EQ(registry.size(), 2'600u);
    EXPECT_EQ(counting.embedded, without);  // only the cards without a stored vector
    registry::RegistryService::SearchRequest request;
    request.query = "will it rain tomorrow";
    const auto found = registry.search(request, registry::Caller{"", {}, true});
    EXPECT_EQ(found.at("results").at(0).at("id"), "b-1234") << found;
  }
  std::filesystem::remove_all(dir);
}

TEST_F(WordVectors, HybridSearchFindsAgentsThatShareNoWordWithTheQuery) {
  registry::SearchIndex index;
  const std::vector<registry::AgentCard> cards = {
      card("cars", "Car rental desk", "Rent cars and vans by the day at airports."),
      card("meteo", "Forecast service", "Seven-day weather forecasts for any city.", "Meteo"),
      card("pdf", "PDF converter", "Turns PDF documents into plain text."),
      card("pay", "Invoice payments", "Pays supplier invoices by bank transfer.")};
  for (const auto& c : cards)
    index.upsert(c, {}, embedder_->embed_one(registry::embedding_text(c)));
  const auto everyone = [](const registry::AgentCard&) { return true; };
  registry::Filters none;
  auto first = [&](const std::string& query, const registry::Filters& f) -> std::string {
    const auto r = index.search(query, embedder_->embed_one(query), f, 10, 0, true, everyone);
    return r.hits.empty() ? "" : r.hits.front().card->id;
  };
  // No word in common with any card: only the vectors can answer.
  EXPECT_EQ(first("will it rain tomorrow", none), "meteo");
  EXPECT_EQ(first("hire an automobile", none), "cars");
  EXPECT_TRUE(index.search("will it rain tomorrow", {}, none, 10, 0, true, everyone).hits.empty());
  // Filters stay exact for neighbours found by vector too.
  registry::Filters acme;
  acme.provider = "Acme";
  EXPECT_NE(first("will it rain tomorrow", acme), "meteo");
  // Scores stay in (0, 1], best first.
  const auto r = index.search("pay an invoice", embedder_->embed_one("pay an invoice"), none, 10, 0,
                              true, everyone);
  ASSERT_FALSE(r.hits.empty());
  EXPECT_EQ(r.hits.front().card->id, "pay");
  for (std::size_t i = 0; i < r.hits.size(); ++i) {
    EXPECT_GT(r.hits[i].score, 0.0);
    EXPECT_LE(r.hits[i].score, 1.0);
    if (i > 0) {
      EXPECT_LE(r.hits[i].score, r.hits[i - 1].score);
    }
  }
  // A removed card disappears from both signals.
  index.remove("meteo");
  EXPECT_NE(first("will it rain tomorrow", none), "meteo");
}

TEST(SearchIndexTest, AVectorOfOtherDimensionsIsLeftOutNotFatal) {
  registry::SearchIndex index;
  auto first = card("a", "Alpha", "Weather forecasts.");
  auto second = card("b", "Beta", "Weather warnings.");
  index.upsert(first, {}, embed::Vector(100, 0.1f));
  EXPECT_NO_THROW(index.upsert(second, {}, embed::Vector(8, 0.3f)));
  EXPECT_EQ(index.vector_dimensions(), 100u);
  const auto r = index.search("weather", {}, registry::Filters{}, 10, 0, true,
                              [](const registry::AgentCard&) { return true; });
  EXPECT_EQ(r.count, 2u);  // both still found by their words
}

TEST(SearchIndexTest, ReplacedCardsDoNotAccumulate) {
  registry::SearchIndex index(100);  // the graph is in use from 100 vectors on
  const auto vectors = random_unit_vectors(300, 16, 6);
  for (std::size_t i = 0; i < 300; ++i) {
    index.upsert(card("agent-" + std::to_string(i), "Agent " + std::to_string(i),
                      "Handles case " + std::to_string(i) + "."),
                 {}, vectors[i]);
  }
  // Re-register every card over and over (PUT of unchanged cards, a crawler's refresh...).
  for (int round = 0; round < 20; ++round) {
    for (std::size_t i = 0; i < 300; ++i) {
      index.upsert(card("agent-" + std::to_string(i), "Agent " + std::to_string(i),
                        "Handles case " + std::to_string(i) + "."),
                   {}, vectors[i]);
    }
  }
  EXPECT_EQ(index.size(), 300u);
  EXPECT_LT(index.slots(), 300u + 1024u + 300u);  // compacted, not 6,300
  // Both signals still answer, and find the right card.
  const auto all = [](const registry::AgentCard&) { return true; };
  const auto lexical = index.search("case 123", {}, registry::Filters{}, 1, 0, true, all);
  ASSERT_EQ(lexical.hits.size(), 1u);
  EXPECT_EQ(lexical.hits[0].card->id, "agent-123");
  const auto dense = index.search("zzz", vectors[77], registry::Filters{}, 1, 0, true, all);
  ASSERT_EQ(dense.hits.size(), 1u);
  EXPECT_EQ(dense.hits[0].card->id, "agent-77");
  for (std::size_t i = 0; i < 300; i += 2)
    index.remove("agent-" + std::to_string(i));
  EXPECT_EQ(index.size(), 150u);
  EXPECT_EQ(index.find("agent-2"), nullptr);
  ASSERT_NE(index.find("agent-3"), nullptr);
}

// Cards that come and go under fresh names (a soak's registrations, short-lived workers) leave
// their words behind only until the index compacts: the dictionary does not grow for ever, and
// the cards that stay are still found by their words, rare and common.
TEST(SearchIndexTest, WordsOfRemovedCardsLeaveTheDictionary) {
  registry::SearchIndex index;
  const auto all = [](const registry::AgentCard&) { return true; };
  for (int i = 0; i < 50; ++i) {
    index.upsert(card("keeper-" + std::to_string(i), "Keeper " + std::to_string(i),
                      "Translates invoices, ticket kx" + std::to_string(i) + "."));
  }
  const std::size_t settled = index.words();
  for (int i = 0; i < 20'000; ++i) {
    const auto id = "transient-" + std::to_string(i);
    index.upsert(card(id, "Transient " + std::to_string(i),
                      "Comes and goes, token zq" + std::to_string(i) + "."));
    index.remove(id);
  }
  // Without compaction the dictionary would hold 40,000 more words (two fresh ones per card).
  EXPECT_LT(index.words(), settled + 2 * 2'100);
  const auto rare = index.search("kx37", {}, registry::Filters{}, 5, 0, true, all);
  ASSERT_EQ(rare.hits.size(), 1u);
  EXPECT_EQ(rare.hits[0].card->id, "keeper-37");
  EXPECT_EQ(index.search("translates invoices", {}, registry::Filters{}, 100, 0, true, all).count,
            50u);
  EXPECT_EQ(index.search("zq19999", {}, registry::Filters{}, 5, 0, true, all).count, 0u);
  // A word seen again after its cards left is numbered afresh and found.
  index.upsert(card("late", "Late", "Comes back with token zq5."));
  const auto back = index.search("zq5", {}, registry::Filters{}, 5, 0, true, all);
  ASSERT_EQ(back.hits.size(), 1u);
  EXPECT_EQ(back.hits[0].card->id, "late");
}

// A ranked search reads only the best few postings (MaxScore) and stops fusing once no further
// lexical match can reach the page. Every page must still be the one an index that reads every
// posting gives, and the count the same, with ties (many cards score alike here), removed and
// private cards, filters and both signals.
TEST(SearchIndexTest, PrunedPagesAreThePagesOfAFullRead) {
  std::mt19937 rng(15);
  // A small vocabulary with a skewed distribution: common words in most cards, rare ones in few.
  std::vector<std::string> words;
  for (char a = 'a'; a <= 'z'; ++a) {
    for (char b : std::string("aeiou"))
      words.push_back(std::string("q") + a + b);
  }
  std::discrete_distribution<std::size_t> pick(words.size(), 0, static_cast<double>(words.size()),
                                               [](double x) { return 1.0 / (1.0 + x); });
  auto phrase = [&](std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i)
      s += (i ? " " : "") + words[pick(rng)];
    return s;
  };
  const std::size_t n = 3000;
  const auto vectors = random_unit_vectors(n, 16, 4);
  // Exact vector search in both, so that only the lexical reading differs.
  registry::SearchIndex pruned(n + 1);
  registry::SearchIndex full(n + 1);
  full.prune_postings(false);
  for (std::size_t i = 0; i < n; ++i) {
    auto c = card("agent-" + std::to_string(i), phrase(2), phrase(12), i % 3 ? "Acme" : "Globex");
    c.is_public = i % 17 != 0;
    pruned.upsert(c, {}, vectors[i]);
    full.upsert(c, {}, vectors[i]);
  }
  for (std::size_t i = 0; i < n; i += 29) {
    pruned.remove("agent-" + std::to_string(i));
    full.remove("agent-" + std::to_string(i));
  }
  const auto everyone = [](const registry::AgentCard&) { return true; };
  const auto public_only = [](const registry::AgentCard& c) { return c.is_public; };
  registry::Filters globex;
  globex.provider = "Globex";
  for (int q = 0; q < 16; ++q) {
    const std::string query = phrase(2 + q % 5);
    const auto query_vector = q % 2 ? vectors[static_cast<std::size_t>(q) * 7] : embed::Vector{};
    const auto visible = q % 3 ? registry::SearchIndex::Visible(everyone)
                               : registry::SearchIndex::Visible(public_only);
    const auto filters = q % 4 == 3 ? globex : registry::Filters{};
    const auto all = full.search(query, query_vector, filters, n, 0, true, visible);
    ASSERT_GT(all.count, 30u) << query;
    // Without a vector, the count is the number of visible cards holding a query word: what an
    // unranked search lists, card by card.
    if (query_vector.empty()) {
      EXPECT_EQ(all.count, full.search(query, {}, filters, n, 0, false, visible).hits.size())
          << query;
    }
    for (const auto& [top, skip] : std::vector<std::pair<std::size_t, std::size_t>>{
             {1, 0}, {10, 0}, {5, 7}, {20, 100}, {3, all.count - 2}, {0, 0}}) {
      const auto expected = full.search(query, query_vector, filters, top, skip, true, visible);
      const auto page = pruned.search(query, query_vector, filters, top, skip, true, visible);
      EXPECT_EQ(page.count, expected.count) << query;
      ASSERT_EQ(page.hits.size(), expected.hits.size())
          << query << " top " << top << " skip " << skip;
      for (std::size_t i = 0; i < page.hits.size(); ++i) {
        EXPECT_EQ(page.hits[i].card->id, expected.hits[i].card->id)
            << query << " top " << top << " skip " << skip << " rank " << skip + i;
        EXPECT_DOUBLE_EQ(page.hits[i].score, expected.hits[i].score);
      }
    }
  }
}

}  // namespace
