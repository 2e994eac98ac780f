// Seed 003 through HTTP and the CLI: versions, the breaking-change gate, compatibility
// profiles, the handshake, signed mappings, deprecation, and the upgrade scenario (a client
// pinned to v1 keeps working against an agent that moved to v2).

#include "signing/jws.hpp"
#include "support/http_client.hpp"
#include "support/process.hpp"
#include "support/server_process.hpp"
#include "support/test_agent.hpp"
#include "util/files.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <fstream>

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

const char* kV1Input = R"({"type":"object","required":["dest","cabin"],
  "properties":{"dest":{"type":"string","minLength":3},"cabin":{"enum":["eco","biz"]}},
  "additionalProperties":false})";
const char* kV1Output =
    R"({"type":"object","required":["ref"],"properties":{"ref":{"type":"string"}}})";
const char* kV2Input = R"({"type":"object","required":["destination","cabin_class","currency"],
  "properties":{"destination":{"type":"string","minLength":3},
                "cabin_class":{"enum":["economy","business"]},"currency":{"type":"string"}},
  "additionalProperties":false})";
const char* kV2Output = R"({"type":"object","required":["booking_ref","status"],
  "properties":{"booking_ref":{"type":"string"},"status":{"type":"string"}}})";

// v1 -> v2 for requests, and v1 -> v2 for responses (its inverse serves v1 clients).
const char* kMapping = R"({"direction":"bidirectional",
  "operations":[{"op":"rename","from":"/dest","to":"/destination"},
                {"op":"convert","path":"/cabin","table":{"eco":"economy","biz":"business"}},
                {"op":"rename","from":"/cabin","to":"/cabin_class"},
                {"op":"add","path":"/currency","const":"EUR"}],
  "output_operations":[{"op":"rename","from":"/ref","to":"/booking_ref"},
                       {"op":"add","path":"/status","const":"confirmed"}],
  "examples":[{"dest":"Paris","cabin":"eco"}],
  "output_examples":[{"ref":"BK-1"}]})";

class VersioningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    server_ = std::make_unique<Server>(dir_);
    c_ = std::make_unique<HttpClient>("127.0.0.1", server_->port);
  }

  HttpResponse put_json(const std::string& path, const std::string& body,
                        std::map<std::string, std::string> headers = {}) {
    headers["Content-Type"] = "application/json";
    return c_->request("PUT", path, body, headers);
  }
  HttpResponse post(const std::string& path, const std::string& body,
                    std::map<std::string, std::string> headers = {}) {
    headers["Content-Type"] = "application/json";
    return c_->request("POST", path, body, headers);
  }

  std::string card(const char* input, const char* output, const std::string& path,
                   const std::string& version = "") {
    bj::object op{{"name", "book"},
                  {"endpoint", agent_.url(path)},
                  {"input_schema", bj::parse(input)},
                  {"output_schema", bj::parse(output)}};
    if (!version.empty()) op["version"] = version;
    return bj::serialize(bj::object{{"id", "flights"},
                                    {"name", "Flights"},
                                    {"description", "Books flights."},
                                    {"operations", bj::array{op}}});
  }

  // Whether a detached JWS over `doc` verifies with a key of the server's JWKS.
  bool signed_by_server(const bj::value& doc, const std::string& jws) {
    const auto keys =
        schemagate::signing::keys_by_kid(body_json(c_->get("/.well-known/jwks.json")));
    return schemagate::signing::verify_document(doc, jws, keys).empty();
  }

  std::filesystem::path dir_;
  Agent agent_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<HttpClient> c_;
};

