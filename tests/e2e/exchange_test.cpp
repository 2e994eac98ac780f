// Seed 000 through the public HTTP interface: templates, negotiation, validated payloads executed
// by a real agent over HTTP, `other`, and update suggestions.

#include "support/http_client.hpp"
#include "support/server_process.hpp"
#include "support/test_agent.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace bj = boost::json;
using namespace std::chrono_literals;
using schemagate::testing::Agent;
using schemagate::testing::body_json;
using schemagate::testing::error_code;
using schemagate::testing::fresh_dir;
using schemagate::testing::HttpClient;
using schemagate::testing::HttpResponse;
using schemagate::testing::Server;

namespace {

// Seed 000 Figure 2, with constraints that make its descriptions enforceable.
bj::object flight_template(const std::string& endpoint) {
  bj::object t = bj::parse(R"({
    "schema_id": "flight_booking_v1",
    "scenario": "flight_booking",
    "keys": [
      {"key_name": "origin", "key_type": "string", "required": true, "default_value": null,
       "semantic_description": {"en": "Departure city or airport code.", "zh": "出发城市或机场代码。",
                                "en-GB": "Departure city or airport code (UK)."}},
      {"key_name": "destination", "key_type": "string", "required": true, "default_value": null,
       "semantic_description": "Arrival city or airport code."},
      {"key_name": "departure_date", "key_type": "string", "required": true, "format": "date",
       "semantic_description": "Date of departure in ISO 8601 format (YYYY-MM-DD)."},
      {"key_name": "cabin_class", "key_type": "string", "required": false, "default_value": "economy",
       "enum": ["economy", "premium_economy", "business", "first"],
       "semantic_description": "Cabin class preference."},
      {"key_name": "passenger_count", "key_type": "integer", "required": false, "default_value": 1,
       "minimum": 1, "maximum": 9, "semantic_description": "Number of passengers. Range: 1-9."},
      {"key_name": "other", "key_type": "string", "required": false, "default_value": null,
       "semantic_description": "Escape valve for unstructured fragments."}
    ],
    "response_schema": {"type": "object", "required": ["booking_id", "status"],
                        "properties": {"booking_id": {"type": "string"}, "status": {"type": "string"}}}
  })")
                     .as_object();
  t["endpoint"] = endpoint;
  return t;
}

const char* kFigure8 = R"({
  "schema_id": "flight_booking_v1",
  "payload": {"origin": "PEK", "destination": "SHA", "departure_date": "2026-05-04",
              "cabin_class": "business", "passenger_count": 1, "other": "window seat"}})";

HttpResponse put_json(HttpClient& c, const std::string& target, const bj::value& body) {
  return c.request("PUT", target, bj::serialize(body), {{"Content-Type", "application/json"}});
}

class ExchangeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void start(std::vector<std::string> args = {}) {
    server_ = std::make_unique<Server>(dir_, args);
    client_ = std::make_unique<HttpClient>("127.0.0.1", server_->port);
  }
  HttpClient& c() { return *client_; }
  void publish_flight() {
    ASSERT_EQ(put_json(c(), "/scenarios/flight_booking/versions/1.0.0",
                       flight_template(agent_.url("/book")))
                  .status,
              201);
  }
  std::filesystem::path dir_;
  Agent agent_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(ExchangeTest, PublishingIsIdempotentAndVersionsAreImmutable) {
  start();
  const auto tmpl = flight_template(agent_.url("/book"));
  const auto first = put_json(c(), "/scenarios/flight_booking/versions/1.0.0", tmpl);
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(put_json(c(), "/scenarios/flight_booking/versions/1.0.0", tmpl).status, 200);
  auto changed = tmpl;
  changed["keys"].as_array()[1].as_object()["semantic_description"] = "Where to.";
  const auto conflict = put_json(c(), "/scenarios/flight_booking/versions/1.0.0", changed);
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(error_code(conflict), "Conflict");
  // The same schema_id cannot belong to another version.
  EXPECT_EQ(put_json(c(), "/scenarios/flight_booking/versions/1.1.0", tmpl).status, 409);
  auto v11 = tmpl;
  v11["schema_id"] = "flight_booking_v1_1";
  EXPECT_EQ(put_json(c(), "/scenarios/flight_booking/versions/1.1.0", v11).status, 201);
  const auto list = body_json(c().get("/scenarios"));
  ASSERT_EQ(list.at("scenarios").as_array().size(), 1u);
  EXPECT_EQ(list.at("scenarios").at(0).at("latest_version"), "1.1.0");
  EXPECT_EQ(list.at("scenarios").at(0).at("schema_id"), "flight_booking_v1_1");
}

