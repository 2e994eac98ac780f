#include "store/postgres/postgres_store.hpp"

#include "store/postgres/migrations.hpp"
#include "store/stored_json.hpp"
#include "util/clock.hpp"
#include "util/contract_error.hpp"

#include <libpq-fe.h>
#include <spdlog/spdlog.h>
#include <boost/json/serialize.hpp>

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <type_traits>
#include <vector>

namespace schemagate::store::postgres {

namespace {

// The database is down or restarting: the request gets 503 with Retry-After, never a crash.
[[noreturn]] void unavailable(const std::string& why) {
  throw util::ContractError(503, "Unavailable", "the database is unreachable: " + why, nullptr, 1);
}

// SQLSTATEs that mean the connection, not the statement, failed (class 08, and the server
// shutting down or starting up).
bool connection_failure(const char* state) {
  if (!state) return true;
  const std::string s(state);
  return s.starts_with("08") || s == "57P01" || s == "57P02" || s == "57P03";
}

class Result {
 public:
  explicit Result(PGresult* r) : r_(r) {}
  ~Result() { PQclear(r_); }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  int rows() const { return PQntuples(r_); }
  std::string_view text(int row, int col) const {
    return {PQgetvalue(r_, row, col), static_cast<std::size_t>(PQgetlength(r_, row, col))};
  }
  std::int64_t integer(int row, int col) const { return std::stoll(PQgetvalue(r_, row, col)); }

 private:
  PGresult* r_;
};

class UniqueViolation : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Connection {
 public:
  explicit Connection(const std::string& url) : url_(url) { connect(); }
  ~Connection() {
    if (conn_) PQfinish(conn_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Before each use: a connection lost since (the server restarted) is opened again.
  void ensure() {
    if (conn_ && PQstatus(conn_) == CONNECTION_OK) return;
    if (conn_) {
      PQreset(conn_);
      if (PQstatus(conn_) == CONNECTION_OK) return;
      const std::string why = PQerrorMessage(conn_);
      unavailable(trim(why));
    }
    connect();
  }

  // One statement with text parameters. Throws UniqueViolation (23505), StoreError for other
  // statement errors, and ContractError 503 when the connection failed.
  std::unique_ptr<Result> exec(const char* sql, std::initializer_list<std::string_view> params) {
    ++statements_;
    std::vector<std::string> owned(params.begin(), params.end());  // NUL-terminated copies
    std::vector<const char*> values;
    values.reserve(owned.size());
    for (const auto& p : owned)
      values.push_back(p.c_str());
    // Without parameters, the simple protocol: a migration holds several statements.
    PGresult* r = values.empty() ? PQexec(conn_, sql)
                                 : PQexecParams(conn_, sql, static_cast<int>(values.size()),
                                                nullptr, values.data(), nullptr, nullptr, 0);
    const auto status = PQresultStatus(r);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
      return std::make_unique<Result>(r);
    }
    const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
    const std::string message = trim(r ? PQresultErrorMessage(r) : PQerrorMessage(conn_));
    const std::string sqlstate = state ? state : "";
    PQclear(r);
    if (sqlstate == "23505") throw UniqueViolation(message);
    if (PQstatus(conn_) != CONNECTION_OK || connection_failure(state)) unavailable(message);
    throw StoreError("PostgreSQL: " + message);
  }
  void run(const char* sql) { exec(sql, {}); }

  PGconn* raw() const { return conn_; }

  // Statements sent since the pool handed this connection out.
  int statements() const { return statements_; }
  void handed_out() { statements_ = 0; }

 private:
  static std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
      s.pop_back();
    return s;
  }
  void connect() {
    if (conn_) PQfinish(conn_);
    conn_ = PQconnectdb(url_.c_str());
    PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);  // "already exists" notes
    if (PQstatus(conn_) != CONNECTION_OK) {
      const std::string why = trim(PQerrorMessage(conn_));
      PQfinish(conn_);
      conn_ = nullptr;
      unavailable(why);
    }
  }

  std::string url_;
  PGconn* conn_ = nullptr;
  int statements_ = 0;
};

// Serializes the event appends of every replica, so that sequence order is commit order and a
// reader that has seen sequence N never sees a smaller one appear later.
constexpr const char* kEventLock = "SELECT pg_advisory_xact_lock(7239471)";
constexpr const char* kMigrationLock = "SELECT pg_advisory_lock(7239470)";
constexpr const char* kMigrationUnlock = "SELECT pg_advisory_unlock(7239470)";

class PostgresStore final : public Store {
 public:
  PostgresStore(const StoreOptions& options, const util::Clock& clock)
      : url_(options.target), clock_(clock) {
    const std::size_t size = std::max<std::size_t>(1, options.pool_size);
    for (std::size_t i = 0; i < size; ++i) {
      // The first connects now (a wrong URL stops the start with its reason); the others when
      // first used.
      pool_.push_back(i == 0 ? std::make_unique<Connection>(url_) : nullptr);
      idle_.push_back(i);
    }
    migrate();
  }

