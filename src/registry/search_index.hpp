#pragma once

#include "embed/embedder.hpp"
#include "registry/agent_card.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace schemagate::registry {

// Exact filters (seed 004 §5.2 "filters"); every given one must hold.
struct Filters {
  std::vector<std::string> capabilities;
  std::vector<std::string> tags;
  std::string language;
  std::string provider;
  std::string authentication;
  bool matches(const AgentCard& card) const;
  bool empty() const {
    return capabilities.empty() && tags.empty() && language.empty() && provider.empty() &&
           authentication.empty();
  }
};

// Words of a text as the index sees them: camelCase split, lower-cased, stop words dropped,
// plural and verb endings folded ("translates" and "translation" stay apart; "papers" ->
// "paper").
std::vector<std::string> tokenize(std::string_view text);

// The text of a card that its embedding is computed from: name, capabilities, tags,
// description and operations.
std::string embedding_text(const AgentCard& card, const std::vector<std::string>& extra = {});

// In-memory hybrid index over the cards. Lexical: BM25F where name, capabilities and tags weigh
// more than the description, and operation and template-key descriptions count too. Dense: the
// cards' embeddings (VectorIndex). A ranked search fuses both (see search()).
class SearchIndex {
 public:
  // Vector search is exact below `exact_vector_search_below` vectors, HNSW above.
  explicit SearchIndex(std::size_t exact_vector_search_below = 10000);
  ~SearchIndex();

  // `extra` holds further searchable text (template key descriptions of the agent's scenarios);
  // `vector` the card's embedding (empty: lexical only).
  void upsert(const AgentCard& card, const std::vector<std::string>& extra = {},
              const embed::Vector& vector = {});
  // Many cards at once (a restart): their words are counted on every core, then filed in order.
  struct Entry {
    AgentCard card;
    std::vector<std::string> extra;
    embed::Vector vector;
  };
  void upsert_many(std::vector<Entry> entries);
  void remove(std::string_view id);
  // Brackets a load of many cards (a restart): the vector graph is built once at the end, before
  // end_bulk_load returns or, with in_background, while searches scan exactly.
  void begin_bulk_load();
  void end_bulk_load(bool in_background = false);
  // The vector graph in files (VectorIndex::save_graph/load_graph), its nodes named by card id.
  // load_vector_graph belongs between begin_bulk_load() and end_bulk_load().
  bool save_vector_graph(const std::string& path) const;
  bool load_vector_graph(const std::string& path);
  const AgentCard* find(std::string_view id) const;
  std::shared_ptr<const AgentCard> share(std::string_view id) const;
  std::size_t vector_dimensions() const;  // 0 until the first vector
  // Whether vector search goes through the HNSW graph (else it scans, exactly).
  bool vector_graph_ready() const;
  std::size_t size() const;
  // A ranked search reads only the postings that can change its page; off, it reads every one
  // (the reference that tests and the bench compare against).
  void prune_postings(bool on) { prune_ = on; }
  // Slots in use, live and replaced: a replaced or removed card keeps its slot until the index
  // compacts itself (when replaced ones outnumber live ones).
  std::size_t slots() const;
  // Distinct words in the dictionary: those of live cards, and of replaced or removed ones until
  // the index compacts itself.
  std::size_t words() const;

  // Whether the caller may see a private card (public cards are visible to everyone).
  using Visible = std::function<bool(const AgentCard&)>;
  struct Hit {
    const AgentCard* card;
    double score;  // in [0, 1]
  };
  struct Result {
    std::vector<Hit> hits;  // the requested page
    std::size_t count = 0;  // all matches
  };
  // ranked=false lists matches by name. An empty query matches every visible, filtered card.
  // With a `query_vector`, a ranked search scores the union of the lexical matches and the
  // nearest cards by embedding as a convex combination of both signals, each scaled to [0, 1].
  Result search(std::string_view query, const embed::Vector& query_vector, const Filters& filters,
                std::size_t top, std::size_t skip, bool ranked, const Visible& visible) const;
  // Cards in id order, strictly after `after_id`.
  std::vector<const AgentCard*> list(const Filters& filters, std::string_view after_id,
                                     std::size_t limit, const Visible& visible, bool& more) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool prune_ = true;
  struct DocText;
  // One card in place of the one of its id (the words already counted).
  void file(DocText words, std::shared_ptr<const AgentCard> card, const embed::Vector& vector);
  void compact_if_worn();
};

}  // namespace schemagate::registry
