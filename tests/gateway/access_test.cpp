#include "gateway/access.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <filesystem>
#include <random>
#include <thread>

namespace fs = std::filesystem;
using namespace schemagate;

namespace {

// The real SQLite store behind a disk that takes 20 ms to store events (a busy disk or a remote
// database): wide enough for a reader to meet a batch that is being stored.
class SlowEventDisk final : public store::Store {
 public:
  explicit SlowEventDisk(std::unique_ptr<store::Store> real) : real_(std::move(real)) {}
  void ping() override { real_->ping(); }
  store::StoreInfo info() const override { return real_->info(); }
  std::optional<store::Document> get(std::string_view c, std::string_view k) override {
    return real_->get(c, k);
  }
  store::Page list(std::string_view c, const store::ListQuery& q) override {
    return real_->list(c, q);
  }
  std::vector<store::Document> commit(const std::vector<store::Write>& w) override {
    return real_->commit(w);
  }
  std::int64_t append_event(std::string_view s, const boost::json::value& b) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return real_->append_event(s, b);
  }
  std::int64_t append_events(std::string_view s,
                             const std::vector<boost::json::value>& b) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return real_->append_events(s, b);
  }
  std::vector<store::Event> read_events(std::string_view s, std::int64_t after,
                                        std::size_t limit) override {
    return real_->read_events(s, after, limit);
  }
  std::vector<store::Event> read_last_events(std::string_view s, std::size_t limit) override {
    return real_->read_last_events(s, limit);
  }
  std::vector<store::Change> read_changes(std::int64_t after, std::size_t limit) override {
    return real_->read_changes(after, limit);
  }
  std::int64_t last_change() override { return real_->last_change(); }

 private:
  std::unique_ptr<store::Store> real_;
};

// An operator who reads the audit log right after an answer must find that request in it, also
// when the background writer has just taken the entry from the queue and not yet stored it.
TEST(AuditLog, AReadAfterAnAuditedRequestIncludesIt) {
  const auto dir = fs::temp_directory_path() / ("schemagate-audit-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  util::SystemClock clock;
  {
    SlowEventDisk store(store::open_store({(dir / "audit.db").string()}, clock));
    gateway::AccessControl access(store, clock, "admin-key");
    std::mt19937 random(7);
    std::uniform_int_distribution pause(0, 50);
    for (int i = 0; i < 80; ++i) {
      const std::string target = "agent-" + std::to_string(i);
      access.audit("alice", "invoke", target, 200, 1.0);
      // The writer wakes every 50 ms: some of these pauses let it take the entry first.
      std::this_thread::sleep_for(std::chrono::milliseconds(pause(random)));
      const auto tail = access.audit_tail(1);
      ASSERT_EQ(tail.size(), 1u) << "after " << i;
      ASSERT_EQ(tail.at(0).at("target").as_string(), target) << boost::json::serialize(tail);
    }
  }
  fs::remove_all(dir);
}

}  // namespace
