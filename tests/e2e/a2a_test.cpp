// The A2A face (seeds 001, 002; A2A v1.0 with 0.3) through HTTP, point by point, with a real
// agent behind the gateway. Interop with the official SDK is tests/interop/a2a_interop.test.mjs.

#include "support/http_client.hpp"
#include "support/server_process.hpp"
#include "support/test_agent.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <csignal>

namespace bj = boost::json;
using namespace std::chrono_literals;
using schemagate::testing::Agent;
using schemagate::testing::fresh_dir;
using schemagate::testing::HttpClient;
using schemagate::testing::HttpResponse;
using schemagate::testing::Server;

namespace {

constexpr const char* kTranslateIn = "translate.input";

class A2ATest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    start();
    // A translator (one text input: plain text can fill it) and a booking agent (structured
    // input only), both plain JSON agents behind the gateway.
    bj::object translator{
        {"id", "translator"},
        {"name", "Translator"},
        {"description", "Translates text into French."},
        {"operations",
         bj::array{bj::object{
             {"name", "translate"},
             {"endpoint", agent_.url("/translate")},
             {"input_schema", bj::parse(R"({"type":"object","properties":{
                 "text":{"type":"string","description":"what to translate"},
                 "tone":{"type":"string","enum":["formal","casual"]}},
                 "required":["text"],"additionalProperties":false})")},
             {"output_schema",
              bj::parse(R"({"type":"object","properties":{"translated_text":{"type":"string"}},
                 "required":["translated_text"]})")}}}}};
    ASSERT_EQ(c_->post_json("/agents", bj::serialize(translator)).status, 201);
    bj::object booker{
        {"id", "booker"},
        {"name", "Booker"},
        {"description", "Books flights."},
        {"operations",
         bj::array{bj::object{{"name", "book"},
                              {"endpoint", agent_.url("/book")},
                              {"input_schema", bj::parse(R"({"type":"object","properties":{
                 "origin":{"type":"string","minLength":3},"destination":{"type":"string"},
                 "passengers":{"type":"integer","minimum":1,"maximum":9}},
                 "required":["origin","destination","passengers"]})")}},
                   bj::object{{"name", "wait"},
                              {"endpoint", agent_.url("/block")},
                              {"input_schema", bj::object{}}},
                   bj::object{{"name", "fail"},
                              {"endpoint", agent_.url("/fail")},
                              {"input_schema", bj::parse(R"({"type":"object","properties":{
                 "why":{"type":"integer"}},"required":["why"]})")}}}}};
    ASSERT_EQ(c_->post_json("/agents", bj::serialize(booker)).status, 201);
  }
  void start() {
    server_ = std::make_unique<Server>(dir_);
    c_ = std::make_unique<HttpClient>("127.0.0.1", server_->port);
  }
  void restart() {
    server_->process->signal(SIGTERM);
    server_->process->wait(20s);
    start();
  }
  HttpResponse rpc(const std::string& agent, const std::string& body,
                   const std::string& version = "1.0",
                   std::map<std::string, std::string> headers = {}) {
    headers["Content-Type"] = "application/json";
    if (!version.empty()) headers["A2A-Version"] = version;
    return c_->request("POST", "/a2a/" + agent, body, headers);
  }
  bj::object send(const std::string& agent, const bj::array& parts, const std::string& id = "1") {
    const bj::object req{{"jsonrpc", "2.0"},
                         {"id", id},
                         {"method", "SendMessage"},
                         {"params", bj::object{{"message", bj::object{{"messageId", "m-" + id},
                                                                      {"role", "ROLE_USER"},
                                                                      {"parts", parts}}}}}};
    const auto r = rpc(agent, bj::serialize(req));
    EXPECT_EQ(r.status, 200) << r.body;
    return bj::parse(r.body).as_object();
  }
  static bj::object data_part(bj::value data, const std::string& schema) {
    return bj::object{{"data", std::move(data)},
                      {"mediaType", "application/json;schema=" + schema}};
  }
  std::filesystem::path dir_;
  Agent agent_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<HttpClient> c_;
};

std::vector<bj::value> sse_events(const std::string& body);

std::string state_of(const bj::object& response) {
  return std::string(response.at("result").at("task").at("status").at("state").as_string());
}

TEST_F(A2ATest, CardDeclaresExtensionSchemasModesAndFieldsWithCaching) {
  const auto r = c_->request("GET", "/a2a/translator/.well-known/agent-card.json", "",
                             {{"A2A-Version", "1.0"}});
  ASSERT_EQ(r.status, 200) << r.body;
  const auto card = bj::parse(r.body).as_object();
  // A2A v1.0 fields.
  const auto& ifs = card.at("supportedInterfaces").as_array();
  ASSERT_GE(ifs.size(), 2u);
  EXPECT_EQ(ifs[0].at("protocolBinding"), "JSONRPC");
  EXPECT_EQ(ifs[0].at("protocolVersion"), "1.0");
  EXPECT_EQ(ifs[1].at("protocolBinding"), "HTTP+JSON");
  EXPECT_EQ(ifs[0].at("url"),
            bj::value("http://127.0.0.1:" + std::to_string(server_->port) + "/a2a/translator"));
  EXPECT_EQ(card.at("capabilities").at("streaming"), true);
  // Seed 001: the extension, the named schemas (root map and extension params), the modes.
  const auto& ext = card.at("capabilities").at("extensions").as_array().at(0);
  EXPECT_EQ(ext.at("uri"),
            "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/"
            "main/v1");
  EXPECT_TRUE(ext.at("params").at("schemas").as_object().contains(kTranslateIn));
  EXPECT_EQ(card.at("schemas").at(kTranslateIn).at("required").at(0), "text");
  const auto& skill = card.at("skills").at(0).as_object();
  EXPECT_EQ(skill.at("id"), "translate");
  const auto& modes = skill.at("inputModes").as_array();
  EXPECT_EQ(modes.at(0), "text/plain");  // seed 001: text beside the schema
  EXPECT_EQ(modes.at(1), "application/json;schema=translate.input");
  EXPECT_EQ(skill.at("outputModes").at(0), "application/json;schema=translate.output");
  // Seed 002: fields from the schema's properties.
  const auto& fields = skill.at("inputFields").as_array();
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0].at("name"), "text");
  EXPECT_EQ(fields[0].at("kind"), "text");
  EXPECT_EQ(fields[0].at("optional"), false);
  EXPECT_EQ(fields[0].at("description"), "what to translate");
  EXPECT_EQ(fields[1].at("optional"), true);
  EXPECT_EQ(skill.at("outputFields").at(0).at("name"), "translated_text");
  // Caching.
  EXPECT_NE(r.header("etag"), "");
  EXPECT_NE(r.header("cache-control").find("max-age="), std::string::npos);
  const auto again = c_->request("GET", "/a2a/translator/.well-known/agent-card.json", "",
                                 {{"A2A-Version", "1.0"}, {"If-None-Match", r.header("etag")}});
  EXPECT_EQ(again.status, 304);
  // A 0.3 client gets the 0.3 card; an unknown agent is 404.
  const auto old = bj::parse(c_->request("GET", "/a2a/translator/.well-known/agent-card.json", "",
                                         {{"A2A-Version", "0.3"}})
                                 .body);
  EXPECT_EQ(old.at("protocolVersion"), "0.3.0");
  EXPECT_EQ(old.at("preferredTransport"), "JSONRPC");
  EXPECT_FALSE(old.as_object().contains("supportedInterfaces"));
  EXPECT_EQ(c_->get("/a2a/nobody/.well-known/agent-card.json").status, 404);
}

TEST_F(A2ATest, StructuredInputRunsTheOperationAndTagsTheOutput) {
  const auto res =
      send("translator", bj::array{data_part(bj::object{{"text", "hello"}}, kTranslateIn)});
  ASSERT_TRUE(res.contains("result")) << bj::serialize(res);
  EXPECT_EQ(res.at("id"), "1");
  EXPECT_EQ(state_of(res), "TASK_STATE_COMPLETED");
  const auto& task = res.at("result").at("task").as_object();
  const auto& art = task.at("artifacts").at(0).as_object();
  EXPECT_EQ(art.at("parts").at(0).at("mediaType"), "application/json;schema=translate.output");
  EXPECT_EQ(art.at("parts").at(0).at("metadata").at("mimeType"),
            "application/json;schema=translate.output");
  EXPECT_EQ(art.at("parts").at(0).at("data").at("translated_text"), "[fr] hello");
  // Seed 002: the named output as its own artifact, a text part.
  EXPECT_EQ(task.at("artifacts").at(1).at("name"), "translated_text");
  EXPECT_EQ(task.at("artifacts").at(1).at("parts").at(0).at("text"), "[fr] hello");
  EXPECT_EQ(agent_.received().back(), bj::parse(R"({"text":"hello"})"));
  // The history holds the user's message, now with the task's ids.
  EXPECT_EQ(task.at("history").at(0).at("taskId"), task.at("id"));
}

TEST_F(A2ATest, InvalidAndUndeclaredStructuredInputAreErrorsAndNeverReachTheAgent) {
  const auto before = agent_.received().size();
  const auto bad = send(
      "booker", bj::array{data_part(bj::parse(R"({"origin":"X","passengers":12})"), "book.input")});
  ASSERT_TRUE(bad.contains("error")) << bj::serialize(bad);
  EXPECT_EQ(bad.at("error").at("code"), -32602);
  const auto& data = bad.at("error").at("data").as_array();
  EXPECT_EQ(data.at(0).at("@type"), "type.googleapis.com/google.rpc.ErrorInfo");
  EXPECT_EQ(data.at(0).at("reason"), "INVALID_PARAMS");
  EXPECT_EQ(data.at(0).at("domain"), "a2a-protocol.org");
  const auto& violations = data.at(1).at("fieldViolations").as_array();
  EXPECT_EQ(violations.size(), 3u) << bj::serialize(violations);  // origin, destination, passengers
  const auto undeclared = send("booker", bj::array{data_part(bj::object{}, "nope")});
  EXPECT_EQ(undeclared.at("error").at("code"), -32005);
  EXPECT_NE(std::string(undeclared.at("error").at("message").as_string()).find("book.input"),
            std::string::npos);
  EXPECT_EQ(agent_.received().size(), before);
}

TEST_F(A2ATest, OnlyTheFirstStructuredPartCounts) {
  const auto res =
      send("booker",
           bj::array{data_part(bj::parse(R"({"origin":"PEK","destination":"SHA","passengers":1})"),
                               "book.input"),
                     data_part(bj::parse(R"({"origin":1})"), "book.input")});
  EXPECT_EQ(state_of(res), "TASK_STATE_COMPLETED") << bj::serialize(res);
}

TEST_F(A2ATest, StructuredInputOnAnExistingTaskIsRejected) {
  const auto first =
      send("translator", bj::array{data_part(bj::object{{"text", "a"}}, kTranslateIn)});
  const std::string task_id(first.at("result").at("task").at("id").as_string());
  const bj::object req{
      {"jsonrpc", "2.0"},
      {"id", 2},
      {"method", "SendMessage"},
      {"params",
       bj::object{{"message", bj::object{{"messageId", "m2"},
                                         {"role", "ROLE_USER"},
                                         {"taskId", task_id},
                                         {"parts", bj::array{data_part(bj::object{{"text", "b"}},
                                                                       kTranslateIn)}}}}}}};
  const auto r = bj::parse(rpc("translator", bj::serialize(req)).body);
  EXPECT_EQ(r.at("id"), 2);  // echoed exactly: a number stays a number
  EXPECT_EQ(r.at("error").at("code"), -32004);
  EXPECT_NE(std::string(r.at("error").at("message").as_string()).find("already running"),
            std::string::npos);
}

TEST_F(A2ATest, TextGoesToTheTextFieldOrGetsAnErrorNamingTheSchemas) {
  const auto res = send("translator", bj::array{bj::object{{"text", "good morning"}}});
  EXPECT_EQ(state_of(res), "TASK_STATE_COMPLETED") << bj::serialize(res);
  EXPECT_EQ(agent_.received().back(), bj::parse(R"({"text":"good morning"})"));
  const auto no = send("booker", bj::array{bj::object{{"text", "fly me to Shanghai"}}});
  EXPECT_EQ(no.at("error").at("code"), -32005) << bj::serialize(no);
  EXPECT_NE(std::string(no.at("error").at("message").as_string()).find("book.input"),
            std::string::npos);
}

TEST_F(A2ATest, NamedPartsFillInputFieldsAndMissingOnesAreNamed) {
  // Seed 002: parts named by metadata.name.
  const auto named =
      send("translator",
           bj::array{bj::object{{"text", "bonjour"}, {"metadata", bj::object{{"name", "text"}}}},
                     bj::object{{"text", "formal"}, {"metadata", bj::object{{"name", "tone"}}}}});
  EXPECT_EQ(state_of(named), "TASK_STATE_COMPLETED") << bj::serialize(named);
  EXPECT_EQ(agent_.received().back(), bj::parse(R"({"text":"bonjour","tone":"formal"})"));
  // The keys of an untagged data object, with a skill picked by metadata.skillId.
  bj::object msg_meta{{"skillId", "book"}};
  const bj::object req{
      {"jsonrpc", "2.0"},
      {"id", "k"},
      {"method", "SendMessage"},
      {"params",
       bj::object{
           {"message", bj::object{{"messageId", "m"},
                                  {"role", "ROLE_USER"},
                                  {"metadata", msg_meta},
                                  {"parts", bj::array{bj::object{
                                                {"data", bj::parse(R"({"origin":"PEK"})")}}}}}}}}};
  const auto missing = bj::parse(rpc("booker", bj::serialize(req)).body);
  ASSERT_TRUE(missing.as_object().contains("error")) << missing;
  EXPECT_EQ(missing.at("error").at("code"), -32602);
  const auto& v = missing.at("error").at("data").at(1).at("fieldViolations").as_array();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].at("field"), "destination");
  EXPECT_EQ(v[1].at("field"), "passengers");
  // A data part where the field is text: the kind is checked.
  const auto kind = send(
      "translator", bj::array{bj::object{{"data", 5}, {"metadata", bj::object{{"name", "text"}}}}});
  EXPECT_EQ(kind.at("error").at("code"), -32602);
  EXPECT_NE(std::string(kind.at("error").at("message").as_string()).find("text field"),
            std::string::npos);
  // Its media type too: the field takes text/plain.
  const auto html =
      send("translator", bj::array{bj::object{{"text", "<b>hi</b>"},
                                              {"mediaType", "text/html"},
                                              {"metadata", bj::object{{"name", "text"}}}}});
  EXPECT_EQ(html.at("error").at("code"), -32602);
  EXPECT_EQ(html.at("error").at("data").at(1).at("fieldViolations").at(0).at("field"),
            "message.parts[0].mediaType");
}

TEST_F(A2ATest, VersionsExtensionsAndZeroThreeShapes) {
  // Unsupported version.
  const auto v9 =
      bj::parse(rpc("translator",
                    R"({"jsonrpc":"2.0","id":"x","method":"GetTask","params":{"id":"t"}})", "9.1")
                    .body);
  EXPECT_EQ(v9.at("error").at("code"), -32009);
  EXPECT_EQ(v9.at("id"), "x");
  // No A2A-Version: 0.3, its method names and part shapes.
  const auto r =
      rpc("translator", R"({"jsonrpc":"2.0","id":"old","method":"message/send","params":{"message":{
      "kind":"message","messageId":"1","role":"user","parts":[{"kind":"data","data":{"text":"hi"},
      "metadata":{"mimeType":"application/json;schema=translate.input"}}]}}})",
          "",
          {{"X-A2A-Extensions",
            "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/"
            "main/v1"}});
  const auto old = bj::parse(r.body);
  ASSERT_TRUE(old.as_object().contains("result")) << r.body;
  EXPECT_EQ(old.at("result").at("kind"), "task");
  EXPECT_EQ(old.at("result").at("status").at("state"), "completed");
  const auto& part = old.at("result").at("artifacts").at(0).at("parts").at(0);
  EXPECT_EQ(part.at("kind"), "data");
  EXPECT_EQ(part.at("metadata").at("mimeType"), "application/json;schema=translate.output");
  EXPECT_EQ(r.header("a2a-extensions"),
            "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/"
            "main/v1");
  // 0.3 tasks/get.
  const auto got =
      bj::parse(rpc("translator",
                    R"({"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":")" +
                        std::string(old.at("result").at("id").as_string()) + R"("}})",
                    "0.3")
                    .body);
  EXPECT_EQ(got.at("result").at("status").at("state"), "completed");
  // Unknown method and malformed requests.
  EXPECT_EQ(bj::parse(rpc("translator", R"({"jsonrpc":"2.0","id":1,"method":"Nope"})").body)
                .at("error")
                .at("code"),
            -32601);
  EXPECT_EQ(
      bj::parse(
          rpc("translator",
              R"({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"1","role":"ROLE_USER","parts":[]}}})")
              .body)
          .at("error")
          .at("code"),
      -32602);
  EXPECT_EQ(bj::parse(rpc("translator", "{not json").body).at("error").at("code"), -32700);
  EXPECT_EQ(
      bj::parse(rpc("translator", R"({"id":1,"method":"GetTask"})").body).at("error").at("code"),
      -32600);
  EXPECT_EQ(
      bj::parse(
          rpc("translator",
              R"({"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{}})")
              .body)
          .at("error")
          .at("code"),
      -32003);
}

