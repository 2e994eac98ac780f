#include "store/store.hpp"
#include "util/clock.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

namespace fs = std::filesystem;
using namespace schemagate;
using store::ConflictError;
using store::Write;

namespace {

// Where each test's database lives: a SQLite file in a fresh directory, or a fresh database on
// the PostgreSQL server SCHEMAGATE_TEST_POSTGRES_URL names (scripts/test.sh starts one).
class StoreContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("schemagate-store-" + std::to_string(::getpid())) /
           (std::string(info->name()) + "-" + GetParam());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    if (GetParam() == "sqlite") {
      target_ = (dir_ / "db.sqlite").string();
      return;
    }
    const char* url = std::getenv("SCHEMAGATE_TEST_POSTGRES_URL");
    if (!url) GTEST_SKIP() << "SCHEMAGATE_TEST_POSTGRES_URL is not set (scripts/test.sh sets it)";
    std::string base(url);
    server_url_ = base.substr(0, base.rfind('/'));
    database_ = "t" + std::to_string(::getpid()) + "_" + std::to_string(++databases_);
    admin("DROP DATABASE IF EXISTS " + database_);
    admin("CREATE DATABASE " + database_);
    target_ = server_url_ + "/" + database_;
  }
  void TearDown() override {
    if (!database_.empty()) admin("DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
  }
  std::unique_ptr<store::Store> open() { return store::open_store({target_}, clock_); }

  // Runs SQL on the test's database (or, with `maintenance`, on the server's postgres
  // database), behind the store's back.
  void sql(const std::string& text) {
    if (GetParam() == "sqlite") {
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(target_.c_str(), &db), SQLITE_OK);
      ASSERT_EQ(sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
      sqlite3_close(db);
    } else {
      run_pg(target_, text);
    }
  }
  void admin(const std::string& text) { run_pg(server_url_ + "/postgres", text); }
  static void run_pg(const std::string& url, const std::string& text) {
    PGconn* c = PQconnectdb(url.c_str());
    ASSERT_EQ(PQstatus(c), CONNECTION_OK) << PQerrorMessage(c);
    PGresult* r = PQexec(c, text.c_str());
    EXPECT_TRUE(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK)
        << text << ": " << PQresultErrorMessage(r);
    PQclear(r);
    PQfinish(c);
  }

  fs::path dir_;
  std::string target_, server_url_, database_;
  static inline int databases_ = 0;
  util::ManualClock clock_;
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreContract, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

// What only the SQLite file has.
class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("schemagate-store-" + std::to_string(::getpid())) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  std::unique_ptr<store::Store> open() {
    return store::open_store({(dir_ / "db.sqlite").string()}, clock_);
  }
  fs::path dir_;
  util::ManualClock clock_;
};

TEST_P(StoreContract, PutGetAndRevisions) {
  auto s = open();
  EXPECT_FALSE(s->get("agents", "a1"));
  const auto d1 = s->put("agents", "a1", {{"name", "translator"}});
  EXPECT_EQ(d1.revision, 1);
  clock_.advance(std::chrono::seconds(5));
  const auto d2 = s->put("agents", "a1", {{"name", "translator"}, {"v", 2}});
  EXPECT_EQ(d2.revision, 2);
  const auto got = s->get("agents", "a1");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->revision, 2);
  EXPECT_EQ(got->body.at("v"), 2);
  EXPECT_EQ(got->updated_at_ms - got->created_at_ms, 5000);
  // Collections are separate namespaces.
  EXPECT_FALSE(s->get("templates", "a1"));
}

TEST_P(StoreContract, NumbersRoundTripBitExact) {
  auto s = open();
  boost::json::array nums{0.1,
                          1e-300,
                          2.2250738585072011e-308,
                          123456789.12345679,
                          -0.30000000000000004,
                          std::int64_t{-9007199254740993},
                          std::uint64_t{18446744073709551615ull}};
  s->put("n", "k", nums);
  EXPECT_EQ(s->get("n", "k")->body, boost::json::value(nums));
}