TEST_F(VersioningTest, AClientPinnedToV1KeepsWorkingAgainstAnAgentThatMovedToV2) {
  ASSERT_EQ(post("/agents", card(kV1Input, kV1Output, "/v1/book")).status, 201);
  auto got = body_json(c_->get("/agents/flights"));
  EXPECT_EQ(got.at("operations").at(0).at("version"), "1.0.0") << "first version given";
  auto r = post("/agents/flights/invoke", R"({"dest":"Paris","cabin":"eco"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("schema-version"), "1.0.0");
  EXPECT_TRUE(
      signed_by_server(bj::object{{"contract", "flights:book"}, {"schema_version", "1.0.0"}},
                       r.header("schema-version-signature")));

  // The agent moves to v2 without saying it is a new major version: refused, with the list.
  r = put_json("/agents/flights", card(kV2Input, kV2Output, "/v2/book"));
  ASSERT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(error_code(r), "BreakingChange");
  const auto details = body_json(r).at("error").at("details");
  EXPECT_EQ(details.at("required_bump"), "major");
  std::set<std::string> kinds;
  for (const auto& ch : details.at("changes").as_array())
    kinds.insert(std::string(ch.at("kind").as_string()) + "@" +
                 std::string(ch.at("instance_path").as_string()));
  EXPECT_TRUE(kinds.contains("property_removed@/dest")) << r.body;
  EXPECT_TRUE(kinds.contains("property_added_required@/currency")) << r.body;
  EXPECT_EQ(body_json(c_->get("/agents/flights")).at("operations").at(0).at("endpoint").as_string(),
            agent_.url("/v1/book"))
      << "a refused registration changes nothing";

  // Declared as 2.0.0 it is accepted; v1 clients now get a structured error until a mapping
  // exists (never a silent translation).
  ASSERT_EQ(put_json("/agents/flights", card(kV2Input, kV2Output, "/v2/book", "2.0.0")).status,
            200);
  r = post("/agents/flights/invoke", R"({"dest":"Paris","cabin":"eco"})",
           {{"Schema-Version", "1.0.0"}});
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_code(r), "UnsupportedSchemaVersion");
  EXPECT_EQ(body_json(r).at("error").at("details").at("accepts"), bj::parse(R"(["2.0.0"])"));

  // A mapping signed by a stranger is untrusted; the publisher's unsigned one is signed by the
  // server and verified on its examples.
  auto foreign = bj::parse(kMapping).as_object();
  foreign["contract"] = "flights:book";
  foreign["from"] = "1.0.0";
  foreign["to"] = "2.0.0";
  foreign["signature"] =
      schemagate::signing::sign_document(schemagate::signing::KeyPair::generate(), foreign);
  r = put_json("/mappings/flights:book/1.0.0/2.0.0", bj::serialize(foreign));
  ASSERT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(error_code(r), "UntrustedSignature");
  auto broken = bj::parse(kMapping).as_object();
  broken["examples"] =
      bj::parse(R"([{"dest":"Paris","cabin":"eco"},{"dest":"Rome","cabin":"biz","x":1}])");
  r = put_json("/mappings/flights:book/1.0.0/2.0.0", bj::serialize(broken));
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(error_code(r), "InvalidMapping");
  r = put_json("/mappings/flights:book/1.0.0/2.0.0", kMapping);
  ASSERT_EQ(r.status, 201) << r.body;
  const auto stored = body_json(c_->get("/mappings/flights:book/1.0.0/2.0.0"));
  EXPECT_TRUE(signed_by_server(stored, std::string(stored.at("signature").as_string())));
  const auto inverse = body_json(c_->get("/mappings/flights:book/2.0.0/1.0.0"));
  EXPECT_EQ(inverse.at("derived"), true);
  EXPECT_TRUE(signed_by_server(inverse, std::string(inverse.at("signature").as_string())));

  // The profile now accepts both; v1 requests are translated both ways.
  const auto profile = body_json(c_->get("/contracts/flights:book/compatibility"));
  EXPECT_EQ(profile.at("accepts"), bj::parse(R"(["1.0.0","2.0.0"])"));
  EXPECT_EQ(profile.at("produces"), bj::parse(R"(["2.0.0"])"));
  EXPECT_EQ(profile.at("default"), "2.0.0");
  r = post("/agents/flights/invoke", R"({"dest":"Paris","cabin":"biz"})",
           {{"Schema-Version", "1.0.0"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r), bj::parse(R"({"ref":"BK-2"})")) << "the v2 reply in v1's shape";
  EXPECT_EQ(r.header("schema-version"), "1.0.0");
  EXPECT_EQ(agent_.received().back(),
            bj::parse(R"({"destination":"Paris","cabin_class":"business","currency":"EUR"})"));
  // The body envelope (§4.2) answers in an envelope.
  r = post("/agents/flights/invoke",
           R"({"schema_version":"1.0.0","version_negotiation":{"permit_upgrade":false},
               "payload":{"dest":"Oslo","cabin":"eco"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r), bj::parse(R"({"schema_version":"1.0.0","payload":{"ref":"BK-2"}})"));
  // v1 input is checked as v1, with v1's own violations.
  r = post("/agents/flights/invoke", R"({"dest":"Paris","cabin":"first"})",
           {{"Schema-Version", "1.0.0"}});
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(body_json(r).at("error").at("details").at("violations").at(0).at("instanceLocation"),
            "/cabin");
  // Current clients are untouched.
  r = post("/agents/flights/invoke",
           R"({"destination":"Paris","cabin_class":"economy","currency":"NOK"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("schema-version"), "2.0.0");
  // An unknown version is refused with the accepted ones.
  r = post("/agents/flights/invoke", "{}", {{"Schema-Version", "3.0.0"}});
  EXPECT_EQ(error_code(r), "UnsupportedSchemaVersion");

  // Deprecation (§3.5): at least 90 days ahead, never earlier, announced on every response.
  r = put_json("/contracts/flights:book/versions/1.0.0/deprecation",
               R"({"deprecation_date":"2000-01-01"})");
  EXPECT_EQ(r.status, 400) << r.body;
  const std::string far = "2099-01-01T00:00:00.000Z";
  ASSERT_EQ(put_json("/contracts/flights:book/versions/1.0.0/deprecation",
                     R"({"deprecation_date":")" + far + "\"}")
                .status,
            200);
  r = put_json("/contracts/flights:book/versions/1.0.0/deprecation",
               R"({"deprecation_date":"2098-01-01"})");
  EXPECT_EQ(r.status, 409) << r.body;
  r = post("/agents/flights/invoke", R"({"dest":"Paris","cabin":"eco"})",
           {{"Schema-Version", "1.0.0"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.header("deprecation-warning").find(far), std::string::npos);
  EXPECT_EQ(r.header("sunset"), "Thu, 01 Jan 2099 00:00:00 GMT");
  EXPECT_EQ(r.header("deprecation").substr(0, 1), "@");
  r = post("/agents/flights/invoke",
           R"({"schema_version":"1.0.0","payload":{"dest":"Oslo","cabin":"eco"}})");
  EXPECT_NE(body_json(r).at("deprecation_warning").as_string().find("deprecated"),
            bj::string::npos);

  // The manifest lists the profile under schema_compatibility, with an ETag.
  const auto manifest = c_->get("/.well-known/schema-manifest.json");
  ASSERT_EQ(manifest.status, 200);
  const auto m = body_json(manifest);
  EXPECT_EQ(m.at("schema_compatibility").at("flights:book").at("deprecations").at(0).at("version"),
            "1.0.0");
  EXPECT_TRUE(signed_by_server(m, std::string(m.at("signature").as_string())));
  EXPECT_EQ(c_->request("GET", "/.well-known/schema-manifest.json", "",
                        {{"If-None-Match", manifest.header("etag")}})
                .status,
            304);
  // The handshake picks the highest common version.
  r = post("/contracts/flights:book/handshake", R"({"supported_versions":["1.0.0","9.0.0"]})");
  EXPECT_EQ(body_json(r).at("schema_version"), "1.0.0");
  r = post("/contracts/flights:book/handshake", R"({"supported_versions":["9.0.0"]})");
  EXPECT_EQ(error_code(r), "UnsupportedSchemaVersion");
}

const char* kTemplateV1 = R"({"schema_id":"trip_v1","scenario":"trip","keys":[
  {"key_name":"city","key_type":"string","required":true,"semantic_description":"City."},
  {"key_name":"nights","key_type":"integer","required":false,"default_value":1,"minimum":1,
   "semantic_description":"Nights."}]})";

