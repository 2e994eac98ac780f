// Seed 004 §7: API keys, roles, entitlements, rate limits and the audit log.

#include "support/http_client.hpp"
#include "support/server_process.hpp"
#include "support/test_agent.hpp"
#include "util/files.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <csignal>

namespace bj = boost::json;
using schemagate::testing::Agent;
using schemagate::testing::body_json;
using schemagate::testing::error_code;
using schemagate::testing::fresh_dir;
using schemagate::testing::HttpClient;
using schemagate::testing::HttpResponse;
using schemagate::testing::Server;

namespace {

const std::string kAdmin = "test-admin-key-0123456789";

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    server_ = std::make_unique<Server>(
        dir_, std::vector<std::string>{},
        std::map<std::string, std::string>{{"SCHEMAGATE_ADMIN_KEY", kAdmin}});
    c_ = std::make_unique<HttpClient>("127.0.0.1", server_->port);
  }
  HttpResponse as(const std::string& key, const std::string& method, const std::string& target,
                  const std::string& body = {}) {
    std::map<std::string, std::string> h{{"Content-Type", "application/json"}};
    if (!key.empty()) h["Authorization"] = "Bearer " + key;
    return c_->request(method, target, body, h);
  }
  std::string key_for(const std::string& client, const std::string& role,
                      const std::string& extra = "") {
    const auto r = as(kAdmin, "POST", "/keys",
                      R"({"client_id":")" + client + R"(","role":")" + role + "\"" + extra + "}");
    EXPECT_EQ(r.status, 201) << r.body;
    return std::string(body_json(r).at("key").as_string());
  }
  std::string card(const std::string& id, const std::string& endpoint,
                   const std::string& visibility = "") {
    return R"({"id":")" + id + R"(","name":")" + id +
           R"(","description":"Answers questions about )" + id + R"(.","endpoint":")" + endpoint +
           R"(","inputs":{"text":"string"}, "outputs": {"translated_text":"string"})" +
           (visibility.empty() ? "" : ",\"visibility\":" + visibility) + "}";
  }
  std::filesystem::path dir_;
  Agent agent_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<HttpClient> c_;
};

TEST_F(SecurityTest, WritesNeedAPublisherKey) {
  const auto publisher = key_for("acme", "publisher");
  const auto client = key_for("app", "client");
  const auto body = card("public-bot", agent_.url("/translate"));
  const auto anonymous = as("", "POST", "/agents", body);
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(anonymous.header("www-authenticate"), "Bearer");
  EXPECT_EQ(as("sgk_not-a-key", "POST", "/agents", body).status, 401);
  const auto wrong_role = as(client, "POST", "/agents", body);
  EXPECT_EQ(wrong_role.status, 403);
  EXPECT_EQ(error_code(wrong_role), "Forbidden");
  EXPECT_EQ(as(publisher, "POST", "/agents", body).status, 201);
  // Reading the public registry needs no key.
  EXPECT_EQ(as("", "GET", "/agents/public-bot").status, 200);
  EXPECT_EQ(body_json(as("", "POST", "/agents/search", R"({"query":"public bot"})")).at("count"),
            1);
  // Templates: publishing needs a publisher, negotiating nothing, submitting a client key.
  EXPECT_EQ(as("", "PUT", "/scenarios/s/versions/1.0.0", "{}").status, 401);
  EXPECT_EQ(as(client, "PUT", "/scenarios/s/versions/1.0.0", "{}").status, 403);
}

// A revoked key stops working at once (its cached principal goes with it); only admins revoke.
TEST_F(SecurityTest, RevokedKeysStopWorking) {
  const auto key = key_for("mallory", "publisher");
  EXPECT_EQ(as(key, "POST", "/agents", card("m1", agent_.url("/translate"))).status, 201);
  EXPECT_EQ(as(key, "DELETE", "/keys/mallory").status, 403);
  EXPECT_EQ(as(kAdmin, "DELETE", "/keys/mallory").status, 204);
  EXPECT_EQ(as(key, "POST", "/agents", card("m2", agent_.url("/translate"))).status, 401);
  EXPECT_EQ(as(kAdmin, "DELETE", "/keys/mallory").status, 404);
}

TEST_F(SecurityTest, OnlyAdminsCreateKeysAndKeysAreShownOnce) {
  if (schemagate::testing::on_postgres()) GTEST_SKIP() << "about the SQLite file";
  const auto publisher = key_for("acme", "publisher");
  EXPECT_EQ(as(publisher, "POST", "/keys", R"({"client_id":"x","role":"admin"})").status, 403);
  EXPECT_EQ(as(kAdmin, "POST", "/keys", R"({"client_id":"x","role":"root"})").status, 400);
  const auto r =
      as(kAdmin, "POST", "/keys", R"({"client_id":"x","role":"client","groups":["staff"]})");
  ASSERT_EQ(r.status, 201);
  EXPECT_TRUE(body_json(r).at("key").as_string().starts_with("sgk_"));
  // Only a hash is kept: the key text is nowhere in the database file.
  const auto db = schemagate::util::read_file((dir_ / "schemagate.db").string());
  EXPECT_EQ(db.find(std::string(body_json(r).at("key").as_string())), std::string::npos);
}