TEST_F(ExchangeTest, BadTemplatesListEveryProblem) {
  start();
  const auto r = put_json(c(), "/scenarios/flight_booking/versions/1.0.0", bj::parse(R"({
    "schema_id": "fb", "scenario": "flight_booking",
    "keys": [
      {"key_name": "Origin", "key_type": "string", "required": true, "semantic_description": "x"},
      {"key_name": "dest", "key_type": "text", "required": true, "semantic_description": "x"},
      {"key_name": "dest", "key_type": "string", "required": true, "semantic_description": "x"},
      {"key_name": "count", "key_type": "integer", "required": false, "default_value": 12,
       "maximum": 9, "semantic_description": "x"},
      {"key_name": "other", "key_type": "integer", "required": false, "semantic_description": "x"}
    ]})"));
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(error_code(r), "SchemaError");
  std::map<std::string, std::string> problems;
  const auto body = body_json(r);
  for (const auto& p : body.at("error").at("details").at("problems").as_array()) {
    problems[std::string(p.at("path").as_string())] = p.at("message").as_string();
  }
  EXPECT_NE(problems["/keys/0/key_name"].find("snake_case"), std::string::npos);
  EXPECT_NE(problems["/keys/1/key_type"].find("unknown key_type \"text\""), std::string::npos);
  EXPECT_NE(problems["/keys/2/key_name"].find("duplicate key_name \"dest\""), std::string::npos);
  EXPECT_NE(problems["/keys/3/default_value"].find("must be <= 9"), std::string::npos);
  EXPECT_NE(problems["/keys/4"].find("reserved key \"other\""), std::string::npos);
  EXPECT_EQ(problems.size(), 5u) << r.body;
  // A scenario in the body that differs from the URL, and a bad version.
  auto t = flight_template("http://127.0.0.1:1/x");
  t["scenario"] = "hotel";
  EXPECT_EQ(put_json(c(), "/scenarios/flight_booking/versions/1.0.0", t).status, 422);
  EXPECT_EQ(
      put_json(c(), "/scenarios/flight_booking/versions/1.0", flight_template("http://x/")).status,
      422);
}

TEST_F(ExchangeTest, OtherIsAddedWhenMissing) {
  start();
  auto t = flight_template(agent_.url("/book"));
  auto& keys = t["keys"].as_array();
  keys.erase(keys.end() - 1);
  ASSERT_EQ(put_json(c(), "/scenarios/flight_booking/versions/1.0.0", t).status, 201);
  const auto tmpl = body_json(c().get("/scenarios/flight_booking/template"));
  const auto& last = tmpl.at("keys").as_array().back();
  EXPECT_EQ(last.at("key_name"), "other");
  EXPECT_EQ(last.at("key_type"), "string");
  EXPECT_EQ(last.at("required"), false);
}