TEST_F(VersioningTest, TemplateVersionsFollowTheBreakingChangeRules) {
  ASSERT_EQ(put_json("/scenarios/trip/versions/1.0.0", kTemplateV1).status, 201);
  // Adding an optional key is additive: a minor version is enough.
  auto v11 = bj::parse(kTemplateV1).as_object();
  v11["schema_id"] = "trip_v1_1";
  v11["keys"].as_array().push_back(bj::parse(
      R"({"key_name":"pets","key_type":"boolean","required":false,"semantic_description":"Pets."})"));
  ASSERT_EQ(put_json("/scenarios/trip/versions/1.1.0", bj::serialize(v11)).status, 201);
  // Tightening a bound is not: refused as 1.2.0 with the change named, accepted as 2.0.0.
  auto v2 = v11;
  v2["schema_id"] = "trip_v2";
  v2["keys"].as_array()[1].as_object()["minimum"] = 2;
  v2["keys"].as_array()[1].as_object()["default_value"] = 2;
  auto r = put_json("/scenarios/trip/versions/1.2.0", bj::serialize(v2));
  ASSERT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(error_code(r), "BreakingChange");
  EXPECT_NE(r.body.find("constraint_tightened"), std::string::npos) << r.body;
  // The same report without publishing, for a candidate and between published versions.
  r = post("/scenarios/trip/compatibility",
           bj::serialize(bj::object{{"from", "1.1.0"}, {"to", "1.2.0"}, {"template", v2}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r).at("breaking"), true);
  EXPECT_EQ(body_json(r).at("allowed"), false);
  r = post("/scenarios/trip/compatibility",
           bj::serialize(bj::object{{"from", "1.1.0"}, {"template", v2}, {"policy", "lenient"}}));
  EXPECT_EQ(body_json(r).at("policy"), "LENIENT");
  ASSERT_EQ(put_json("/scenarios/trip/versions/2.0.0", bj::serialize(v2)).status, 201);
  r = post("/scenarios/trip/compatibility", R"({"from":"1.0.0","to":"1.1.0"})");
  EXPECT_EQ(body_json(r).at("required_bump"), "minor");
  EXPECT_EQ(body_json(r).at("changes").at(0).at("kind"), "property_added_optional");

  // Negotiation: the default is the latest release; the handshake picks the highest common
  // version; the template is signed by the server.
  r = c_->get("/scenarios/trip/template");
  EXPECT_EQ(body_json(r).at("schema_version"), "2.0.0");
  r = c_->get("/scenarios/trip/template?supported_versions=1.0.0,1.1.0,7.0.0");
  const auto tmpl = body_json(r);
  EXPECT_EQ(tmpl.at("schema_version"), "1.1.0");
  EXPECT_TRUE(signed_by_server(tmpl, std::string(tmpl.at("signature").as_string())));
  r = c_->get("/scenarios/trip/template?schema_version=5.0.0");
  EXPECT_EQ(error_code(r), "UnsupportedSchemaVersion");

  // A payload in the envelope, without schema_id: validated as that version, answered with it.
  r = post("/scenarios/trip/payloads",
           R"({"schema_version":"1.0.0","payload":{"city":"Oslo","nights":1}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r).at("schema_version"), "1.0.0");
  r = post("/scenarios/trip/payloads", R"({"payload":{"city":"Oslo","nights":1}})");
  ASSERT_EQ(r.status, 400) << "1 night is below 2.0.0's minimum: " << r.body;
  r = post("/scenarios/trip/payloads", R"({"schema_version":"1.0.0","schema_id":"trip_v2",
                                           "payload":{"city":"Oslo"}})");
  EXPECT_EQ(r.status, 400) << "schema_id and schema_version must agree";
  // JSON-RPC carries the same.
  r = post("/sdsi", R"({"jsonrpc":"2.0","id":7,"method":"submit_payload","params":
      {"scenario":"trip","schema_version":"4.0.0","payload":{"city":"Oslo"}}})");
  EXPECT_EQ(body_json(r).at("error").at("data").at("code"), "UnsupportedSchemaVersion") << r.body;

  const auto manifest = body_json(c_->get("/.well-known/schema-manifest.json"));
  EXPECT_EQ(manifest.at("schema_compatibility").at("trip").at("accepts"),
            bj::parse(R"(["1.0.0","1.1.0","2.0.0"])"));
}

