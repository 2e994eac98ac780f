#pragma once

#include <boost/json/value.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace schemagate::store {
class Store;
struct Write;
struct Document;
}  // namespace schemagate::store
namespace schemagate::util {
class Clock;
}

namespace schemagate::a2a {

// A task as stored: its v1.0 JSON and who it belongs to.
struct StoredTask {
  boost::json::object task;  // v1.0 Task: id, contextId, status, artifacts, history, metadata
  std::string agent;
  std::string owner;          // the caller's client id ("" for an anonymous caller)
  std::string upstream_task;  // the fronted agent's own task id, when it made one
  std::int64_t revision = 0;  // optimistic concurrency: a write checks it
  std::int64_t updated_ms = 0;
  std::int64_t expires_ms = 0;  // as stored: locates the entries an update replaces

  std::string id() const;
  std::string state() const;
};

// A2A tasks in the Store (they survive a restart). Each write puts the task, its place in its
// owner's most-recent-first listing and its expiry in one atomic commit, so the three never
// disagree. Concurrent saves share one commit (group commit: one disk sync for all of them; a
// save still returns only once its task is durable). Tasks are kept `retention` after their
// last update, then pruned.
class TaskStore {
 public:
  TaskStore(store::Store& store, const util::Clock& clock, std::chrono::milliseconds retention);

  // Writes a new task (revision 0) or the next state of one read before or saved (its revision
  // must be current: store::ConflictError otherwise). Updates `revision`, `updated_ms` and
  // `expires_ms`.
  void save(StoredTask& task);
  std::optional<StoredTask> get(std::string_view id);

  struct Query {
    std::string agent;
    std::string owner;
    std::string context_id;  // empty: any
    std::string state;       // empty: any
    std::int64_t updated_after_ms = 0;
    std::size_t page_size = 50;
    std::string page_token;  // opaque, from a previous page
  };
  struct Page {
    std::vector<StoredTask> tasks;
    std::string next_page_token;  // empty on the last page
    std::size_t total = 0;        // every task the query matches
  };
  // Most recently updated first. Throws std::invalid_argument for a malformed page token.
  Page list(const Query& query);

  // Removes tasks past their retention; returns how many.
  std::size_t prune();

 private:
  struct Pending;
  // Commits `writes` together with whatever other saves are waiting; returns its own results.
  std::vector<store::Document> commit_grouped(std::vector<store::Write> writes);

  store::Store& store_;
  const util::Clock& clock_;
  std::chrono::milliseconds retention_;
  std::atomic<std::int64_t> next_prune_ms_{0};
  std::mutex group_mu_;
  std::condition_variable group_cv_;
  std::vector<Pending*> waiting_;
  bool committing_ = false;
};

}  // namespace schemagate::a2a