TEST_P(StoreContract, ExpectedRevisionGuardsWrites) {
  auto s = open();
  s->put("agents", "a", {{"x", 1}}, 0);  // create only
  EXPECT_THROW(s->put("agents", "a", {{"x", 2}}, 0), ConflictError);
  try {
    s->put("agents", "a", {{"x", 2}}, 7);
    FAIL();
  } catch (const ConflictError& e) {
    EXPECT_EQ(e.actual_revision(), 1);
    EXPECT_NE(std::string(e.what()).find("expected revision 7, found revision 1"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(s->put("agents", "a", {{"x", 2}}, 1).revision, 2);
  EXPECT_THROW(s->remove("agents", "a", 1), ConflictError);
  EXPECT_TRUE(s->remove("agents", "a", 2));
  EXPECT_FALSE(s->remove("agents", "a"));
  EXPECT_FALSE(s->get("agents", "a"));
}

TEST_P(StoreContract, BatchIsAllOrNothing) {
  auto s = open();
  s->put("t", "keep", {{"v", 1}});
  EXPECT_THROW(s->commit({Write::put("t", "new", {{"v", 1}}), Write::put("t", "keep", {{"v", 2}}),
                          Write::put("t", "other", {{"v", 1}}, 5)}),
               ConflictError);
  EXPECT_FALSE(s->get("t", "new"));
  EXPECT_EQ(s->get("t", "keep")->body.at("v"), 1);
  const auto results =
      s->commit({Write::put("t", "new", {{"v", 1}}, 0), Write::remove("t", "keep")});
  EXPECT_EQ(results[0].revision, 1);
  EXPECT_EQ(results[1].revision, 1);  // the revision it had when removed
  EXPECT_FALSE(s->get("t", "keep"));
}

TEST_P(StoreContract, ListsByPrefixInPages) {
  auto s = open();
  for (const char* k : {"fr/b", "fr/a", "en/a", "fr/c", "fs/a", "fr/d", "fr/e"}) {
    s->put("docs", k, {{"k", k}});
  }
  std::vector<std::string> keys;
  store::ListQuery q{"fr/", "", 2};
  int pages = 0;
  for (;;) {
    const auto page = s->list("docs", q);
    ++pages;
    for (const auto& d : page.items)
      keys.push_back(d.key);
    if (!page.next_after_key) break;
    q.after_key = *page.next_after_key;
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"fr/a", "fr/b", "fr/c", "fr/d", "fr/e"}));
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(s->list("docs", {}).items.size(), 7u);
  EXPECT_TRUE(s->list("empty", {}).items.empty());
}

TEST_P(StoreContract, EventsAreOrderedPerStream) {
  auto s = open();
  const auto e1 = s->append_event("updates/flight", {{"n", 1}});
  s->append_event("updates/hotel", {{"n", 1}});
  const auto e3 = s->append_event("updates/flight", {{"n", 2}});
  EXPECT_LT(e1, e3);
  const auto all = s->read_events("updates/flight", 0, 10);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].body.at("n"), 2);
  const auto after = s->read_events("updates/flight", e1, 10);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].sequence, e3);
}

// GET /audit shows the newest entries; reading them must not depend on the stream's length.
TEST_P(StoreContract, TheLastEventsOfAStreamComeOldestFirst) {
  auto s = open();
  std::vector<boost::json::value> batch;
  for (int i = 0; i < 30; ++i)
    batch.push_back(boost::json::object{{"i", i}});
  s->append_events("audit", batch);
  s->append_event("other", boost::json::object{{"i", 99}});
  const auto tail = s->read_last_events("audit", 5);
  ASSERT_EQ(tail.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(tail[static_cast<std::size_t>(i)].body.at("i"), 25 + i);
    EXPECT_EQ(tail[static_cast<std::size_t>(i)].stream, "audit");
  }
  EXPECT_LT(tail.front().sequence, tail.back().sequence);
  EXPECT_EQ(s->read_last_events("audit", 100).size(), 30u);
  EXPECT_TRUE(s->read_last_events("nothing", 5).empty());
}

