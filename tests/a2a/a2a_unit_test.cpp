// The A2A room without a socket: wire shapes, media types, versions, and the task store's
// listing and retention on a real SQLite file with a manual clock.

#include "a2a/task_store.hpp"
#include "a2a/wire.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/text.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <boost/json.hpp>

#include <filesystem>

namespace bj = boost::json;
namespace fs = std::filesystem;
using namespace schemagate;
using namespace std::chrono_literals;

namespace {

TEST(A2AWire, VersionsAbsentMeansZeroThreeAndOthersAreRefused) {
  EXPECT_EQ(a2a::parse_wire_version(std::nullopt), a2a::WireVersion::v0_3);
  EXPECT_EQ(a2a::parse_wire_version(" "), a2a::WireVersion::v0_3);
  EXPECT_EQ(a2a::parse_wire_version("0.3"), a2a::WireVersion::v0_3);
  EXPECT_EQ(a2a::parse_wire_version("1.0"), a2a::WireVersion::v1_0);
  EXPECT_EQ(a2a::parse_wire_version("1.0.2"), a2a::WireVersion::v1_0);  // patch ignored
  EXPECT_EQ(a2a::parse_wire_version("1"), a2a::WireVersion::v1_0);
  EXPECT_FALSE(a2a::parse_wire_version("1.1"));
  EXPECT_FALSE(a2a::parse_wire_version("2.0"));
  EXPECT_FALSE(a2a::parse_wire_version("latest"));
}

TEST(A2AWire, SchemaMediaTypesRoundTripQuotedOrNot) {
  const auto plain = util::parse_media_type("Application/JSON ; schema=fightComparison");
  EXPECT_EQ(plain.essence, "application/json");
  EXPECT_EQ(plain.schema, "fightComparison");
  EXPECT_EQ(util::parse_media_type("application/json;charset=utf-8").schema, "");
  const auto odd = a2a::schema_media_type("book flight;v2");
  EXPECT_EQ(odd, R"(application/json;schema="book flight;v2")");
  EXPECT_EQ(util::parse_media_type(odd).schema, "book flight;v2");
  EXPECT_EQ(a2a::schema_media_type("translate.input"), "application/json;schema=translate.input");
}

TEST(A2AWire, PartsOfBothShapesReadIntoOne) {
  const auto v03 = a2a::read_part(
      bj::parse(
          R"({"kind":"data","data":{"a":1},"metadata":{"mimeType":"application/json;schema=x"}})"),
      "p");
  EXPECT_EQ(v03.at("data").at("a"), 1);
  EXPECT_EQ(a2a::media_type_of(v03), "application/json;schema=x");
  const auto file = a2a::read_part(
      bj::parse(
          R"({"kind":"file","file":{"uri":"https://x/y.png","mimeType":"image/png","name":"y.png"}})"),
      "p");
  EXPECT_EQ(file.at("url"), "https://x/y.png");
  EXPECT_EQ(file.at("mediaType"), "image/png");
  EXPECT_EQ(file.at("filename"), "y.png");
  const auto named = a2a::read_part(bj::parse(R"({"text":"Lion","metadata":{"name":"a"}})"), "p");
  EXPECT_EQ(a2a::name_of(named), "a");
  EXPECT_EQ(a2a::kind_of(named), a2a::PartKind::text);
  // Neither shape: the error names the part.
  try {
    a2a::read_part(bj::parse(R"({"text":"x","data":{}})"), "message.parts[2]");
    FAIL();
  } catch (const a2a::A2AError& e) {
    EXPECT_EQ(e.json_rpc_code(), -32602);
    EXPECT_NE(std::string(e.what()).find("message.parts[2]"), std::string::npos);
  }
  EXPECT_THROW(a2a::read_part(bj::parse(R"({"kind":"file","file":{}})"), "p"), a2a::A2AError);
  EXPECT_THROW(
      a2a::read_message(bj::parse(R"({"messageId":"1","role":"ROLE_USER","parts":[]})"), "m"),
      a2a::A2AError);
  EXPECT_THROW(a2a::read_message(
                   bj::parse(R"({"messageId":"1","role":"robot","parts":[{"text":"x"}]})"), "m"),
               a2a::A2AError);
}

TEST(A2AWire, ZeroThreeShapesOfATaskAndItsEvents) {
  const auto task = bj::parse(R"({"id":"t","contextId":"c",
      "status":{"state":"TASK_STATE_INPUT_REQUIRED","timestamp":"2026-01-01T00:00:00.000Z"},
      "artifacts":[{"artifactId":"a","name":"n","parts":[{"data":3,"mediaType":"application/json"}]}],
      "history":[{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}]})")
                        .as_object();
  const auto old = a2a::task_v03(task);
  EXPECT_EQ(old.at("kind"), "task");
  EXPECT_EQ(old.at("status").at("state"), "input-required");
  EXPECT_EQ(old.at("history").at(0).at("role"), "user");
  // 0.3 data parts hold objects: a number is wrapped as the SDK's compat layer does.
  const auto& part = old.at("artifacts").at(0).at("parts").at(0);
  EXPECT_EQ(part.at("data").at("value"), 3);
  EXPECT_EQ(part.at("metadata").at("data_part_compat"), true);
  // And back.
  const auto again = a2a::task_from_v03(old);
  EXPECT_EQ(again.at("status").at("state"), "TASK_STATE_INPUT_REQUIRED");
  EXPECT_EQ(again.at("history").at(0).at("role"), "ROLE_USER");
  const auto final_event =
      a2a::stream_event_v03(bj::parse(R"({"statusUpdate":{"taskId":"t","contextId":"c",
      "status":{"state":"TASK_STATE_COMPLETED"}}})")
                                .as_object());
  EXPECT_EQ(final_event.at("kind"), "status-update");
  EXPECT_EQ(final_event.at("final"), true);
}

