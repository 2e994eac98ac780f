#include "store/sqlite/sqlite_store.hpp"

#include "store/sqlite/migrations.hpp"
#include "store/stored_json.hpp"
#include "util/clock.hpp"

#include <sqlite3.h>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <mutex>

namespace schemagate::store::sqlite {

namespace {

class Statement;

class Connection {
 public:
  explicit Connection(const std::string& path) {
    const int rc =
        sqlite3_open_v2(path.c_str(), &db_,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
      std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close(db_);
      db_ = nullptr;
      throw StoreError("cannot open SQLite database " + path + ": " + msg);
    }
    sqlite3_extended_result_codes(db_, 1);
  }
  ~Connection() { sqlite3_close_v2(db_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* handle() const { return db_; }

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      throw StoreError("SQLite: " + msg);
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw StoreError(what + ": " + sqlite3_errmsg(db_));
  }

 private:
  sqlite3* db_ = nullptr;
};

class Statement {
 public:
  Statement(Connection& conn, const char* sql) : conn_(conn) {
    if (sqlite3_prepare_v3(conn.handle(), sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) !=
        SQLITE_OK) {
      conn.fail(std::string("preparing \"") + sql + "\"");
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Resets and binds in one go; texts are bound without copying and must outlive step().
  template <typename... Args>
  Statement& bind(const Args&... args) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    int i = 0;
    (bind_one(++i, args), ...);
    return *this;
  }

  // True while a row is available.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    const std::string msg = sqlite3_errmsg(conn_.handle());
    sqlite3_reset(stmt_);
    throw StoreError("SQLite: " + msg);
  }

  std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  std::string_view text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string_view{};
  }
  void done() { sqlite3_reset(stmt_); }

