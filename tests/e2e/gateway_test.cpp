// Seed 004 §6 through HTTP: POST /agents/{id}/invoke with a real agent behind it.

#include "support/http_client.hpp"
#include "support/server_process.hpp"
#include "support/test_agent.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <future>

namespace bj = boost::json;
using namespace std::chrono_literals;
using schemagate::testing::Agent;
using schemagate::testing::body_json;
using schemagate::testing::error_code;
using schemagate::testing::fresh_dir;
using schemagate::testing::HttpClient;
using schemagate::testing::Server;

namespace {

class GatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    server_ =
        std::make_unique<Server>(dir_, std::vector<std::string>{"--agent-timeout-ms", "1000"});
    c_ = std::make_unique<HttpClient>("127.0.0.1", server_->port);
    // Seed 004's translator, with simple inputs/outputs that become schemas.
    bj::object translator =
        bj::parse(R"({ "id": "translator-001", "name": "MultiLang Text Translator",
      "description": "Translates text between English and French.", "capabilities": ["translation"],
      "inputs": { "text": "string", "source_language": "string", "target_language": "string" },
      "outputs": { "translated_text": "string" } })")
            .as_object();
    translator["endpoint"] = agent_.url("/translate");
    ASSERT_EQ(c_->post_json("/agents", bj::serialize(translator)).status, 201);
    bj::object multi{
        {"id", "multi"},
        {"name", "Multi"},
        {"description", "Several operations."},
        {"max_concurrency", 1},
        {"operations",
         bj::array{
             bj::object{{"name", "translate"},
                        {"endpoint", agent_.url("/translate")},
                        {"input_schema", bj::parse(R"({"type":"object","required":["text"]})")},
                        {"output_schema",
                         bj::parse(R"({"type":"object","required":["translated_text"]})")}},
             bj::object{{"name", "broken"},
                        {"endpoint", agent_.url("/bad_output")},
                        {"input_schema", bj::object{}},
                        {"output_schema",
                         bj::parse(R"({"type":"object","required":["translated_text"]})")}},
             bj::object{{"name", "slow"},
                        {"endpoint", agent_.url("/slow")},
                        {"input_schema", bj::object{}}},
             bj::object{{"name", "block"},
                        {"endpoint", agent_.url("/block")},
                        {"input_schema", bj::object{}}},
             bj::object{{"name", "fail"},
                        {"endpoint", agent_.url("/fail")},
                        {"input_schema", bj::object{}}},
             bj::object{{"name", "gone"},
                        {"endpoint", "http://127.0.0.1:1/x"},
                        {"input_schema", bj::object{}}}}}};
    ASSERT_EQ(c_->post_json("/agents", bj::serialize(multi)).status, 201);
  }
  std::filesystem::path dir_;
  Agent agent_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<HttpClient> c_;
};

const char* kInput = R"({"text": "hello", "source_language": "en", "target_language": "fr"})";

TEST_F(GatewayTest, ValidatesForwardsAndReturns) {
  const auto r = c_->post_json("/agents/translator-001/invoke", kInput);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r).at("translated_text"), "[fr] hello");
  ASSERT_EQ(agent_.received().size(), 1u);
  const auto bad = c_->post_json("/agents/translator-001/invoke", R"({"text": 5})");
  ASSERT_EQ(bad.status, 400);
  EXPECT_EQ(error_code(bad), "InvalidInput");
  EXPECT_EQ(body_json(bad).at("error").at("details").at("violations").as_array().size(), 3u);
  EXPECT_EQ(agent_.received().size(), 1u);  // never forwarded
  EXPECT_EQ(c_->post_json("/agents/nobody/invoke", "{}").status, 404);
}

TEST_F(GatewayTest, OperationsByPathOrBody) {
  EXPECT_EQ(body_json(c_->post_json("/agents/multi/operations/translate/invoke", R"({"text":"a"})"))
                .at("translated_text"),
            "[fr] a");
  EXPECT_EQ(
      body_json(c_->post_json("/agents/multi/invoke", R"({"operation":"translate","text":"b"})"))
          .at("translated_text"),
      "[fr] b");
  const auto unnamed = c_->post_json("/agents/multi/invoke", R"({"text":"c"})");
  EXPECT_EQ(unnamed.status, 400);
  EXPECT_NE(unnamed.body.find("translate, broken"), std::string::npos) << unnamed.body;
  EXPECT_EQ(c_->post_json("/agents/multi/operations/nope/invoke", "{}").status, 404);
}