  void ping() override {
    with_connection([](Connection& c) { c.run("SELECT 1"); });
  }

  StoreInfo info() const override { return {"postgres", redact(url_), schema_version_}; }

  std::optional<Document> get(std::string_view collection, std::string_view key) override {
    return with_connection([&](Connection& c) -> std::optional<Document> {
      const auto r = c.exec(
          "SELECT revision, body, created_at, updated_at FROM documents WHERE collection = $1 "
          "AND key = $2",
          {collection, key});
      if (r->rows() == 0) return std::nullopt;
      return document(*r, 0, 0, collection, key);
    });
  }

  Page list(std::string_view collection, const ListQuery& q) override {
    return with_connection([&](Connection& c) {
      Page page;
      const std::size_t limit = q.limit == 0 ? 1 : q.limit;
      const std::string lower = std::max(q.key_prefix, q.after_key);
      // Keys compare as bytes (COLLATE "C"), as SQLite's do.
      const auto r = c.exec(
          "SELECT key, revision, body, created_at, updated_at FROM documents WHERE collection = "
          "$1 AND key >= $2 AND key > $3 AND left(key, length($4)) = $4 ORDER BY key LIMIT $5",
          {collection, lower, q.after_key, q.key_prefix, std::to_string(limit + 1)});
      for (int i = 0; i < r->rows(); ++i) {
        const std::string key(r->text(i, 0));
        if (page.items.size() == limit) {
          page.next_after_key = page.items.back().key;
          break;
        }
        page.items.push_back(document(*r, i, 1, collection, key));
      }
      return page;
    });
  }

  std::vector<Document> commit(const std::vector<Write>& writes) override {
    return with_connection([&](Connection& c) {
      const std::int64_t now = clock_.now_unix_ms();
      std::vector<Document> results;
      results.reserve(writes.size());
      c.run("BEGIN");
      try {
        for (const auto& w : writes)
          results.push_back(apply(c, w, now));
        // The change log in commit order across replicas: the lock is held from the first
        // sequence number taken to the commit.
        c.run(kEventLock);
        const std::string stamp = std::to_string(now);
        for (std::size_t i = 0; i < results.size(); ++i) {
          const auto& d = results[i];
          const std::int64_t revision = writes[i].kind == Write::Kind::remove ? 0 : d.revision;
          c.exec(
              "INSERT INTO changes (collection, key, revision, created_at) VALUES ($1, $2, $3, "
              "$4)",
              {d.collection, d.key, std::to_string(revision), stamp});
        }
        c.run("NOTIFY schemagate_changes");  // delivered when the transaction commits
        if (++commits_ % 1024 == 0) {
          c.run(
              "DELETE FROM changes WHERE sequence < (SELECT MAX(sequence) FROM changes) - "
              "100000");
        }
        c.run("COMMIT");
      } catch (const UniqueViolation&) {
        rollback(c);
        // Another replica created a document this batch expected to be absent.
        for (const auto& w : writes) {
          if (w.expected_revision && *w.expected_revision == 0) {
            const auto r =
                c.exec("SELECT revision FROM documents WHERE collection = $1 AND key = $2",
                       {w.collection, w.key});
            if (r->rows() > 0) throw ConflictError(w.collection, w.key, 0, r->integer(0, 0));
          }
        }
        throw StoreError("PostgreSQL: a concurrent write collided; try again");
      } catch (...) {
        rollback(c);
        throw;
      }
      return results;
    });
  }

  std::int64_t append_event(std::string_view stream, const boost::json::value& body) override {
    return append_events(stream, {body});
  }

  std::int64_t append_events(std::string_view stream,
                             const std::vector<boost::json::value>& bodies) override {
    return with_connection([&](Connection& c) {
      const std::string now = std::to_string(clock_.now_unix_ms());
      std::int64_t last = 0;
      c.run("BEGIN");
      try {
        c.run(kEventLock);
        for (const auto& body : bodies) {
          const auto r = c.exec(
              "INSERT INTO events (stream, body, created_at) VALUES ($1, $2, $3) RETURNING "
              "sequence",
              {stream, boost::json::serialize(body), now});
          last = r->integer(0, 0);
        }
        c.run("COMMIT");
      } catch (...) {
        rollback(c);
        throw;
      }
      return last;
    });
  }

  // The rows of a (sequence, body, created_at) query, in the order it returned them.
  static std::vector<Event> events_of(const Result& r, std::string_view stream) {
    std::vector<Event> out;
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back(
          Event{r.integer(i, 0), std::string(stream), parse_stored(r.text(i, 1)), r.integer(i, 2)});
    }
    return out;
  }