TEST_P(StoreContract, EventBatchesAreAppendedInOrder) {
  auto s = open();
  std::vector<boost::json::value> batch;
  for (int i = 0; i < 50; ++i)
    batch.push_back(boost::json::object{{"i", i}});
  const auto last = s->append_events("audit", batch);
  const auto events = s->read_events("audit", 0, 100);
  ASSERT_EQ(events.size(), 50u);
  EXPECT_EQ(events.back().sequence, last);
  for (int i = 0; i < 50; ++i)
    EXPECT_EQ(events[static_cast<std::size_t>(i)].body.at("i"), i);
}

TEST_P(StoreContract, DataAndMigrationsPersistAcrossReopen) {
  {
    auto s = open();
    s->put("agents", "a", {{"x", 1}});
    EXPECT_EQ(s->info().schema_version, 3);
  }
  auto s = open();
  EXPECT_EQ(s->get("agents", "a")->body.at("x"), 1);
  EXPECT_EQ(s->info().backend, GetParam());
  EXPECT_EQ(s->info().schema_version, 3);
  EXPECT_NO_THROW(s->ping());
}

TEST_F(SqliteStoreTest, UsesWalMode) {
  open();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "db.sqlite").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_P(StoreContract, RefusesADatabaseFromANewerVersion) {
  open();
  sql("INSERT INTO schema_migrations (version, name, applied_at) VALUES (42, 'from the future', "
      "0)");
  try {
    open();
    FAIL() << "opened a database from a newer version";
  } catch (const store::SchemaTooNewError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 42"), std::string::npos) << e.what();
  }
}

TEST_F(SqliteStoreTest, UnopenableFileIsAClearError) {
  try {
    store::open_store({(dir_ / "missing-dir" / "db.sqlite").string()}, clock_);
    FAIL();
  } catch (const store::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("missing-dir"), std::string::npos) << e.what();
  }
}

// A child process writes and reports each acknowledged write through a pipe; the parent kills
// it with SIGKILL mid-stream and checks that every acknowledged write is in the file.
TEST_P(StoreContract, AcknowledgedWritesSurviveKill9) {
  const auto path = target_;
  store::open_store({path}, clock_);  // migrate before forking
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    util::SystemClock clock;
    auto s = store::open_store({path}, clock);
    for (int i = 0;; ++i) {
      const std::string key = "k" + std::to_string(i);
      s->put("acks", key, {{"i", i}});
      s->append_event("acks", {{"i", i}});
      const std::string line = key + "\n";
      if (::write(fds[1], line.data(), line.size()) < 0) ::_exit(1);
    }
  }
  ::close(fds[1]);
  FILE* acks = ::fdopen(fds[0], "r");
  std::set<std::string> acknowledged;
  char line[64];
  while (acknowledged.size() < 200 && std::fgets(line, sizeof line, acks)) {
    std::string k(line);
    k.pop_back();
    acknowledged.insert(k);
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  while (std::fgets(line, sizeof line, acks)) {  // acks written before the kill landed
    std::string k(line);
    if (k.back() == '\n') {
      k.pop_back();
      acknowledged.insert(k);
    }
  }
  std::fclose(acks);
  ASSERT_GE(acknowledged.size(), 200u);

  auto s = store::open_store({path}, clock_);
  for (const auto& k : acknowledged) {
    ASSERT_TRUE(s->get("acks", k)) << k << " was acknowledged but is lost";
  }
  EXPECT_GE(s->read_events("acks", 0, 1'000'000).size(), acknowledged.size());
}

TEST_P(StoreContract, ConcurrentWritersDoNotLoseUpdates) {
  auto s = open();
  s->put("c", "counter", {{"n", 0}});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        for (;;) {  // optimistic retry loop, as a service would write it
          const auto cur = s->get("c", "counter");
          try {
            s->put("c", "counter", {{"n", cur->body.at("n").as_int64() + 1}}, cur->revision);
            break;
          } catch (const ConflictError&) {
          }
        }
      }
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(s->get("c", "counter")->body.at("n"), 200);
  EXPECT_EQ(s->get("c", "counter")->revision, 201);
}