TEST_F(A2ATest, TasksArePersistedListedAndAnAgentFailureFailsTheTask) {
  const auto failed = send("booker", bj::array{data_part(bj::object{{"why", 1}}, "fail.input")});
  EXPECT_EQ(state_of(failed), "TASK_STATE_FAILED") << bj::serialize(failed);
  const auto& msg = failed.at("result").at("task").at("status").at("message");
  EXPECT_EQ(msg.at("role"), "ROLE_AGENT");
  EXPECT_EQ(msg.at("parts").at(1).at("data").at("error").at("code"), "AgentError");
  const auto ok = send("translator", bj::array{data_part(bj::object{{"text", "x"}}, kTranslateIn)});
  const std::string id(ok.at("result").at("task").at("id").as_string());

  restart();  // tasks survive
  const auto got =
      bj::parse(rpc("translator", R"({"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":")" +
                                      id + R"(","historyLength":0}})")
                    .body);
  EXPECT_EQ(got.at("result").at("status").at("state"), "TASK_STATE_COMPLETED") << got;
  EXPECT_FALSE(got.at("result").as_object().contains("history"));
  // The HTTP+JSON binding over the same tasks.
  const auto rest = c_->request("GET", "/a2a/translator/tasks/" + id, "", {{"A2A-Version", "1.0"}});
  ASSERT_EQ(rest.status, 200) << rest.body;
  EXPECT_EQ(bj::parse(rest.body).at("id"), bj::value(id));
  const auto cancel = c_->request("POST", "/a2a/translator/tasks/" + id + ":cancel", "{}",
                                  {{"Content-Type", "application/json"}, {"A2A-Version", "1.0"}});
  EXPECT_EQ(cancel.status, 400);
  EXPECT_EQ(bj::parse(cancel.body).at("error").at("details").at(0).at("reason"),
            "TASK_NOT_CANCELABLE");
  const auto missing =
      c_->request("GET", "/a2a/translator/tasks/none", "", {{"A2A-Version", "1.0"}});
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(bj::parse(missing.body).at("error").at("status"), "NOT_FOUND");
  // ListTasks pages with a cursor, most recent first.
  for (int i = 0; i < 3; ++i)
    send("translator", bj::array{data_part(bj::object{{"text", "p"}}, kTranslateIn)});
  const auto page1 = bj::parse(
      rpc("translator", R"({"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":2}})")
          .body);
  ASSERT_TRUE(page1.as_object().contains("result")) << page1;
  EXPECT_EQ(page1.at("result").at("tasks").as_array().size(), 2u);
  EXPECT_EQ(page1.at("result").at("totalSize"), 4);
  EXPECT_FALSE(page1.at("result").at("tasks").at(0).as_object().contains("artifacts"));
  const std::string token(page1.at("result").at("nextPageToken").as_string());
  ASSERT_FALSE(token.empty());
  const auto page2 = bj::parse(
      rpc("translator",
          R"({"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":2,"pageToken":")" +
              token + R"("}})")
          .body);
  EXPECT_EQ(page2.at("result").at("tasks").as_array().size(), 2u);
  EXPECT_EQ(page2.at("result").at("nextPageToken"), "");
  EXPECT_EQ(page2.at("result").at("tasks").at(1).at("id"), bj::value(id));  // the oldest comes last
  // REST message:send.
  const auto sent =
      c_->request("POST", "/a2a/translator/message:send",
                  R"({"message":{"messageId":"r1","role":"ROLE_USER","parts":[{"text":"rest"}]}})",
                  {{"Content-Type", "application/a2a+json"}, {"A2A-Version", "1.0"}});
  ASSERT_EQ(sent.status, 200) << sent.body;
  EXPECT_EQ(bj::parse(sent.body).at("task").at("status").at("state"), "TASK_STATE_COMPLETED");
}