TEST_F(ExchangeTest, NegotiationAsInAppendixA1) {
  start();
  publish_flight();
  // Figure 6, exactly as written (no jsonrpc member): the bare Figure 7 object comes back.
  const auto r = c().post_json("/sdsi", R"({"method": "get_schema_template",
      "params": {"scenario": "flight_booking", "preferred_language": "en-US"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto t = body_json(r);
  EXPECT_EQ(t.at("schema_id"), "flight_booking_v1");
  EXPECT_EQ(t.at("scenario"), "flight_booking");
  const auto& keys = t.at("keys").as_array();
  ASSERT_EQ(keys.size(), 6u);
  EXPECT_EQ(keys[0].at("semantic_description"), "Departure city or airport code.");  // en
  EXPECT_EQ(keys[3].at("default_value"), "economy");
  EXPECT_EQ(keys[4].at("key_type"), "integer");
  // JSON-RPC 2.0 proper.
  const auto rpc = body_json(c().post_json("/sdsi", R"({"jsonrpc": "2.0", "id": 7,
      "method": "get_schema_template", "params": {"scenario": "flight_booking", "preferred_language": "zh-CN"}})"));
  EXPECT_EQ(rpc.at("id"), 7);
  EXPECT_EQ(rpc.at("result").at("language"), "zh");
  EXPECT_EQ(rpc.at("result").at("keys").at(0).at("semantic_description"), "出发城市或机场代码。");
}

TEST_F(ExchangeTest, PreferredLanguageExactThenPrimaryThenDefault) {
  start();
  publish_flight();
  auto desc = [&](const std::string& lang) {
    const auto t =
        body_json(c().get("/scenarios/flight_booking/template?preferred_language=" + lang));
    return std::string(t.at("keys").at(0).at("semantic_description").as_string());
  };
  EXPECT_EQ(desc("en-GB"), "Departure city or airport code (UK).");  // exact tag
  EXPECT_EQ(desc("en-AU"), "Departure city or airport code.");       // primary subtag
  EXPECT_EQ(desc("zh-Hant-TW"), "出发城市或机场代码。");             // primary subtag
  EXPECT_EQ(desc("fr"), "Departure city or airport code.");          // template default (en)
}

TEST_F(ExchangeTest, TemplateEtagAndJsonSchema) {
  start();
  publish_flight();
  const auto first = c().get("/scenarios/flight_booking/template");
  ASSERT_EQ(first.status, 200);
  const auto etag = first.header("etag");
  ASSERT_FALSE(etag.empty());
  const auto again =
      c().request("GET", "/scenarios/flight_booking/template", {}, {{"If-None-Match", etag}});
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  const auto zh = c().get("/scenarios/flight_booking/template?preferred_language=zh");
  EXPECT_NE(zh.header("etag"), etag);

  const auto schema = body_json(c().get("/scenarios/flight_booking/versions/1.0.0/json-schema"));
  EXPECT_EQ(schema.at("$schema"), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(schema.at("additionalProperties"), false);
  EXPECT_EQ(schema.at("required"), bj::parse(R"(["origin","destination","departure_date"])"));
  EXPECT_EQ(schema.at("properties").at("passenger_count").at("maximum"), 9);
  EXPECT_EQ(c().get("/scenarios/hotel/template").status, 404);
}

TEST_F(ExchangeTest, Figure8IsValidatedCompletedAndExecuted) {
  start();
  publish_flight();
  auto r = c().post_json("/scenarios/flight_booking/payloads", kFigure8);
  ASSERT_EQ(r.status, 200) << r.body;
  auto result = body_json(r);
  EXPECT_EQ(result.at("booking_id"), "BK-20260430-001");
  EXPECT_EQ(result.at("status"), "confirmed");
  // Defaults fill what the client left out before the agent sees the payload.
  r = c().post_json(
      "/scenarios/flight_booking/payloads",
      R"({"schema_id":"flight_booking_v1","payload":{"origin":"PEK","destination":"SHA","departure_date":"2026-05-04"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  result = body_json(r);
  EXPECT_EQ(result.at("applied_defaults"), bj::parse(R"(["cabin_class","passenger_count"])"));
  const auto received = agent_.received();
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[1].at("cabin_class"), "economy");
  EXPECT_EQ(received[1].at("passenger_count"), 1);
  EXPECT_FALSE(received[1].as_object().contains("other"));
  // The same through JSON-RPC.
  const auto rpc = body_json(c().post_json(
      "/sdsi", std::string(R"({"jsonrpc":"2.0","id":"a","method":"submit_payload","params":)") +
                   kFigure8 + "}"));
  EXPECT_EQ(rpc.at("result").at("status"), "confirmed");
}

TEST_F(ExchangeTest, InvalidPayloadsListEveryViolation) {
  start();
  publish_flight();
  const auto r = c().post_json("/scenarios/flight_booking/payloads",
                               R"({"schema_id":"flight_booking_v1","payload":{"origin":"PEK",
                                  "departure_date":"04/05/2026","passenger_count":12,"seat":"window"}})");
  ASSERT_EQ(r.status, 400);
  EXPECT_EQ(error_code(r), "InvalidInput");
  std::set<std::string> where;
  const auto body = body_json(r);
  for (const auto& v : body.at("error").at("details").at("violations").as_array()) {
    where.insert(std::string(v.at("instanceLocation").as_string()) + " " +
                 std::string(v.at("keywordLocation").as_string()));
  }
  EXPECT_TRUE(where.count(" /required")) << r.body;  // destination
  EXPECT_TRUE(where.count("/departure_date /properties/departure_date/format")) << r.body;
  EXPECT_TRUE(where.count("/passenger_count /properties/passenger_count/maximum")) << r.body;
  EXPECT_TRUE(where.count("/seat /additionalProperties")) << r.body;
  EXPECT_TRUE(agent_.received().empty());
  // JSON-RPC: -32602 with the same details.
  const auto rpc =
      body_json(c().post_json("/sdsi", R"({"jsonrpc":"2.0","id":1,"method":"submit_payload",
      "params":{"schema_id":"flight_booking_v1","payload":{"origin":"PEK"}}})"));
  EXPECT_EQ(rpc.at("error").at("code"), -32602);
  EXPECT_EQ(rpc.at("error").at("data").at("details").at("violations").as_array().size(), 2u);
  // Unknown schema_id.
  const auto unknown =
      c().post_json("/scenarios/flight_booking/payloads", R"({"schema_id":"nope","payload":{}})");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_NE(unknown.body.find("unknown schema_id \\\"nope\\\""), std::string::npos) << unknown.body;
  const auto rpc_unknown = body_json(c().post_json(
      "/sdsi",
      R"({"jsonrpc":"2.0","id":2,"method":"submit_payload","params":{"schema_id":"nope","payload":{}}})"));
  EXPECT_EQ(rpc_unknown.at("error").at("data").at("code"), "NotFound");
}

TEST_F(ExchangeTest, OtherIsSanitizedAndLengthLimited) {
  start({"--max-other-chars", "12"});
  publish_flight();
  const auto r = c().post_json(
      "/scenarios/flight_booking/payloads",
      R"({"schema_id":"flight_booking_v1","payload":{"origin":"PEK","destination":"SHA",
                                  "departure_date":"2026-05-04","other":"  window\u0000\u001b[31m seat\nplease and more"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto received = agent_.received();
  ASSERT_EQ(received.size(), 1u);
  const std::string other(received[0].at("other").as_string());
  EXPECT_EQ(other.find('\x1b'), std::string::npos);
  EXPECT_EQ(other.find('\0'), std::string::npos);
  EXPECT_EQ(other, "window[31m s");  // 12 characters, controls gone, leading blanks trimmed
}

TEST_F(ExchangeTest, AgentFailuresMapToGatewayErrors) {
  start({"--agent-timeout-ms", "300"});
  auto publish = [&](const std::string& scenario, const std::string& endpoint, bool with_schema) {
    auto t = flight_template(endpoint);
    t["scenario"] = scenario;
    t["schema_id"] = scenario + "_v1";
    if (!with_schema) t.erase("response_schema");
    ASSERT_EQ(put_json(c(), "/scenarios/" + scenario + "/versions/1.0.0", t).status, 201);
  };
  publish("slow", agent_.url("/slow"), false);
  publish("failing", agent_.url("/fail"), false);
  publish("wrong", agent_.url("/wrong"), true);
  publish("notjson", agent_.url("/notjson"), false);
  publish("nowhere", "http://127.0.0.1:1/agent", false);
  auto submit = [&](const std::string& scenario) {
    return c().post_json(
        "/scenarios/" + scenario + "/payloads",
        R"({"schema_id":")" + scenario +
            R"(_v1","payload":{"origin":"PEK","destination":"SHA","departure_date":"2026-05-04"}})");
  };
  const auto slow = submit("slow");
  EXPECT_EQ(slow.status, 504);
  EXPECT_EQ(error_code(slow), "AgentTimeout");
  const auto failing = submit("failing");
  EXPECT_EQ(failing.status, 502);
  EXPECT_EQ(error_code(failing), "AgentError");
  const auto wrong = submit("wrong");
  EXPECT_EQ(wrong.status, 502);
  EXPECT_EQ(error_code(wrong), "InvalidAgentResponse");
  EXPECT_NE(wrong.body.find("/status"), std::string::npos) << wrong.body;
  EXPECT_EQ(error_code(submit("notjson")), "InvalidAgentResponse");
  const auto nowhere = submit("nowhere");
  EXPECT_EQ(nowhere.status, 502);
  EXPECT_EQ(error_code(nowhere), "AgentUnreachable");
}

