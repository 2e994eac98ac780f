// Seed 004 §6 through HTTP: POST /agents/{id}/invoke with a real agent behind it.

#include "http/client.hpp"
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
             bj::object{{"name", "stream"},
                        {"endpoint", agent_.url("/stream")},
                        {"input_schema", bj::parse(R"({"type": "object", "properties":
                            {"count": {"type": "integer", "maximum": 10}}})")}},
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

// W3C Trace Context: the caller's trace reaches the agent (with schemagate's span as the
// parent) and is written to the access log and the audit entry, so one call can be followed.
TEST_F(GatewayTest, TraceContextIsCarriedToTheAgentAndRecorded) {
  ASSERT_EQ(c_->post_json("/agents",
                          bj::serialize(bj::object{{"id", "tracer"},
                                                   {"name", "Tracer"},
                                                   {"description", "Echoes trace headers."},
                                                   {"endpoint", agent_.url("/trace")},
                                                   {"inputs", bj::object{{"text", "string"}}}}))
                .status,
            201);
  const std::string trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const auto r = c_->request("POST", "/agents/tracer/invoke", R"({"text": "hi"})",
                             {{"Content-Type", "application/json"},
                              {"traceparent", "00-" + trace + "-00f067aa0ba902b7-01"},
                              {"tracestate", "vendor=abc"}});
  ASSERT_EQ(r.status, 200) << r.body;
  const auto echoed = std::string(body_json(r).at("traceparent").as_string());
  ASSERT_EQ(echoed.size(), 55u) << echoed;
  EXPECT_EQ(echoed.substr(0, 36), "00-" + trace + "-");
  const auto span = echoed.substr(36, 16);
  EXPECT_NE(span, "00f067aa0ba902b7") << "schemagate's own span is the agent's parent";
  EXPECT_EQ(echoed.substr(52), "-01");
  EXPECT_EQ(body_json(r).at("tracestate"), "vendor=abc");

  // A malformed traceparent starts a new trace rather than being passed on.
  const auto fresh = c_->request("POST", "/agents/tracer/invoke", R"({"text": "hi"})",
                                 {{"Content-Type", "application/json"},
                                  {"traceparent", "00-" + trace + "-0000000000000000-01"}});
  const auto renewed = std::string(body_json(fresh).at("traceparent").as_string());
  EXPECT_EQ(renewed.size(), 55u);
  EXPECT_EQ(renewed.find(trace), std::string::npos);

  bool audited = false;
  const auto audit = body_json(c_->get("/audit?limit=50"));
  for (const auto& e : audit.at("entries").as_array()) {
    if (e.at("target") == "tracer" && e.as_object().contains("trace_id") &&
        e.at("trace_id").as_string() == trace.c_str()) {
      audited = true;
    }
  }
  EXPECT_TRUE(audited) << "the audit entry names the trace";
  EXPECT_TRUE(server_->process->wait_for_stdout("\"trace_id\":\"" + trace + "\",\"span_id\":\"" +
                                                    span + "\",\"parent_id\":\"00f067aa0ba902b7\"",
                                                5s))
      << server_->process->stdout_text();
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

namespace {

// Reads an event stream through the gateway piece by piece, with when each piece came.
struct Received {
  int status = 0;
  std::string content_type;
  std::string text;
  std::chrono::milliseconds first_piece{0};
};

Received read_stream(unsigned short port, const std::string& path, const std::string& body,
                     std::vector<schemagate::http::Header> headers = {}) {
  schemagate::http::Client client;
  headers.push_back({"Content-Type", "application/json"});
  const auto start = std::chrono::steady_clock::now();
  auto s =
      client.open("POST", "http://127.0.0.1:" + std::to_string(port) + path, body, headers, 5s);
  Received r;
  r.status = s->status();
  r.content_type = std::string(s->header("Content-Type").value_or(""));
  bool first = true;
  while (s->read(r.text, 5s)) {
    if (first && !r.text.empty()) {
      r.first_piece = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - start);
      first = false;
    }
  }
  return r;
}

}  // namespace

TEST_F(GatewayTest, StreamsRelayTheAgentsEventsAsTheyCome) {
  // Accept: text/event-stream; the agent takes 3 x 400 ms, the first event must not wait.
  const auto r = read_stream(server_->port, "/agents/multi/operations/stream/invoke",
                             R"({"count": 3, "gap_ms": 400})", {{"Accept", "text/event-stream"}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.content_type, "text/event-stream");
  EXPECT_EQ(r.text,
            "data: {\"token\": 0}\n\ndata: {\"token\": 1}\n\ndata: {\"token\": 2}\n\n"
            "event: done\ndata: {}\n\n");
  EXPECT_LT(r.first_piece, 600ms);
  // "stream": true in the body does the same; the flag is not held against the input schema and
  // the agent still sees it (seed 004 §6.3: the agent's own parameter).
  const auto flagged = read_stream(server_->port, "/agents/multi/invoke",
                                   R"({"operation": "stream", "stream": true, "count": 1})");
  EXPECT_EQ(flagged.status, 200);
  EXPECT_EQ(flagged.text, "data: {\"token\": 0}\n\nevent: done\ndata: {}\n\n");
  EXPECT_EQ(agent_.received().back().at("stream"), true);
  // The input is checked before anything is sent: a plain JSON error, no stream.
  const auto bad =
      c_->request("POST", "/agents/multi/operations/stream/invoke",
                  R"({"count": 99, "stream": true})", {{"Content-Type", "application/json"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(error_code(bad), "InvalidInput");
}

TEST_F(GatewayTest, StreamFailuresEndWithAnErrorEvent) {
  // The agent drops the connection after one event.
  const auto broken = read_stream(server_->port, "/agents/multi/operations/stream/invoke",
                                  R"({"count": 5, "break_after": 1, "stream": true})");
  EXPECT_EQ(broken.status, 200);
  EXPECT_TRUE(broken.text.starts_with("data: {\"token\": 0}\n\n")) << broken.text;
  EXPECT_NE(broken.text.find("event: error\ndata: {\"error\":{\"code\":\"AgentUnreachable\""),
            std::string::npos)
      << broken.text;
  // The agent goes quiet for longer than the agent timeout (1 s here).
  const auto stalled = read_stream(server_->port, "/agents/multi/operations/stream/invoke",
                                   R"({"count": 3, "stall_ms": 2500, "stream": true})");
  EXPECT_NE(stalled.text.find("\"code\":\"AgentTimeout\""), std::string::npos) << stalled.text;
  // Unreachable before the first byte: an ordinary 502.
  const auto gone =
      c_->request("POST", "/agents/multi/operations/gone/invoke", "{}",
                  {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}});
  EXPECT_EQ(gone.status, 502);
  EXPECT_EQ(error_code(gone), "AgentUnreachable");
}

TEST_F(GatewayTest, AJsonReplyToAStreamRequestIsValidatedAndSentAsOneEvent) {
  const auto ok = read_stream(server_->port, "/agents/translator-001/invoke", kInput,
                              {{"Accept", "text/event-stream"}});
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.text, "event: result\ndata: {\"translated_text\":\"[fr] hello\"}\n\n");
  const auto wrong =
      c_->request("POST", "/agents/multi/operations/broken/invoke", "{}",
                  {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}});
  EXPECT_EQ(wrong.status, 502);
  EXPECT_EQ(error_code(wrong), "InvalidAgentResponse");
  // Streams are one input at a time, and cannot be replayed.
  EXPECT_EQ(c_->request("POST", "/agents/translator-001/invoke", std::string("[") + kInput + "]",
                        {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}})
                .status,
            400);
  EXPECT_EQ(c_->request("POST", "/agents/translator-001/invoke", kInput,
                        {{"Content-Type", "application/json"},
                         {"Accept", "text/event-stream"},
                         {"Idempotency-Key", "k1"}})
                .status,
            400);
}

namespace {

// Calls that block (a batch waits for its agent) run on the handler pool: with both I/O threads'
// worth of them in flight, the server still answers at once.
TEST_F(GatewayTest, BlockingCallsDoNotStallTheIoThreads) {
  bj::object sleepy{{"id", "sleepy"},
                    {"name", "Sleepy"},
                    {"description", "Answers slowly."},
                    {"operations", bj::array{bj::object{{"name", "slow"},
                                                        {"endpoint", agent_.url("/slow")},
                                                        {"input_schema", bj::object{}}}}}};
  ASSERT_EQ(c_->post_json("/agents", bj::serialize(sleepy)).status, 201);
  std::vector<std::future<int>> slow;
  for (int i = 0; i < 2; ++i) {  // as many as the server has I/O threads (--threads 2)
    slow.push_back(std::async(std::launch::async, [&] {
      HttpClient own("127.0.0.1", server_->port);
      return own.post_json("/agents/sleepy/invoke", "[{}]").status;
    }));
  }
  std::this_thread::sleep_for(200ms);  // both are now waiting for the agent
  HttpClient other("127.0.0.1", server_->port);
  EXPECT_EQ(other.get("/healthz").status, 200);
  for (auto& f : slow) {
    EXPECT_EQ(f.wait_for(0ms), std::future_status::timeout) << "the slow call was not in flight";
  }
  for (auto& f : slow)
    EXPECT_EQ(f.get(), 200);
}

}  // namespace