TEST_F(A2ATest, StreamingSendsTheTaskThenArtifactsThenTheFinalStatus) {
  const auto r =
      rpc("translator",
          R"({"jsonrpc":"2.0","id":"s","method":"SendStreamingMessage","params":{"message":{
      "messageId":"1","role":"ROLE_USER","parts":[{"text":"stream me"}]}}})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/event-stream");
  const auto events = sse_events(r.body);
  ASSERT_GE(events.size(), 4u) << r.body;
  EXPECT_EQ(events[0].at("id"), "s");
  EXPECT_TRUE(events[0].at("result").as_object().contains("task"));
  EXPECT_EQ(events[1].at("result").at("statusUpdate").at("status").at("state"),
            "TASK_STATE_WORKING");
  EXPECT_TRUE(events[2].at("result").as_object().contains("artifactUpdate"));
  EXPECT_EQ(events.back().at("result").at("statusUpdate").at("status").at("state"),
            "TASK_STATE_COMPLETED");
  // Subscribing to a finished task is refused.
  const std::string id(events[0].at("result").at("task").at("id").as_string());
  const auto sub = bj::parse(
      rpc("translator",
          R"({"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":")" + id + R"("}})")
          .body);
  EXPECT_EQ(sub.at("error").at("code"), -32004);
}