TEST_F(ExchangeTest, PatchesComeBackInlineAndByPolling) {
  start();
  publish_flight();
  const auto posted = c().post_json("/scenarios/flight_booking/patches", R"({
      "parent_schema_id": "flight_booking_v1",
      "new_keys": [{"key_name": "seat_preference", "key_type": "string", "required": false,
                    "default_value": "none", "enum": ["window", "aisle", "none"],
                    "semantic_description": "Seat preference. Acceptable values: window, aisle, none."}]})");
  ASSERT_EQ(posted.status, 201) << posted.body;
  const auto patch = body_json(posted);
  EXPECT_TRUE(patch.at("patch_id").as_string().starts_with("patch-"));
  EXPECT_EQ(patch.at("parent_schema_id"), "flight_booking_v1");
  EXPECT_TRUE(patch.as_object().contains("timestamp"));
  EXPECT_TRUE(patch.as_object().contains("expiration"));
  EXPECT_EQ(patch.at("new_keys").at(0).at("experimental"), true);

  // Inline, in the execution result (Figure 9).
  const auto r = body_json(c().post_json("/scenarios/flight_booking/payloads", kFigure8));
  EXPECT_EQ(r.at("schema_update_suggestion").at("new_keys").at(0).at("key_name"),
            "seat_preference");
  // A client that adopts the new key is accepted; a wrong value for it is not.
  EXPECT_EQ(
      c().post_json(
             "/scenarios/flight_booking/payloads",
             R"({"schema_id":"flight_booking_v1","payload":{"origin":"PEK","destination":"SHA","departure_date":"2026-05-04","seat_preference":"aisle"}})")
          .status,
      200);
  EXPECT_EQ(
      c().post_json(
             "/scenarios/flight_booking/payloads",
             R"({"schema_id":"flight_booking_v1","payload":{"origin":"PEK","destination":"SHA","departure_date":"2026-05-04","seat_preference":"roof"}})")
          .status,
      400);
  // By polling, REST and JSON-RPC.
  const auto polled = body_json(c().get("/scenarios/flight_booking/updates"));
  ASSERT_EQ(polled.at("patches").as_array().size(), 1u);
  EXPECT_EQ(polled.at("patches").at(0).at("patch_id"), patch.at("patch_id"));
  const auto since = std::to_string(patch.at("timestamp_ms").as_int64());
  EXPECT_TRUE(body_json(c().get("/scenarios/flight_booking/updates?since=" + since))
                  .at("patches")
                  .as_array()
                  .empty());
  const auto rpc = body_json(c().post_json(
      "/sdsi",
      R"({"jsonrpc":"2.0","id":3,"method":"get_schema_updates","params":{"scenario":"flight_booking"}})"));
  EXPECT_EQ(rpc.at("result").at("patches").as_array().size(), 1u);
}

