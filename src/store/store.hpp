#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace schemagate::util {
class Clock;
}

namespace schemagate::store {

// Documents are JSON bodies addressed by (collection, key). Each write bumps the revision, which
// callers use for optimistic concurrency (and the HTTP layer for ETags).
struct Document {
  std::string collection;
  std::string key;
  std::int64_t revision = 0;
  boost::json::value body;
  std::int64_t created_at_ms = 0;
  std::int64_t updated_at_ms = 0;
};

struct ListQuery {
  std::string key_prefix;  // only keys starting with this
  std::string after_key;   // resume strictly after this key (keys are listed in byte order)
  std::size_t limit = 100;
};

struct Page {
  std::vector<Document> items;
  std::optional<std::string> next_after_key;  // set when more items follow
};

// An append-only, totally ordered log per stream (update feeds, usage samples, audit).
struct Event {
  std::int64_t sequence = 0;  // increasing across all streams
  std::string stream;
  boost::json::value body;
  std::int64_t created_at_ms = 0;
};

// One write of an atomic batch. expected_revision: nullopt = unconditional, 0 = must not exist,
// N = must currently be at revision N.
struct Write {
  enum class Kind { put, remove };
  Kind kind = Kind::put;
  std::string collection;
  std::string key;
  boost::json::value body;
  std::optional<std::int64_t> expected_revision;

  static Write put(std::string collection, std::string key, boost::json::value body,
                   std::optional<std::int64_t> expected_revision = std::nullopt);
  static Write remove(std::string collection, std::string key,
                      std::optional<std::int64_t> expected_revision = std::nullopt);
};

// One committed write, in the order writes were committed across every process sharing the
// database: what replicas follow to keep their in-memory views in step.
struct Change {
  std::int64_t sequence = 0;
  std::string collection;
  std::string key;
  std::int64_t revision = 0;  // after the write; 0 for a removal
};

struct StoreInfo {
  std::string backend;     // "sqlite", "postgres"
  std::string location;    // file path or connection target, no secrets
  int schema_version = 0;  // migrations applied
};

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The database was written by a newer schemagate; refusing protects its data from an old binary.
class SchemaTooNewError : public StoreError {
 public:
  using StoreError::StoreError;
};

class ConflictError : public StoreError {
 public:
  ConflictError(std::string collection, std::string key, std::optional<std::int64_t> expected,
                std::int64_t actual);
  const std::string& collection() const { return collection_; }
  const std::string& key() const { return key_; }
  std::int64_t actual_revision() const { return actual_; }  // 0 when absent

 private:
  std::string collection_, key_;
  std::int64_t actual_;
};

class Store {
 public:
  virtual ~Store() = default;

  // Throws StoreError when the backend cannot serve queries (readiness).
  virtual void ping() = 0;
  virtual StoreInfo info() const = 0;

  virtual std::optional<Document> get(std::string_view collection, std::string_view key) = 0;
  virtual Page list(std::string_view collection, const ListQuery& query) = 0;

  // Applies every write or none; throws ConflictError when a precondition fails. Returns the
  // resulting document of each write in order; for a remove, the revision the document had
  // before (0 when there was none) and a null body.
  virtual std::vector<Document> commit(const std::vector<Write>& writes) = 0;

  virtual std::int64_t append_event(std::string_view stream, const boost::json::value& body) = 0;
  // Several events in one transaction (one disk sync); returns the last sequence.
  virtual std::int64_t append_events(std::string_view stream,
                                     const std::vector<boost::json::value>& bodies) = 0;
  virtual std::vector<Event> read_events(std::string_view stream, std::int64_t after_sequence,
                                         std::size_t limit) = 0;
  // The newest `limit` events of a stream, oldest first: a tail costs its own size, not the
  // stream's whole history.
  virtual std::vector<Event> read_last_events(std::string_view stream, std::size_t limit) = 0;

  // The change log: every write commit() applied, newest last. The log keeps the latest
  // kChangesKept changes; a reader further behind must rebuild what it holds.
  static constexpr std::int64_t kChangesKept = 100'000;
  virtual std::vector<Change> read_changes(std::int64_t after_sequence, std::size_t limit) = 0;
  virtual std::int64_t last_change() = 0;  // 0 when nothing was ever written
  // Waits up to `timeout` for another process to commit (PostgreSQL LISTEN/NOTIFY); true when
  // one did. Only a wake-up: the change log stays the truth. Where no other process can write,
  // it just waits.
  virtual bool wait_for_changes(std::chrono::milliseconds timeout) {
    std::this_thread::sleep_for(timeout);
    return false;
  }

  // Leadership of work that must run once across the processes sharing the database (the
  // evolution engine's pools): true while this process holds `job`. It is held until the
  // process ends (or loses its database connection), then another may take it. A store only
  // one process can open always leads.
  virtual bool lead(std::string_view job) {
    (void)job;
    return true;
  }

  // Conveniences over commit().
  Document put(std::string collection, std::string key, boost::json::value body,
               std::optional<std::int64_t> expected_revision = std::nullopt);
  // True when something was removed.
  bool remove(std::string collection, std::string key,
              std::optional<std::int64_t> expected_revision = std::nullopt);
  // Every document of a collection whose key starts with `prefix`, page by page, in key order.
  void scan(std::string_view collection, std::string_view prefix,
            const std::function<void(const Document&)>& each);
};

struct StoreOptions {
  // A file path (SQLite, the default) or a postgres:// / postgresql:// URL.
  std::string target = "schemagate.db";
  int busy_timeout_ms = 5000;
  std::size_t pool_size = 8;  // PostgreSQL connections per replica
};

// Opens the store named by options.target and brings its schema up to date. Throws
// SchemaTooNewError or StoreError with a message that says what to do.
std::unique_ptr<Store> open_store(const StoreOptions& options, const util::Clock& clock);

}  // namespace schemagate::store