TEST_F(SecurityTest, PrivateAgentsAreVisibleOnlyToEntitledClients) {
  const auto publisher = key_for("acme", "publisher");
  const auto hr = key_for("hr-portal", "client");
  const auto staff = key_for("someone", "client", R"(,"groups":["staff"])");
  const auto outsider = key_for("outsider", "client");
  ASSERT_EQ(as(publisher, "POST", "/agents",
               card("internal-hr", agent_.url("/translate"),
                    R"({"clients":["hr-portal"],"groups":["staff"]})"))
                .status,
            201);
  for (const auto& key : {std::string(), outsider}) {
    EXPECT_EQ(as(key, "GET", "/agents/internal-hr").status, 404);
    EXPECT_TRUE(body_json(as(key, "GET", "/agents")).at("agents").as_array().empty());
    EXPECT_EQ(
        body_json(as(key, "POST", "/agents/search", R"({"query":"internal hr"})")).at("count"), 0);
  }
  EXPECT_EQ(as(outsider, "POST", "/agents/internal-hr/invoke", R"({"text":"x"})").status, 404);
  for (const auto& key : {hr, staff}) {
    EXPECT_EQ(as(key, "GET", "/agents/internal-hr").status, 200);
    EXPECT_EQ(
        body_json(as(key, "POST", "/agents/search", R"({"query":"internal hr"})")).at("count"), 1);
    EXPECT_EQ(as(key, "POST", "/agents/internal-hr/invoke", R"({"text":"x"})").status, 200);
  }
}

TEST_F(SecurityTest, InvocationNeedsAKeyAndIsRateLimited) {
  const auto publisher = key_for("acme", "publisher");
  ASSERT_EQ(as(publisher, "POST", "/agents", card("bot", agent_.url("/translate"))).status, 201);
  EXPECT_EQ(as("", "POST", "/agents/bot/invoke", R"({"text":"x"})").status, 401);
  const auto limited =
      key_for("slowpoke", "client", R"(,"rate_limit":{"requests_per_second":0.5,"burst":2})");
  EXPECT_EQ(as(limited, "POST", "/agents/bot/invoke", R"({"text":"a"})").status, 200);
  EXPECT_EQ(as(limited, "POST", "/agents/bot/invoke", R"({"text":"b"})").status, 200);
  const auto third = as(limited, "POST", "/agents/bot/invoke", R"({"text":"c"})");
  EXPECT_EQ(third.status, 429);
  EXPECT_EQ(error_code(third), "RateLimited");
  EXPECT_FALSE(third.header("retry-after").empty());
}

TEST_F(SecurityTest, DailyQuotasHoldAcrossRestarts) {
  const auto publisher = key_for("acme", "publisher");
  ASSERT_EQ(as(publisher, "POST", "/agents", card("bot", agent_.url("/translate"))).status, 201);
  const auto quota = key_for("trial", "client", R"(,"rate_limit":{"requests_per_day":2})");
  EXPECT_EQ(as(quota, "POST", "/agents/bot/invoke", R"({"text":"a"})").status, 200);
  EXPECT_EQ(as(quota, "POST", "/agents/bot/invoke", R"({"text":"b"})").status, 200);
  const auto over = as(quota, "POST", "/agents/bot/invoke", R"({"text":"c"})");
  EXPECT_EQ(over.status, 429);
  EXPECT_EQ(error_code(over), "QuotaExceeded");
  const int retry = std::stoi(over.header("retry-after"));
  EXPECT_GT(retry, 0);
  EXPECT_LE(retry, 86400);
  // The count is kept: a restart does not hand out a fresh day.
  server_->process->signal(SIGTERM);
  ASSERT_EQ(server_->process->wait(std::chrono::seconds(20)), 0);
  server_ = std::make_unique<Server>(
      dir_, std::vector<std::string>{},
      std::map<std::string, std::string>{{"SCHEMAGATE_ADMIN_KEY", kAdmin}});
  c_ = std::make_unique<HttpClient>("127.0.0.1", server_->port);
  EXPECT_EQ(as(quota, "POST", "/agents/bot/invoke", R"({"text":"d"})").status, 429);
}