std::vector<bj::value> sse_events(const std::string& body) {
  std::vector<bj::value> events;
  std::size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    const auto end = body.find("\n\n", at);
    events.push_back(bj::parse(body.substr(at + 6, end - at - 6)));
    at = end;
  }
  return events;
}

TEST_F(A2ATest, ReturnImmediatelyRunsInTheBackgroundSubscribeFollowsCancelStands) {
  const auto immediate = [&](const std::string& id) {
    return rpc(
        "booker",
        R"({"jsonrpc":"2.0","id":")" + id + R"(","method":"SendMessage","params":{
        "configuration":{"returnImmediately":true},"message":{"messageId":")" +
            id + R"(","role":"ROLE_USER","metadata":{"skillId":"wait"},"parts":[{"data":{}}]}}})");
  };
  const auto started = bj::parse(immediate("a").body);
  ASSERT_TRUE(started.as_object().contains("result")) << started;
  EXPECT_EQ(started.at("result").at("task").at("status").at("state"), "TASK_STATE_SUBMITTED");
  const std::string id(started.at("result").at("task").at("id").as_string());
  // SubscribeToTask: the task now, then its changes until it ends.
  const auto sub =
      rpc("booker",
          R"({"jsonrpc":"2.0","id":9,"method":"SubscribeToTask","params":{"id":")" + id + R"("}})");
  ASSERT_EQ(sub.header("content-type"), "text/event-stream") << sub.body;
  const auto events = sse_events(sub.body);
  ASSERT_GE(events.size(), 3u) << sub.body;
  EXPECT_EQ(events.front().at("result").at("task").at("id"), bj::value(id));
  EXPECT_TRUE(events[1].at("result").as_object().contains("artifactUpdate")) << sub.body;
  EXPECT_EQ(events.back().at("result").at("statusUpdate").at("status").at("state"),
            "TASK_STATE_COMPLETED");
  EXPECT_EQ(events.back().at("result").at("statusUpdate").at("taskId"), bj::value(id));

  // A cancel while the agent works stands when its answer comes.
  const auto second = bj::parse(immediate("b").body);
  const std::string id2(second.at("result").at("task").at("id").as_string());
  const auto canceled =
      bj::parse(rpc("booker", R"({"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":")" +
                                  id2 + R"("}})")
                    .body);
  EXPECT_EQ(canceled.at("result").at("status").at("state"), "TASK_STATE_CANCELED") << canceled;
  std::this_thread::sleep_for(900ms);
  const auto later =
      bj::parse(rpc("booker", R"({"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":")" +
                                  id2 + R"("}})")
                    .body);
  EXPECT_EQ(later.at("result").at("status").at("state"), "TASK_STATE_CANCELED") << later;
  const auto again =
      bj::parse(rpc("booker", R"({"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":")" +
                                  id2 + R"("}})")
                    .body);
  EXPECT_EQ(again.at("error").at("code"), -32002);
}