 private:
  void bind_one(int i, std::string_view s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_STATIC);
  }
  void bind_one(int i, const std::string& s) { bind_one(i, std::string_view(s)); }
  void bind_one(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void bind_one(int i, std::size_t v) {
    sqlite3_bind_int64(stmt_, i, static_cast<std::int64_t>(v));
  }

  Connection& conn_;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteStore final : public Store {
 public:
  SqliteStore(const StoreOptions& options, const util::Clock& clock)
      : path_(options.target), clock_(clock), conn_(options.target) {
    conn_.exec("PRAGMA busy_timeout = " + std::to_string(options.busy_timeout_ms));
    conn_.exec("PRAGMA journal_mode = WAL");
    conn_.exec("PRAGMA synchronous = FULL");
    conn_.exec("PRAGMA foreign_keys = ON");
    migrate();
    prepare();
  }

  void ping() override {
    std::lock_guard lock(mu_);
    ping_->bind();
    if (!ping_->step()) throw StoreError("SQLite ping returned no row");
    ping_->done();
  }

  StoreInfo info() const override { return {"sqlite", path_, schema_version_}; }

  std::optional<Document> get(std::string_view collection, std::string_view key) override {
    std::lock_guard lock(mu_);
    auto& st = get_->bind(collection, key);
    if (!st.step()) return std::nullopt;
    Document d = row_to_document(st, 0, collection, key);
    st.done();
    return d;
  }

  Page list(std::string_view collection, const ListQuery& q) override {
    std::lock_guard lock(mu_);
    Page page;
    const std::size_t limit = q.limit == 0 ? 1 : q.limit;
    // Keys >= prefix and < prefix's successor, strictly after after_key; one extra row tells
    // whether another page follows.
    std::string lower = std::max(q.key_prefix, q.after_key);
    auto& st = list_->bind(collection, lower, q.after_key, q.key_prefix, limit + 1);
    while (st.step()) {
      const std::string key(st.text(0));
      if (!key.starts_with(q.key_prefix)) break;
      if (page.items.size() == limit) {
        page.next_after_key = page.items.back().key;
        break;
      }
      page.items.push_back(row_to_document(st, 1, collection, key));
    }
    st.done();
    return page;
  }

  std::vector<Document> commit(const std::vector<Write>& writes) override {
    std::lock_guard lock(mu_);
    const std::int64_t now = clock_.now_unix_ms();
    std::vector<Document> results;
    results.reserve(writes.size());
    conn_.exec("BEGIN IMMEDIATE");
    try {
      for (const auto& w : writes)
        results.push_back(apply(w, now));
      for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& d = results[i];
        const std::int64_t revision = writes[i].kind == Write::Kind::remove ? 0 : d.revision;
        auto& st = change_->bind(d.collection, d.key, revision, now);
        st.step();
        st.done();
      }
      if (++commits_ % 1024 == 0) conn_.exec(kPruneChanges);
      conn_.exec("COMMIT");
    } catch (...) {
      sqlite3_exec(conn_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    return results;
  }

  std::int64_t append_event(std::string_view stream, const boost::json::value& body) override {
    std::lock_guard lock(mu_);
    const std::string text = boost::json::serialize(body);
    auto& st = append_->bind(stream, text, clock_.now_unix_ms());
    st.step();
    st.done();
    return sqlite3_last_insert_rowid(conn_.handle());
  }

  std::int64_t append_events(std::string_view stream,
                             const std::vector<boost::json::value>& bodies) override {
    std::lock_guard lock(mu_);
    const std::int64_t now = clock_.now_unix_ms();
    conn_.exec("BEGIN IMMEDIATE");
    try {
      for (const auto& body : bodies) {
        const std::string text = boost::json::serialize(body);
        auto& st = append_->bind(stream, text, now);
        st.step();
        st.done();
      }
      conn_.exec("COMMIT");
    } catch (...) {
      sqlite3_exec(conn_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    return sqlite3_last_insert_rowid(conn_.handle());
  }

  std::vector<Event> read_events(std::string_view stream, std::int64_t after_sequence,
                                 std::size_t limit) override {
    std::lock_guard lock(mu_);
    return events_of(read_events_->bind(stream, after_sequence, limit), stream);
  }

  std::vector<Event> read_last_events(std::string_view stream, std::size_t limit) override {
    std::lock_guard lock(mu_);
    auto out = events_of(read_last_events_->bind(stream, limit), stream);
    std::reverse(out.begin(), out.end());  // read newest first
    return out;
  }

  std::vector<Change> read_changes(std::int64_t after_sequence, std::size_t limit) override {
    std::lock_guard lock(mu_);
    std::vector<Change> out;
    auto& st = read_changes_->bind(after_sequence, limit);
    while (st.step()) {
      out.push_back(
          Change{st.integer(0), std::string(st.text(1)), std::string(st.text(2)), st.integer(3)});
    }
    st.done();
    return out;
  }

  std::int64_t last_change() override {
    std::lock_guard lock(mu_);
    auto& st = last_change_->bind();
    const std::int64_t last = st.step() ? st.integer(0) : 0;
    st.done();
    return last;
  }

 private:
  static constexpr const char* kPruneChanges =
      "DELETE FROM changes WHERE sequence < (SELECT MAX(sequence) FROM changes) - 100000";

  // Reads (revision, body, created_at, updated_at) starting at column `first`.
  static Document row_to_document(const Statement& st, int first, std::string_view collection,
                                  std::string_view key) {
    Document d;
    d.collection = collection;
    d.key = key;
    d.revision = st.integer(first);
    d.body = parse_stored(st.text(first + 1));
    d.created_at_ms = st.integer(first + 2);
    d.updated_at_ms = st.integer(first + 3);
    return d;
  }

  Document apply(const Write& w, std::int64_t now) {
    std::int64_t current = 0;
    std::int64_t created = now;
    {
      auto& st = head_->bind(w.collection, w.key);
      if (st.step()) {
        current = st.integer(0);
        created = st.integer(1);
      }
      st.done();
    }
    Document d = written(w, current, created, now);
    if (w.kind == Write::Kind::remove) {
      if (current != 0) {
        auto& st = delete_->bind(w.collection, w.key);
        st.step();
        st.done();
      }
      return d;
    }
    const std::string text = boost::json::serialize(w.body);
    auto& st = upsert_->bind(w.collection, w.key, d.revision, text, created, now);
    st.step();
    st.done();
    return d;
  }

  void migrate() {
    conn_.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT "
        "NULL, applied_at INTEGER NOT NULL)");
    int applied = 0;
    {
      Statement st(conn_, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
      st.bind();
      if (st.step()) applied = static_cast<int>(st.integer(0));
    }
    const auto all = migrations();
    const int known = all.empty() ? 0 : all.back().version;
    if (applied > known) {
      throw SchemaTooNewError("database " + path_ + " has schema version " +
                              std::to_string(applied) + ", newer than the " +
                              std::to_string(known) +
                              " this schemagate understands; run a newer schemagate or point "
                              "--db at another file");
    }
    for (const auto& m : all) {
      if (m.version <= applied) continue;
      conn_.exec("BEGIN IMMEDIATE");
      try {
        conn_.exec(m.sql);
        Statement st(conn_,
                     "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
        st.bind(std::int64_t{m.version}, std::string_view(m.name), clock_.now_unix_ms());
        st.step();
        st.done();
        conn_.exec("COMMIT");
      } catch (const std::exception& e) {
        sqlite3_exec(conn_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw StoreError("migration " + std::to_string(m.version) + " (" + m.name + ") failed on " +
                         path_ + ": " + e.what());
      }
    }
    schema_version_ = known > applied ? known : applied;
  }

  void prepare() {
    ping_.emplace(conn_, "SELECT 1");
    get_.emplace(conn_,
                 "SELECT revision, body, created_at, updated_at FROM documents WHERE collection = "
                 "? AND key = ?");
    head_.emplace(conn_,
                  "SELECT revision, created_at FROM documents WHERE collection = ? AND key = ?");
    list_.emplace(conn_,
                  "SELECT key, revision, body, created_at, updated_at FROM documents WHERE "
                  "collection = ?1 AND key >= ?2 AND key > ?3 AND substr(key, 1, length(?4)) = "
                  "?4 ORDER BY key LIMIT ?5");
    upsert_.emplace(conn_,
                    "INSERT INTO documents (collection, key, revision, body, created_at, "
                    "updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (collection, key) DO "
                    "UPDATE SET revision = excluded.revision, body = excluded.body, updated_at = "
                    "excluded.updated_at");
    delete_.emplace(conn_, "DELETE FROM documents WHERE collection = ? AND key = ?");
    append_.emplace(conn_, "INSERT INTO events (stream, body, created_at) VALUES (?, ?, ?)");
    change_.emplace(conn_,
                    "INSERT INTO changes (collection, key, revision, created_at) VALUES (?, ?, ?, "
                    "?)");
    read_changes_.emplace(conn_,
                          "SELECT sequence, collection, key, revision FROM changes WHERE sequence "
                          "> ? ORDER BY sequence LIMIT ?");
    last_change_.emplace(conn_, "SELECT COALESCE(MAX(sequence), 0) FROM changes");
    read_events_.emplace(conn_,
                         "SELECT sequence, body, created_at FROM events WHERE stream = ? AND "
                         "sequence > ? ORDER BY sequence LIMIT ?");
    read_last_events_.emplace(conn_,
                              "SELECT sequence, body, created_at FROM events WHERE stream = ? "
                              "ORDER BY sequence DESC LIMIT ?");
  }

  // The rows of a bound (sequence, body, created_at) query, in the order it returns them.
  static std::vector<Event> events_of(Statement& st, std::string_view stream) {
    std::vector<Event> out;
    while (st.step()) {
      out.push_back(
          Event{st.integer(0), std::string(stream), parse_stored(st.text(1)), st.integer(2)});
    }
    st.done();
    return out;
  }

  std::string path_;
  const util::Clock& clock_;
  std::mutex mu_;
  Connection conn_;
  int schema_version_ = 0;
  std::optional<Statement> ping_, get_, head_, list_, upsert_, delete_, append_, read_events_,
      read_last_events_, change_, read_changes_, last_change_;
  std::uint64_t commits_ = 0;
};

}  // namespace

std::unique_ptr<Store> open(const StoreOptions& options, const util::Clock& clock) {
  return std::make_unique<SqliteStore>(options, clock);
}

}  // namespace schemagate::store::sqlite