  std::vector<Event> read_events(std::string_view stream, std::int64_t after_sequence,
                                 std::size_t limit) override {
    return with_connection([&](Connection& c) {
      const auto r = c.exec(
          "SELECT sequence, body, created_at FROM events WHERE stream = $1 AND sequence > $2 "
          "ORDER BY sequence LIMIT $3",
          {stream, std::to_string(after_sequence), std::to_string(limit)});
      return events_of(*r, stream);
    });
  }

  std::vector<Event> read_last_events(std::string_view stream, std::size_t limit) override {
    return with_connection([&](Connection& c) {
      const auto r = c.exec(
          "SELECT sequence, body, created_at FROM events WHERE stream = $1 ORDER BY sequence DESC "
          "LIMIT $2",
          {stream, std::to_string(limit)});
      auto out = events_of(*r, stream);
      std::reverse(out.begin(), out.end());  // read newest first
      return out;
    });
  }

  std::vector<Change> read_changes(std::int64_t after_sequence, std::size_t limit) override {
    return with_connection([&](Connection& c) {
      const auto r = c.exec(
          "SELECT sequence, collection, key, revision FROM changes WHERE sequence > $1 ORDER BY "
          "sequence LIMIT $2",
          {std::to_string(after_sequence), std::to_string(limit)});
      std::vector<Change> out;
      for (int i = 0; i < r->rows(); ++i) {
        out.push_back(Change{r->integer(i, 0), std::string(r->text(i, 1)),
                             std::string(r->text(i, 2)), r->integer(i, 3)});
      }
      return out;
    });
  }

  std::int64_t last_change() override {
    return with_connection([&](Connection& c) {
      return c.exec("SELECT COALESCE(MAX(sequence), 0) FROM changes", {})->integer(0, 0);
    });
  }

  bool wait_for_changes(std::chrono::milliseconds timeout) override {
    std::lock_guard lock(listen_mu_);
    try {
      if (!listener_) {
        listener_ = std::make_unique<Connection>(url_);
        listener_->run("LISTEN schemagate_changes");
      }
      PGconn* c = listener_->raw();
      const auto drain = [c] {
        bool any = false;
        while (PGnotify* n = PQnotifies(c)) {
          PQfreemem(n);
          any = true;
        }
        return any;
      };
      if (PQconsumeInput(c) && drain()) return true;
      pollfd fd{PQsocket(c), POLLIN, 0};
      if (::poll(&fd, 1, static_cast<int>(timeout.count())) <= 0) return false;
      if (!PQconsumeInput(c)) {
        listener_.reset();  // the server went away; LISTEN again next time
        return false;
      }
      return drain();
    } catch (const util::ContractError&) {
      listener_.reset();
      std::this_thread::sleep_for(timeout);
      return false;
    }
  }

  bool lead(std::string_view job) override {
    std::lock_guard lock(lead_mu_);
    try {
      // A session-level advisory lock on a connection of its own: it lasts as long as the
      // session, so a replica that dies hands its jobs on.
      if (!leader_) leader_ = std::make_unique<Connection>(url_);
      const bool alive = leader_->exec("SELECT 1", {}) != nullptr;
      if (alive && held_.contains(std::string(job))) return true;
      const auto r = leader_->exec("SELECT pg_try_advisory_lock(hashtext($1))", {job});
      if (r->text(0, 0) != "t") return false;
      held_.insert(std::string(job));
      return true;
    } catch (const util::ContractError&) {
      leader_.reset();  // the session and every lock it held are gone
      held_.clear();
      return false;
    }
  }

 private:
  static Document document(const Result& r, int row, int first, std::string_view collection,
                           std::string_view key) {
    Document d;
    d.collection = collection;
    d.key = key;
    d.revision = r.integer(row, first);
    d.body = parse_stored(r.text(row, first + 1));
    d.created_at_ms = r.integer(row, first + 2);
    d.updated_at_ms = r.integer(row, first + 3);
    return d;
  }

  static void rollback(Connection& c) {
    try {
      c.run("ROLLBACK");
    } catch (...) {
      // The connection is gone; the server rolls the transaction back itself.
    }
  }