TEST_F(A2ATest, ScenarioOperationsTakeTheirTemplateSchemaAndFreeTextGoesToOther) {
  bj::object tmpl = bj::parse(R"({"schema_id": "pet_grooming_v1", "scenario": "pet_grooming",
      "keys": [{"key_name": "pet", "key_type": "string", "required": true,
                "semantic_description": {"en-US": "Which pet"}}]})")
                        .as_object();
  const auto pub = c_->request("PUT", "/scenarios/pet_grooming/versions/1.0.0", bj::serialize(tmpl),
                               {{"Content-Type", "application/json"}});
  ASSERT_EQ(pub.status, 201) << pub.body;
  bj::object groomer{
      {"id", "groomer"},
      {"name", "Groomer"},
      {"description", "Grooms pets."},
      {"endpoint", agent_.url("/book")},
      {"operations", bj::array{bj::object{{"name", "groom"}, {"scenario", "pet_grooming"}}}}};
  ASSERT_EQ(c_->post_json("/agents", bj::serialize(groomer)).status, 201);
  const auto card = bj::parse(
      c_->request("GET", "/a2a/groomer/.well-known/agent-card.json", "", {{"A2A-Version", "1.0"}})
          .body);
  const auto& schema = card.at("schemas").at("groom.input").as_object();
  EXPECT_TRUE(schema.at("properties").as_object().contains("pet")) << card;
  EXPECT_TRUE(schema.at("properties").as_object().contains("other"))
      << card;  // seed 000's escape valve
  EXPECT_EQ(schema.at("required"), bj::parse(R"(["pet"])"));
  const auto ok = send("groomer", bj::array{data_part(bj::object{{"pet", "cat"}}, "groom.input")});
  EXPECT_EQ(state_of(ok), "TASK_STATE_COMPLETED") << bj::serialize(ok);
  const auto bad = send("groomer", bj::array{data_part(bj::object{{"pet", 3}}, "groom.input")});
  EXPECT_EQ(bad.at("error").at("code"), -32602);
  // Free text lands in `other`; the named pet comes from a named part.
  const auto text = send(
      "groomer", bj::array{bj::object{{"text", "please trim the claws"}},
                           bj::object{{"text", "dog"}, {"metadata", bj::object{{"name", "pet"}}}}});
  EXPECT_EQ(state_of(text), "TASK_STATE_COMPLETED") << bj::serialize(text);
  const auto missing = send("groomer", bj::array{bj::object{{"text", "please trim the claws"}}});
  EXPECT_EQ(missing.at("error").at("code"), -32602);
  EXPECT_NE(std::string(missing.at("error").at("message").as_string()).find("\"pet\""),
            std::string::npos);
}

}  // namespace