TEST_F(ExchangeTest, ClientTargetedPatchesReachOnlyThatClient) {
  start();
  publish_flight();
  ASSERT_EQ(c().post_json("/scenarios/flight_booking/patches",
                          R"({"parent_schema_id": "flight_booking_v1",
      "client_id": "frequent-flyer", "new_keys": [{"key_name": "cabin_zone", "key_type": "string",
      "required": false, "semantic_description": "Quiet or standard cabin zone."}]})")
                .status,
            201);
  EXPECT_EQ(body_json(c().get("/scenarios/flight_booking/updates?client_id=frequent-flyer"))
                .at("patches")
                .as_array()
                .size(),
            1u);
  EXPECT_TRUE(body_json(c().get("/scenarios/flight_booking/updates?client_id=someone"))
                  .at("patches")
                  .as_array()
                  .empty());
  auto with_client = bj::parse(kFigure8).as_object();
  with_client["client_id"] = "frequent-flyer";
  EXPECT_TRUE(
      body_json(c().post_json("/scenarios/flight_booking/payloads", bj::serialize(with_client)))
          .as_object()
          .contains("schema_update_suggestion"));
  EXPECT_FALSE(body_json(c().post_json("/scenarios/flight_booking/payloads", kFigure8))
                   .as_object()
                   .contains("schema_update_suggestion"));
}