TEST_F(GatewayTest, UpstreamFailuresMapToGatewayStatuses) {
  auto call = [&](const char* op) {
    return c_->post_json(std::string("/agents/multi/operations/") + op + "/invoke", "{}");
  };
  const auto broken = call("broken");
  EXPECT_EQ(broken.status, 502);
  EXPECT_EQ(error_code(broken), "InvalidAgentResponse");
  const auto slow = call("slow");
  EXPECT_EQ(slow.status, 504);
  EXPECT_EQ(error_code(slow), "AgentTimeout");
  EXPECT_EQ(error_code(call("fail")), "AgentError");
  const auto gone = call("gone");
  EXPECT_EQ(gone.status, 502);
  EXPECT_EQ(error_code(gone), "AgentUnreachable");
}

TEST_F(GatewayTest, ConcurrencyLimitAnswers503WithRetryAfter) {
  auto blocked = std::async(std::launch::async, [&] {
    HttpClient other("127.0.0.1", server_->port);
    return other.post_json("/agents/multi/operations/block/invoke", "{}").status;
  });
  std::this_thread::sleep_for(150ms);  // the first call is now inside the agent
  const auto second = c_->post_json("/agents/multi/operations/block/invoke", "{}");
  EXPECT_EQ(second.status, 503);
  EXPECT_EQ(second.header("retry-after"), "1");
  EXPECT_EQ(blocked.get(), 200);
  EXPECT_EQ(c_->post_json("/agents/multi/operations/block/invoke", "{}").status, 200);
}

TEST_F(GatewayTest, CredentialsTowardsAgentsAreSentButNeverShown) {
  bj::object card{{"id", "secured"},
                  {"name", "Secured"},
                  {"description", "Needs its own key."},
                  {"endpoint", agent_.url("/whoami")},
                  {"inputs", bj::object{}}};
  ASSERT_EQ(c_->post_json("/agents", bj::serialize(card)).status, 201);
  EXPECT_TRUE(
      body_json(c_->post_json("/agents/secured/invoke", "{}")).at("authorization").is_null());
  const auto set = c_->request("PUT", "/agents/secured/credentials",
                               R"({"headers": {"Authorization": "Bearer agent-secret-123"}})",
                               {{"Content-Type", "application/json"}});
  EXPECT_EQ(set.status, 204);
  EXPECT_EQ(body_json(c_->post_json("/agents/secured/invoke", "{}")).at("authorization"),
            "Bearer agent-secret-123");
  EXPECT_EQ(c_->get("/agents/secured").body.find("agent-secret"), std::string::npos);
  EXPECT_EQ(c_->get("/agents?include_metadata=true").body.find("agent-secret"), std::string::npos);
  EXPECT_EQ(c_->request("GET", "/agents/secured/credentials").status, 405);
  EXPECT_EQ(c_->request("PUT", "/agents/nobody/credentials", R"({"headers": {}})",
                        {{"Content-Type", "application/json"}})
                .status,
            404);
}

TEST_F(GatewayTest, BatchesAnswerPerItem) {
  const auto r = c_->post_json("/agents/translator-001/invoke",
                               std::string("[") + kInput + R"(, {"text": 1}, )" + kInput + "]");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto items = body_json(r).as_array();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].at("status"), 200);
  EXPECT_EQ(items[0].at("body").at("translated_text"), "[fr] hello");
  EXPECT_EQ(items[1].at("status"), 400);
  EXPECT_EQ(items[1].at("body").at("error").at("code"), "InvalidInput");
  EXPECT_EQ(items[2].at("status"), 200);
  EXPECT_EQ(c_->post_json("/agents/translator-001/invoke", "[]").status, 400);
}

TEST_F(GatewayTest, IdempotencyKeysReplayAndConflict) {
  auto call = [&](const std::string& body) {
    return c_->request("POST", "/agents/translator-001/invoke", body,
                       {{"Content-Type", "application/json"}, {"Idempotency-Key", "order-42"}});
  };
  const auto first = call(kInput);
  ASSERT_EQ(first.status, 200);
  const auto again = call(kInput);
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(again.header("idempotent-replayed"), "true");
  EXPECT_EQ(agent_.received().size(), 1u);  // the agent ran once
  const auto other = call(R"({"text": "bye", "source_language": "en", "target_language": "fr"})");
  EXPECT_EQ(other.status, 409);
  EXPECT_EQ(error_code(other), "Conflict");
}

}  // namespace