TEST_F(SecurityTest, TheAuditLogRecordsWhoDidWhatButNoPayload) {
  const auto publisher = key_for("acme", "publisher");
  const auto client = key_for("app", "client");
  ASSERT_EQ(as(publisher, "POST", "/agents", card("bot", agent_.url("/translate"))).status, 201);
  ASSERT_EQ(as(client, "POST", "/agents/bot/invoke", R"({"text":"a secret sentence"})").status,
            200);
  EXPECT_EQ(as(client, "GET", "/audit").status, 403);
  const auto audit = as(kAdmin, "GET", "/audit");
  ASSERT_EQ(audit.status, 200);
  EXPECT_EQ(audit.body.find("secret sentence"), std::string::npos);
  std::vector<std::string> actions;
  const auto entries = body_json(audit);
  for (const auto& e : entries.at("entries").as_array()) {
    actions.push_back(std::string(e.at("client_id").as_string()) + " " +
                      std::string(e.at("action").as_string()) + " " +
                      std::string(e.at("target").as_string()) + " " +
                      std::to_string(e.at("status").as_int64()));
  }
  EXPECT_NE(std::find(actions.begin(), actions.end(), "acme register bot 201"), actions.end());
  EXPECT_NE(std::find(actions.begin(), actions.end(), "app invoke bot 200"), actions.end());
}

TEST(KeysCli, ACreatedKeyClosesTheServerAndWorks) {
  if (schemagate::testing::on_postgres()) GTEST_SKIP() << "about the SQLite file";
  const auto dir = fresh_dir("KeysCli");
  const auto created = schemagate::testing::run_command(
      {SCHEMAGATE_BINARY, "keys", "create", "--db", (dir / "schemagate.db").string(), "--client-id",
       "ops", "--role", "publisher"});
  ASSERT_EQ(created.status, 0) << created.err;
  const std::string key(bj::parse(created.out).at("key").as_string());
  Server server(dir);  // no SCHEMAGATE_ADMIN_KEY: the stored key alone closes it
  HttpClient c("127.0.0.1", server.port);
  const std::string body =
      R"({"id":"k","name":"k","description":"d","endpoint":"http://127.0.0.1:1/x","inputs":{"a":"string"}})";
  EXPECT_EQ(c.post_json("/agents", body).status, 401);
  EXPECT_EQ(c.request("POST", "/agents", body,
                      {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + key}})
                .status,
            201);
}

TEST(OpenMode, RefusesToListenBeyondLoopbackWithoutAKey) {
  const auto dir = fresh_dir("OpenModeRefusal");
  const auto r = schemagate::testing::run_command(
      {SCHEMAGATE_BINARY, "serve", "--listen", "0.0.0.0:0", "--db", (dir / "x.db").string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("SCHEMAGATE_ADMIN_KEY"), std::string::npos) << r.err;
}

}  // namespace

namespace {

// The A2A face under API keys: the card declares the scheme, calls need a key, and each caller
// sees only its own tasks.
TEST_F(SecurityTest, A2ACallsNeedAKeyAndTasksBelongToTheirCaller) {
  ASSERT_EQ(as(kAdmin, "POST", "/agents", card("translator", agent_.url("/translate"))).status,
            201);
  const auto alice = key_for("alice", "client");
  const auto bob = key_for("bob", "client");
  const auto card_json = body_json(c_->request("GET", "/a2a/translator/.well-known/agent-card.json",
                                               "", {{"A2A-Version", "1.0"}}));
  EXPECT_EQ(
      card_json.at("securitySchemes").at("schemagate").at("httpAuthSecurityScheme").at("scheme"),
      "Bearer");
  const std::string send = R"({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{
      "messageId":"1","role":"ROLE_USER","parts":[{"text":"hello"}]}}})";
  const auto anonymous = as("", "POST", "/a2a/translator", send);
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(body_json(anonymous).at("error").at("data").at(0).at("reason"), "UNAUTHENTICATED");
  EXPECT_EQ(body_json(anonymous).at("id"), 1);
  const auto sent = as(alice, "POST", "/a2a/translator", send);
  ASSERT_EQ(sent.status, 200) << sent.body;
  const std::string id(body_json(sent).at("result").at("task").at("id").as_string());
  const auto get = R"({"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":")" + id + "\"}}";
  EXPECT_TRUE(body_json(as(alice, "POST", "/a2a/translator", get)).as_object().contains("result"));
  EXPECT_EQ(body_json(as(bob, "POST", "/a2a/translator", get)).at("error").at("code"), -32001);
  const std::string list = R"({"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{}})";
  EXPECT_EQ(body_json(as(alice, "POST", "/a2a/translator", list)).at("result").at("totalSize"), 1);
  EXPECT_EQ(body_json(as(bob, "POST", "/a2a/translator", list)).at("result").at("totalSize"), 0);
  // Audited like every invocation.
  const auto audit = body_json(as(kAdmin, "GET", "/audit?limit=50"));
  bool seen = false;
  for (const auto& e : audit.at("entries").as_array()) {
    seen = seen || (e.at("client_id") == "alice" && e.at("action") == "a2a/SendMessage");
  }
  EXPECT_TRUE(seen) << audit;
}

}  // namespace