// Keys list in byte order on both stores (UTF-8 bytes, not a locale's collation).
TEST_P(StoreContract, KeysListInByteOrder) {
  auto s = open();
  for (const char* k : {"b", "B", "a", "\xc3\xa9", "\xe4\xb8\xad", "a~", "A"})
    s->put("k", k, {{"k", k}});
  std::vector<std::string> keys;
  for (const auto& d : s->list("k", {}).items)
    keys.push_back(d.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"A", "B", "a", "a~", "b", "\xc3\xa9", "\xe4\xb8\xad"}));
  EXPECT_EQ(s->get("k", "\xe4\xb8\xad")->body.at("k"), "\xe4\xb8\xad");
}

// Two stores on one database, as two replicas: a create-only write has one winner, and each
// sees what the other committed.
TEST_P(StoreContract, TwoOpenStoresAgreeOnEveryWrite) {
  auto a = open();
  auto b = open();
  a->put("agents", "x", {{"by", "a"}});
  EXPECT_EQ(b->get("agents", "x")->body.at("by"), "a");
  std::atomic<int> created{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      try {
        (t % 2 ? a : b)->put("agents", "once", {{"t", t}}, 0);
        ++created;
      } catch (const ConflictError& e) {
        EXPECT_EQ(e.actual_revision(), 1);
        ++refused;
      }
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(created, 1);
  EXPECT_EQ(refused, 7);
  b->append_event("feed", {{"n", 1}});
  const auto seq = a->append_event("feed", {{"n", 2}});
  const auto events = b->read_events("feed", 0, 10);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events.back().sequence, seq);
}

// The change log replicas follow: every committed write, in commit order, seen from any store
// on the database.
TEST_P(StoreContract, ChangesListEveryCommittedWriteInOrder) {
  auto a = open();
  auto b = open();
  const auto start = b->last_change();
  a->put("agents", "x", {{"v", 1}});
  a->commit({Write::put("agents", "y", {{"v", 1}}), Write::put("agents", "x", {{"v", 2}})});
  EXPECT_THROW(a->put("agents", "x", {{"v", 3}}, 1), ConflictError);  // refused: not logged
  a->remove("agents", "y");
  const auto changes = b->read_changes(start, 100);
  std::vector<std::string> seen;
  for (const auto& c : changes)
    seen.push_back(c.collection + "/" + c.key + "@" + std::to_string(c.revision));
  EXPECT_EQ(seen,
            (std::vector<std::string>{"agents/x@1", "agents/y@1", "agents/x@2", "agents/y@0"}));
  EXPECT_EQ(b->last_change(), changes.back().sequence);
  EXPECT_TRUE(b->read_changes(changes.back().sequence, 100).empty());
  EXPECT_EQ(b->read_changes(start, 2).size(), 2u);
}

// Work that must run once: one store leads a job at a time; when it goes, another takes over.
TEST_P(StoreContract, OneProcessLeadsAJobAtATime) {
  auto a = open();
  auto b = open();
  EXPECT_TRUE(a->lead("evolution"));
  EXPECT_TRUE(a->lead("evolution")) << "the leader keeps leading";
  if (GetParam() == "sqlite") {
    EXPECT_TRUE(b->lead("evolution")) << "one process per SQLite file: it always leads";
    return;
  }
  EXPECT_FALSE(b->lead("evolution"));
  EXPECT_TRUE(b->lead("audit-pruning")) << "jobs are led separately";
  a.reset();  // the leader's process ends
  // The server drops a closed session's locks when its backend notices the close: a moment.
  bool took_over = false;
  for (int i = 0; i < 100 && !took_over; ++i) {
    took_over = b->lead("evolution");
    if (!took_over) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(took_over) << "another store takes over within 2 s";
}

// A URL that asks for TLS gets it (libpq's sslmode; the test server offers TLS).
TEST_P(StoreContract, TlsWhenTheUrlAsksForIt) {
  if (GetParam() == "sqlite") GTEST_SKIP() << "a file has no transport";
  auto s = store::open_store({target_ + "?sslmode=require"}, clock_);
  s->put("tls", "k", {{"v", 1}});
  EXPECT_EQ(s->get("tls", "k")->body.at("v"), 1);
  EXPECT_EQ(s->info().location.find("sslmode=require") != std::string::npos, true);
}

}  // namespace