TEST_F(ExchangeTest, PatchesMayNotRedefineBaseKeys) {
  start();
  publish_flight();
  const auto r = c().post_json("/scenarios/flight_booking/patches",
                               R"({"parent_schema_id": "flight_booking_v1",
      "new_keys": [{"key_name": "origin", "key_type": "string", "required": false, "semantic_description": "again"}],
      "modified_keys": [{"key_name": "passenger_count", "key_type": "string"}]})");
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.body.find("already exists"), std::string::npos);
  EXPECT_NE(r.body.find("keep their type"), std::string::npos);
  EXPECT_EQ(c().post_json("/scenarios/flight_booking/patches",
                          R"({"parent_schema_id": "nope", "new_keys": []})")
                .status,
            404);
}

TEST_F(ExchangeTest, EndpointsAreBindingsNotPartOfTheVersion) {
  start();
  // Published without an endpoint: payloads are validated and completed, not forwarded.
  auto t = flight_template("http://127.0.0.1:1/unused");
  t.erase("endpoint");
  ASSERT_EQ(put_json(c(), "/scenarios/flight_booking/versions/1.0.0", t).status, 201);
  auto r = body_json(c().post_json("/scenarios/flight_booking/payloads", kFigure8));
  EXPECT_EQ(r.at("status"), "accepted");
  EXPECT_EQ(r.at("payload").at("other"), "window seat");
  // The same version with an endpoint is the same content: 200, and the binding moves.
  ASSERT_EQ(put_json(c(), "/scenarios/flight_booking/versions/1.0.0",
                     flight_template(agent_.url("/book")))
                .status,
            200);
  EXPECT_EQ(body_json(c().post_json("/scenarios/flight_booking/payloads", kFigure8)).at("status"),
            "confirmed");
  EXPECT_EQ(body_json(c().get("/scenarios/flight_booking/endpoint")).at("endpoint").as_string(),
            agent_.url("/book").c_str());
  // Rebinding and unbinding explicitly.
  EXPECT_EQ(
      put_json(c(), "/scenarios/flight_booking/endpoint", bj::object{{"endpoint", nullptr}}).status,
      200);
  EXPECT_EQ(body_json(c().post_json("/scenarios/flight_booking/payloads", kFigure8)).at("status"),
            "accepted");
  EXPECT_EQ(put_json(c(), "/scenarios/flight_booking/endpoint", bj::object{{"endpoint", "ftp://x"}})
                .status,
            400);
  EXPECT_EQ(
      put_json(c(), "/scenarios/hotel/endpoint", bj::object{{"endpoint", "http://x/"}}).status,
      404);
  // The negotiated template never shows where the agent lives.
  EXPECT_FALSE(
      body_json(c().get("/scenarios/flight_booking/template")).as_object().contains("endpoint"));
}

TEST_F(ExchangeTest, JsonRpcErrors) {
  start();
  publish_flight();
  auto rpc = [&](const std::string& body) { return body_json(c().post_json("/sdsi", body)); };
  EXPECT_EQ(rpc(R"({"jsonrpc":"2.0","id":1,"method":"nope"})").at("error").at("code"), -32601);
  EXPECT_EQ(rpc(R"({"jsonrpc":"2.0","id":1,"method":"get_schema_template","params":{}})")
                .at("error")
                .at("code"),
            -32602);
  EXPECT_EQ(rpc("{not json").at("error").at("code"), -32700);
  const auto batch = rpc(
      R"([{"jsonrpc":"2.0","id":1,"method":"get_schema_template","params":{"scenario":"flight_booking"}},
                             {"jsonrpc":"2.0","method":"get_schema_template","params":{"scenario":"flight_booking"}},
                             {"jsonrpc":"2.0","id":2,"method":"nope"}])");
  ASSERT_EQ(batch.as_array().size(), 2u);  // the notification gets no response
  EXPECT_EQ(batch.at(0).at("result").at("schema_id"), "flight_booking_v1");
  EXPECT_EQ(batch.at(1).at("error").at("code"), -32601);
}

}  // namespace