  Document apply(Connection& c, const Write& w, std::int64_t now) {
    std::int64_t current = 0, created = now;
    {
      // Locks the row against other replicas' writes until this transaction ends.
      const auto r = c.exec(
          "SELECT revision, created_at FROM documents WHERE collection = $1 AND key = $2 FOR "
          "UPDATE",
          {w.collection, w.key});
      if (r->rows() > 0) {
        current = r->integer(0, 0);
        created = r->integer(0, 1);
      }
    }
    Document d = written(w, current, created, now);
    if (w.kind == Write::Kind::remove) {
      if (current != 0) {
        c.exec("DELETE FROM documents WHERE collection = $1 AND key = $2", {w.collection, w.key});
      }
      return d;
    }
    const std::string text = boost::json::serialize(w.body);
    const std::string stamp = std::to_string(now);
    if (current == 0) {
      // No ON CONFLICT: a document another replica created meanwhile is a unique violation,
      // reported as the conflict it is, never silently overwritten.
      c.exec(
          "INSERT INTO documents (collection, key, revision, body, created_at, updated_at) "
          "VALUES ($1, $2, 1, $3, $4, $4)",
          {w.collection, w.key, text, stamp});
    } else {
      c.exec(
          "UPDATE documents SET revision = $3, body = $4, updated_at = $5 WHERE collection = $1 "
          "AND key = $2",
          {w.collection, w.key, std::to_string(d.revision), text, stamp});
    }
    return d;
  }

  void migrate() {
    with_connection([&](Connection& c) {
      c.run(kMigrationLock);  // replicas starting together: one migrates, the others wait
      try {
        c.run(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name "
            "TEXT NOT NULL, applied_at BIGINT NOT NULL)");
        const auto r = c.exec("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", {});
        const int applied = static_cast<int>(r->integer(0, 0));
        const auto all = migrations();
        const int known = all.empty() ? 0 : all.back().version;
        if (applied > known) {
          throw SchemaTooNewError("database " + redact(url_) + " has schema version " +
                                  std::to_string(applied) + ", newer than the " +
                                  std::to_string(known) +
                                  " this schemagate understands; run a newer schemagate");
        }
        for (const auto& m : all) {
          if (m.version <= applied) continue;
          c.run("BEGIN");
          try {
            c.run(m.sql);
            c.exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                   {std::to_string(m.version), m.name, std::to_string(clock_.now_unix_ms())});
            c.run("COMMIT");
          } catch (const std::exception& e) {
            rollback(c);
            throw StoreError("migration " + std::to_string(m.version) + " (" + m.name +
                             ") failed on " + redact(url_) + ": " + e.what());
          }
          spdlog::info("store: migration {} ({}) applied", m.version, m.name);
        }
        schema_version_ = std::max(known, applied);
      } catch (...) {
        c.run(kMigrationUnlock);
        throw;
      }
      c.run(kMigrationUnlock);
    });
  }

  // Runs `f` on a pooled connection (waiting for one when all are busy), reconnecting first
  // when the connection was lost.
  template <class F>
  std::invoke_result_t<F&, Connection&> with_connection(F&& f) {
    std::size_t slot;
    {
      std::unique_lock lock(mu_);
      free_.wait(lock, [&] { return !idle_.empty(); });
      slot = idle_.back();
      idle_.pop_back();
    }
    struct Release {
      PostgresStore* self;
      std::size_t slot;
      ~Release() {
        std::lock_guard lock(self->mu_);
        self->idle_.push_back(slot);
        self->free_.notify_one();
      }
    } release{this, slot};
    auto& conn = pool_[slot];
    if (!conn) {
      conn = std::make_unique<Connection>(url_);
    } else {
      conn->ensure();
    }
    conn->handed_out();
    try {
      return f(*conn);
    } catch (const util::ContractError&) {
      // A pooled connection whose server went away fails on its first statement, before
      // anything was applied: once, on a new connection, the call is safe to make again.
      if (conn->statements() > 1) throw;
      conn = std::make_unique<Connection>(url_);
      conn->handed_out();
      return f(*conn);
    }
  }

  std::string url_;
  const util::Clock& clock_;
  std::mutex mu_;
  std::condition_variable free_;
  std::vector<std::unique_ptr<Connection>> pool_;
  std::vector<std::size_t> idle_;
  int schema_version_ = 0;
  std::atomic<std::uint64_t> commits_{0};
  std::mutex lead_mu_, listen_mu_;
  std::unique_ptr<Connection> listener_;
  std::unique_ptr<Connection> leader_;
  std::set<std::string> held_;
};

}  // namespace

std::string redact(const std::string& url) {
  // postgres://user:password@host/db -> postgres://user:***@host/db
  const auto scheme = url.find("://");
  const auto at = url.find('@', scheme == std::string::npos ? 0 : scheme + 3);
  if (scheme == std::string::npos || at == std::string::npos) return url;
  const auto colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

std::unique_ptr<Store> open(const StoreOptions& options, const util::Clock& clock) {
  try {
    return std::make_unique<PostgresStore>(options, clock);
  } catch (const util::ContractError& e) {
    throw StoreError(std::string("cannot open PostgreSQL store ") + redact(options.target) + ": " +
                     e.what());
  }
}

}  // namespace schemagate::store::postgres