TEST_F(VersioningTest, ConformanceAndCompatFromTheCommandLine) {
  ASSERT_EQ(put_json("/scenarios/trip/versions/1.0.0", kTemplateV1).status, 201);
  auto v2 = bj::parse(kTemplateV1).as_object();
  v2["schema_id"] = "trip_v2";
  v2["keys"].as_array()[0].as_object()["key_name"] = "town";
  ASSERT_EQ(put_json("/scenarios/trip/versions/2.0.0", bj::serialize(v2)).status, 201);
  const std::string url = "http://127.0.0.1:" + std::to_string(server_->port);
  using schemagate::testing::run_command;

  // V1 passes; V2 needs signed mappings between every accepted pair, which do not exist yet.
  auto out = run_command({SCHEMAGATE_BINARY, "conformance", "--level", "V1", url});
  EXPECT_EQ(out.status, 0) << out.out << out.err;
  EXPECT_NE(out.out.find("PASS  V1  §3.2"), std::string::npos) << out.out;
  out = run_command({SCHEMAGATE_BINARY, "conformance", "--level", "V2", url});
  EXPECT_EQ(out.status, 1) << out.out;
  EXPECT_NE(out.out.find("FAIL  V2"), std::string::npos) << out.out;
  ASSERT_EQ(put_json("/mappings/trip/1.0.0/2.0.0",
                     R"({"direction":"bidirectional","operations":[
                        {"op":"rename","from":"/city","to":"/town"}],
                        "examples":[{"city":"Oslo","nights":2}]})")
                .status,
            201);
  out = run_command({SCHEMAGATE_BINARY, "conformance", "--level", "V3", url});
  EXPECT_EQ(out.status, 0) << out.out << out.err;
  EXPECT_NE(out.out.find("conformant at level V3"), std::string::npos) << out.out;

  // compat on two template files: breaking, and the version numbers decide the exit status.
  const auto a = dir_ / "v1.json", b = dir_ / "v2.json";
  std::ofstream(a) << kTemplateV1;
  std::ofstream(b) << bj::serialize(v2);
  out = run_command({SCHEMAGATE_BINARY, "compat", a.string(), b.string()});
  EXPECT_EQ(out.status, 1) << out.out;
  EXPECT_NE(out.out.find("BREAKING   input  property_removed"), std::string::npos) << out.out;
  out = run_command({SCHEMAGATE_BINARY, "compat", a.string(), b.string(), "--from-version", "1.0.0",
                     "--to-version", "2.0.0", "--json"});
  EXPECT_EQ(out.status, 0) << out.out;
  EXPECT_EQ(bj::parse(out.out).at("allowed"), true);
  out = run_command({SCHEMAGATE_BINARY, "compat", a.string(), (dir_ / "missing.json").string()});
  EXPECT_EQ(out.status, 2);

  // mapping sign / verify / apply with a key of our own, trusted by nobody but the file.
  const auto key = dir_ / "key.jwk", m = dir_ / "m.json", signed_m = dir_ / "signed.json",
             doc = dir_ / "doc.json", jwk = dir_ / "pub.jwk";
  out = run_command({SCHEMAGATE_BINARY, "mapping", "keygen"});
  ASSERT_EQ(out.status, 0);
  std::ofstream(key) << out.out;
  auto pub = bj::parse(out.out).as_object();
  pub.erase("d");
  std::ofstream(jwk) << bj::serialize(pub);
  std::ofstream(m) << R"({"contract":"trip","from":"1.0.0","to":"2.0.0","direction":"bidirectional",
    "operations":[{"op":"rename","from":"/city","to":"/town"}],"examples":[{"city":"Oslo"}]})";
  out = run_command(
      {SCHEMAGATE_BINARY, "mapping", "sign", "--mapping", m.string(), "--key", key.string()});
  ASSERT_EQ(out.status, 0) << out.err;
  std::ofstream(signed_m) << out.out;
  out = run_command({SCHEMAGATE_BINARY, "mapping", "verify", "--mapping", signed_m.string(),
                     "--jwks", jwk.string()});
  EXPECT_EQ(out.status, 0) << out.out << out.err;
  out = run_command(
      {SCHEMAGATE_BINARY, "mapping", "verify", "--mapping", signed_m.string(), "--jwks", url});
  EXPECT_EQ(out.status, 1) << "not signed by the server: " << out.out;
  EXPECT_NE(out.out.find("not a trusted key"), std::string::npos) << out.out;
  std::ofstream(doc) << R"({"town":"Oslo","nights":2})";
  out = run_command({SCHEMAGATE_BINARY, "mapping", "apply", "--mapping", signed_m.string(),
                     "--reverse", doc.string()});
  ASSERT_EQ(out.status, 0) << out.err;
  EXPECT_EQ(bj::parse(out.out), bj::parse(R"({"nights":2,"city":"Oslo"})"));
  // The server refuses the file's signature until its operator trusts the key.
  auto r = put_json("/mappings/trip/1.0.0/2.0.0", schemagate::util::read_file(signed_m.string()));
  EXPECT_EQ(r.status, 403) << r.body;
  ASSERT_EQ(put_json("/signing/trusted-keys", "{\"jwk\":" + bj::serialize(pub) + "}").status, 200);
  r = put_json("/mappings/trip/1.0.0/2.0.0", schemagate::util::read_file(signed_m.string()));
  EXPECT_EQ(r.status, 200) << r.body;
}

}  // namespace
