#pragma once

#include "registry/agent_card.hpp"
#include "registry/search_index.hpp"

#include <boost/json/value.hpp>

#include <functional>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <stdexcept>
#include <string>

namespace schemagate::embed {
class Embedder;
}
namespace schemagate::versioning {
class VersioningService;
}
namespace schemagate::store {
class Store;
struct Write;
}  // namespace schemagate::store
namespace schemagate::util {
class Clock;
}

namespace schemagate::registry {

class RegistryError : public std::runtime_error {
 public:
  enum class Kind { invalid_input, invalid_card, not_found, conflict, unreachable };
  RegistryError(Kind kind, std::string message, boost::json::value details = nullptr)
      : std::runtime_error(std::move(message)), kind_(kind), details_(std::move(details)) {}
  Kind kind() const { return kind_; }
  const boost::json::value& details() const { return details_; }

 private:
  Kind kind_;
  boost::json::value details_;
};

// Fetches an agent card document over the network; the server wires an HTTP client in (the
// registry never includes http/). Throws std::runtime_error saying what failed.
class CardFetcher {
 public:
  virtual ~CardFetcher() = default;
  virtual std::string fetch(const std::string& url) = 0;
};

// An A2A AgentCard (name, url, skills[], provider, ...) as a seed 004 card: skills become
// capabilities and tags, the A2A URL the endpoint; the id is derived from `fallback_id`.
boost::json::object card_from_a2a(const boost::json::object& a2a, const std::string& fallback_id);

// Who is asking: decides which private agents are visible.
struct Caller {
  std::string client_id;
  std::vector<std::string> groups;
  bool admin = false;
  bool may_see(const AgentCard& card) const;
};

// Seed 004 §4-5: agent cards in the Store, mirrored in a search index that is rebuilt at start
// and updated with every registration, so the two never disagree. With an embedder, each card's
// embedding is stored beside it in the same atomic write (collection "agent_vectors", tagged with
// the model and a hash of the embedded text) and reused at start; a vector of another model or
// of older text is recomputed then.
class RegistryService {
 public:
  struct Options {
    embed::Embedder* embedder = nullptr;  // null: lexical search only
    std::size_t exact_vector_search_below = 10000;
    // The key descriptions of a scenario's template, indexed with every card whose operations
    // name that scenario (the exchange supplies them; the registry does not know templates).
    std::function<std::vector<std::string>(const std::string& scenario)> scenario_text;
    // Seed 003: each operation's schemas are a versioned contract "<agent>:<operation>". A
    // registration publishes a new version of every operation whose schemas changed, in the
    // same atomic write as the card, and is refused (409 BreakingChange) when a breaking
    // change is not a new major version.
    versioning::VersioningService* versioning = nullptr;
    CardLimits card_limits = {};  // for registrations; stored cards load whatever their length
    // Where the vector graph is kept between runs (empty: rebuilt at each start). Read at start
    // when it still matches the stored vectors, written when the service ends.
    std::string vector_graph_file = {};
  };
  RegistryService(store::Store& store, const util::Clock& clock);
  RegistryService(store::Store& store, const util::Clock& clock, Options options);
  // The writes that keep a card and its embedding (by `model`, of embedding_text(card, extra)):
  // what a registration commits, for loaders that fill a store in bulk (the search bench).
  static std::vector<store::Write> card_writes(const AgentCard& card, const std::string& model,
                                               std::string_view embedded_text,
                                               const embed::Vector& vector,
                                               std::optional<std::int64_t> expected = {});
  ~RegistryService();
  RegistryService(const RegistryService&) = delete;
  RegistryService& operator=(const RegistryService&) = delete;

  struct Entry {
    std::shared_ptr<const AgentCard> card;  // immutable: a change replaces it
    std::int64_t revision = 0;
    std::int64_t updated_at_ms = 0;
  };
  struct Registered {
    Entry entry;
    bool created = false;
  };
  Registered create(const boost::json::value& card);                    // 409 if the id exists
  Registered put(std::string_view id, const boost::json::value& card);  // create or replace
  void remove(std::string_view id);
  // POST /agents:crawl: fetches `url` (or its /.well-known/agent-card.json) and registers or
  // refreshes the card it finds there, seed 004 metadata or an A2A card.
  Registered crawl(const std::string& url, CardFetcher& fetcher);
  Entry get(std::string_view id, const Caller& caller);  // 404 when missing or not visible

  struct Page {
    std::vector<Entry> agents;
    std::optional<std::string> next_cursor;  // opaque
  };
  Page list(const Filters& filters, std::string_view cursor, std::size_t limit,
            const Caller& caller);

  struct SearchRequest {
    std::string query;
    Filters filters;
    std::size_t top = 10;
    std::size_t skip = 0;
    bool ranked = true;
    bool include_metadata = false;
  };
  // The seed 004 §5.2 response: {results[{id,name,description,score}], count, top, skip, query,
  // search_time}.
  boost::json::object search(const SearchRequest& request, const Caller& caller);

  std::size_t size() const;

  // Another replica changed agent `id` (the store's change log): the index takes the stored
  // card, or drops it when it is gone. Nothing to do when this replica wrote it.
  void reload(const std::string& id);

  // Called after each registration, replacement or removal, outside the registry's lock (the
  // MCP face tells its sessions that their tool list changed). Set before serving.
  void on_changed(std::function<void(const std::string& agent_id)> listener) {
    on_changed_ = std::move(listener);
  }

  // A scenario's template changed: agents whose operations name it are indexed (and embedded)
  // again with its key descriptions. Returns how many.
  std::size_t refresh_scenario(const std::string& scenario);

 private:
  Registered store_card(const boost::json::value& body, std::optional<std::int64_t> expected);
  // Gives each operation its version and returns the writes that publish the new ones.
  std::vector<store::Write> version_operations(AgentCard& card,
                                               std::vector<std::string>& contracts);
  Entry entry_from(std::shared_ptr<const AgentCard> card);
  std::vector<std::string> extra_text(const AgentCard& card) const;
  // The card's vector from its embedding text; empty when the embedder fails or answers with
  // other dimensions than the index holds (both logged: the card is then found by its words).
  embed::Vector embed_card(const std::string& id, const std::string& text) const;
  embed::Vector embed_query(const std::string& query) const;

  store::Store& store_;
  const util::Clock& clock_;
  embed::Embedder* embedder_;
  std::function<std::vector<std::string>(const std::string&)> scenario_text_;
  versioning::VersioningService* versioning_;
  CardLimits card_limits_;
  std::string vector_graph_file_;
  std::function<void(const std::string&)> on_changed_;
  void changed(const std::string& id) const;
  mutable std::shared_mutex mu_;  // the index: many searches, few registrations
  SearchIndex index_;
  std::unordered_map<std::string, std::pair<std::int64_t, std::int64_t>>
      meta_;  // id -> rev, updated
};

}  // namespace schemagate::registry