TEST(A2AWire, UpstreamRepliesAndEventsOfBothVersions) {
  const auto v1 = a2a::read_upstream_reply(
      R"({"jsonrpc":"2.0","id":"1","result":{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}})",
      a2a::WireVersion::v1_0);
  EXPECT_EQ(v1.at("task").at("id"), "t");
  const auto v03 = a2a::read_upstream_reply(
      R"({"jsonrpc":"2.0","id":"1","result":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"ok"}]}})",
      a2a::WireVersion::v0_3);
  EXPECT_EQ(v03.at("message").at("role"), "ROLE_AGENT");
  EXPECT_EQ(v03.at("message").at("parts").at(0).at("text"), "ok");
  try {
    a2a::read_upstream_reply(
        R"({"jsonrpc":"2.0","id":"1","error":{"code":-32001,"message":"gone"}})",
        a2a::WireVersion::v1_0);
    FAIL();
  } catch (const a2a::A2AError& e) {
    EXPECT_EQ(e.json_rpc_code(), -32006);
    EXPECT_NE(std::string(e.what()).find("-32001: gone"), std::string::npos);
  }
  const auto ev = a2a::read_upstream_event(
      R"({"jsonrpc":"2.0","id":"1","result":{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"kind":"data","data":{"x":1},"metadata":{"mimeType":"application/json;schema=s"}}]}}})",
      a2a::WireVersion::v0_3);
  EXPECT_EQ(ev.at("artifactUpdate").at("artifact").at("parts").at(0).at("mediaType"),
            "application/json;schema=s");
  EXPECT_THROW(a2a::read_upstream_event("not json", a2a::WireVersion::v1_0), a2a::A2AError);
}

class TaskStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("schemagate-a2a-" + std::to_string(::getpid())) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_ = store::open_store({(dir_ / "db.sqlite").string()}, clock_);
  }
  a2a::StoredTask task(const std::string& id, const std::string& owner,
                       const std::string& state = "TASK_STATE_COMPLETED") {
    a2a::StoredTask t;
    t.task = bj::object{
        {"id", id}, {"contextId", "ctx-" + owner}, {"status", bj::object{{"state", state}}}};
    t.agent = "agent";
    t.owner = owner;
    return t;
  }
  fs::path dir_;
  util::ManualClock clock_;
  std::unique_ptr<store::Store> store_;
};

TEST_F(TaskStoreTest, ListsAnOwnersTasksNewestFirstInPages) {
  a2a::TaskStore tasks(*store_, clock_, 24h);
  for (int i = 0; i < 5; ++i) {
    auto t = task("t" + std::to_string(i), "alice");
    tasks.save(t);
    clock_.advance(1s);
  }
  auto other = task("b0", "bob");
  tasks.save(other);
  // An update moves a task to the front.
  auto t1 = *tasks.get("t1");
  t1.task["status"] = bj::object{{"state", "TASK_STATE_CANCELED"}};
  clock_.advance(1s);
  tasks.save(t1);
  a2a::TaskStore::Query q{"agent", "alice", "", "", 0, 2, ""};
  const auto first = tasks.list(q);
  ASSERT_EQ(first.tasks.size(), 2u);
  EXPECT_EQ(first.total, 5u);
  EXPECT_EQ(first.tasks[0].id(), "t1");
  EXPECT_EQ(first.tasks[1].id(), "t4");
  q.page_token = first.next_page_token;
  const auto second = tasks.list(q);
  EXPECT_EQ(second.tasks[0].id(), "t3");
  EXPECT_EQ(second.tasks[1].id(), "t2");
  q.page_token = second.next_page_token;
  const auto last = tasks.list(q);
  ASSERT_EQ(last.tasks.size(), 1u);
  EXPECT_EQ(last.tasks[0].id(), "t0");
  EXPECT_EQ(last.next_page_token, "");
  q.page_token = "";
  q.state = "TASK_STATE_CANCELED";
  EXPECT_EQ(tasks.list(q).total, 1u);
  q.page_token = "bm90LW91cnM=";  // base64 of a key that is not this listing's
  EXPECT_THROW(tasks.list(q), std::invalid_argument);
  // A stale write loses.
  auto stale = task("t2", "alice");
  stale.revision = 1;
  auto current = *tasks.get("t2");
  current.task["status"] = bj::object{{"state", "TASK_STATE_FAILED"}};
  tasks.save(current);
  EXPECT_THROW(tasks.save(stale), store::ConflictError);
}

TEST_F(TaskStoreTest, TasksExpireAfterTheRetentionAndArePruned) {
  a2a::TaskStore tasks(*store_, clock_, 1h);
  auto old = task("old", "alice");
  tasks.save(old);
  clock_.advance(50min);
  auto young = task("young", "alice");
  tasks.save(young);
  clock_.advance(20min);  // "old" is past its hour, "young" is not
  EXPECT_FALSE(tasks.get("old"));
  EXPECT_TRUE(tasks.get("young"));
  EXPECT_EQ(tasks.list({"agent", "alice", "", "", 0, 10, ""}).total, 1u);
  EXPECT_EQ(tasks.prune(), 1u);
  EXPECT_FALSE(store_->get("a2a_tasks", "old"));
  EXPECT_TRUE(store_->get("a2a_tasks", "young"));
}

}  // namespace
