// Starts the real `schemagate serve` on a free loopback port and talks HTTP to it.

#include "support/http_client.hpp"
#include "support/process.hpp"
#include "support/server_process.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using schemagate::testing::body_json;
using schemagate::testing::error_code;
using schemagate::testing::error_message;
using schemagate::testing::fresh_dir;
using schemagate::testing::HttpClient;
using schemagate::testing::Process;
using schemagate::testing::Server;

namespace {

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  fs::path dir_;
};

TEST_F(ServerTest, HealthAndReadinessReportOk) {
  if (schemagate::testing::on_postgres()) GTEST_SKIP() << "about the SQLite file";
  Server s(dir_);
  HttpClient c("127.0.0.1", s.port);
  const auto health = c.get("/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.header("content-type"), "application/json");
  EXPECT_EQ(body_json(health).at("status"), "ok");

  const auto ready = c.get("/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(body_json(ready).at("status"), "ready");
  EXPECT_EQ(body_json(ready).at("store").at("backend"), "sqlite");
  // The build's word vectors (scripts/install-deps.sh) are found: hybrid ranking. A start
  // without them says "lexical" here rather than only in a log line.
  EXPECT_EQ(body_json(ready).at("search").at("ranking"), "hybrid");
  EXPECT_EQ(body_json(ready).at("search").at("embedder"), "glove-100d-sif1");
  EXPECT_TRUE(fs::exists(dir_ / "schemagate.db"));

  Server lexical(fresh_dir("lexical-readiness"), {"--embedder", "none"});
  HttpClient l("127.0.0.1", lexical.port);
  EXPECT_EQ(body_json(l.get("/readyz")).at("search").at("ranking"), "lexical");
}

TEST_F(ServerTest, UnknownRouteIs404AndWrongMethodIs405WithAllow) {
  Server s(dir_);
  HttpClient c("127.0.0.1", s.port);
  const auto missing = c.get("/no/such/thing");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(error_code(missing), "NotFound");
  EXPECT_NE(error_message(missing).find("/no/such/thing"), std::string::npos);

  const auto wrong = c.request("DELETE", "/healthz");
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(error_code(wrong), "MethodNotAllowed");
  EXPECT_EQ(wrong.header("allow"), "GET");
}

TEST_F(ServerTest, MalformedJsonNamesLineAndColumn) {
  Server s(dir_);
  HttpClient c("127.0.0.1", s.port);
  const auto r = c.post_json("/jcs", "{\n  \"a\": 1,\n  \"b\": tru\n}");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_code(r), "InvalidInput");
  const auto details = body_json(r).at("error").at("details");
  EXPECT_EQ(details.at("line").to_number<int>(), 3);
  EXPECT_EQ(details.at("column").to_number<int>(), 8);
  EXPECT_NE(error_message(r).find("invalid literal 'tru'"), std::string::npos) << error_message(r);
  EXPECT_NE(error_message(r).find("line 3, column 8"), std::string::npos) << error_message(r);
}

TEST_F(ServerTest, CanonicalizesJsonBodies) {
  Server s(dir_);
  HttpClient c("127.0.0.1", s.port);
  const auto r = c.post_json("/jcs", R"({"b": [1.0, 1e21, 0.000001], "a": "\u00e9"})");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"a\":\"\xc3\xa9\",\"b\":[1,1e+21,0.000001]}");
}

TEST_F(ServerTest, WrongContentTypeIs415) {
  Server s(dir_);
  HttpClient c("127.0.0.1", s.port);
  const auto r = c.request("POST", "/jcs", "{}", {{"Content-Type", "text/plain"}});
  EXPECT_EQ(r.status, 415);
  EXPECT_EQ(error_code(r), "UnsupportedMediaType");
  EXPECT_NE(error_message(r).find("text/plain"), std::string::npos);
  // Parameters and +json media types are fine.
  EXPECT_EQ(
      c.request("POST", "/jcs", "{}", {{"Content-Type", "application/json; charset=utf-8"}}).status,
      200);
}

TEST_F(ServerTest, BodyOverTheLimitIs413) {
  Server s(dir_, {"--max-body-bytes", "64"});
  HttpClient c("127.0.0.1", s.port);
  const std::string big = "[\"" + std::string(100, 'x') + "\"]";
  const auto r = c.post_json("/jcs", big);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(error_code(r), "PayloadTooLarge");
  EXPECT_NE(error_message(r).find("64"), std::string::npos);
  HttpClient again("127.0.0.1", s.port);
  EXPECT_EQ(again.post_json("/jcs", "[1]").status, 200);
}

TEST_F(ServerTest, NestingBeyondTheLimitIsRejected) {
  Server s(dir_, {"--max-json-depth", "8"});
  HttpClient c("127.0.0.1", s.port);
  const auto ok = c.post_json("/jcs", std::string(8, '[') + std::string(8, ']'));
  EXPECT_EQ(ok.status, 200);
  const auto deep = c.post_json("/jcs", std::string(9, '[') + std::string(9, ']'));
  EXPECT_EQ(deep.status, 400);
  EXPECT_NE(error_message(deep).find("limit of 8"), std::string::npos) << error_message(deep);
}

TEST_F(ServerTest, MalformedHttpGetsAnErrorEnvelope) {
  Server s(dir_);
  const auto reply = schemagate::testing::raw_exchange(s.port, "NOT HTTP AT ALL\r\n\r\n");
  EXPECT_NE(reply.find("400"), std::string::npos) << reply;
  EXPECT_NE(reply.find("\"code\":\"InvalidInput\""), std::string::npos) << reply;
}

TEST_F(ServerTest, KeepAliveReusesOneConnection) {
  Server s(dir_);
  HttpClient c("127.0.0.1", s.port);
  ASSERT_EQ(c.get("/healthz").status, 200);
  const auto port = c.local_port();
  ASSERT_TRUE(c.connected());
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(c.get("/healthz").status, 200);
  EXPECT_EQ(c.local_port(), port);
  // Connection: close is honoured.
  const auto closing = c.request("GET", "/healthz", {}, {{"Connection", "close"}});
  EXPECT_EQ(closing.status, 200);
  EXPECT_FALSE(c.connected());
}

TEST_F(ServerTest, MetricsCountRequestsByRouteAndStatus) {
  Server s(dir_);
  HttpClient c("127.0.0.1", s.port);
  for (int i = 0; i < 3; ++i)
    c.get("/healthz");
  c.get("/missing");
  const auto m = c.get("/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_NE(m.header("content-type").find("text/plain"), std::string::npos);
  EXPECT_NE(
      m.body.find(
          "schemagate_http_requests_total{method=\"GET\",route=\"/healthz\",status=\"200\"} 3"),
      std::string::npos)
      << m.body;
  EXPECT_NE(
      m.body.find(
          "schemagate_http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"} 1"),
      std::string::npos);
  EXPECT_NE(m.body.find("# TYPE schemagate_http_request_duration_seconds histogram"),
            std::string::npos);
  EXPECT_NE(
      m.body.find(
          "schemagate_http_request_duration_seconds_bucket{route=\"/healthz\",le=\"+Inf\"} 3"),
      std::string::npos);
  EXPECT_NE(m.body.find("schemagate_http_request_duration_seconds_count{route=\"/healthz\"} 3"),
            std::string::npos);
}

TEST_F(ServerTest, WritesOneJsonAccessLogLinePerRequest) {
  Server s(dir_);
  {
    HttpClient c("127.0.0.1", s.port);
    c.get("/healthz");
    c.get("/nowhere?x=1");
  }
  s.process->signal(SIGTERM);
  ASSERT_EQ(s.process->wait(20s), 0);
  std::istringstream lines(s.process->stdout_text());
  std::vector<boost::json::object> entries;
  for (std::string line; std::getline(lines, line);) {
    entries.push_back(boost::json::parse(line).as_object());
  }
  ASSERT_EQ(entries.size(), 2u) << s.process->stdout_text();
  EXPECT_EQ(entries[0].at("method"), "GET");
  EXPECT_EQ(entries[0].at("route"), "/healthz");
  EXPECT_EQ(entries[0].at("status"), 200);
  EXPECT_EQ(entries[1].at("target"), "/nowhere?x=1");
  EXPECT_EQ(entries[1].at("status"), 404);
  EXPECT_TRUE(entries[1].contains("duration_us"));
  EXPECT_TRUE(entries[1].contains("ts"));
}

TEST_F(ServerTest, SigtermFinishesTheRequestInFlightThenExits) {
  Server s(dir_);
  // An idle keep-alive connection must not hold up the shutdown.
  HttpClient idle("127.0.0.1", s.port);
  ASSERT_EQ(idle.get("/healthz").status, 200);

  const std::string body = R"({"z":1,"a":2})";
  const std::string head =
      "POST /jcs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n";
  std::string reply;
  std::thread client([&] {
    reply =
        schemagate::testing::raw_exchange(s.port, head + body.substr(0, 5), body.substr(5), 800ms);
  });
  std::this_thread::sleep_for(300ms);  // the header is in: the request is in flight
  s.process->signal(SIGTERM);
  client.join();
  EXPECT_NE(reply.find("HTTP/1.1 200"), std::string::npos) << reply;
  EXPECT_NE(reply.find("{\"a\":2,\"z\":1}"), std::string::npos) << reply;
  EXPECT_NE(reply.find("Connection: close"), std::string::npos) << reply;
  EXPECT_EQ(s.process->wait(20s), 0) << s.process->stderr_text();
  EXPECT_NE(s.process->stderr_text().find("server stopped"), std::string::npos);
}

TEST_F(ServerTest, LimitsComeFromEnvironmentAndConfigFile) {
  {
    Server s(dir_, {}, {{"SCHEMAGATE_MAX_BODY_BYTES", "10"}});
    HttpClient c("127.0.0.1", s.port);
    EXPECT_EQ(c.post_json("/jcs", "[1,2,3,4,5,6,7]").status, 413);
  }
  {
    const auto cfg = dir_ / "schemagate.toml";
    std::ofstream(cfg) << "[serve]\nmax-body-bytes = 12\nmax-json-depth = 2\n";
    Server s(dir_, {"--config", cfg.string()});
    HttpClient c("127.0.0.1", s.port);
    EXPECT_EQ(c.post_json("/jcs", "[1,2,3,4,5,6,7]").status, 413);
    EXPECT_EQ(c.post_json("/jcs", "[[[1]]]").status, 400);
    EXPECT_EQ(c.post_json("/jcs", "[[1]]").status, 200);
  }
  {
    const auto cfg = dir_ / "typo.toml";
    std::ofstream(cfg) << "[serve]\nmax-bodyy-bytes = 12\n";
    const auto r = schemagate::testing::run_command(
        {SCHEMAGATE_BINARY, "serve", "--config", cfg.string(), "--listen", "127.0.0.1:0"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("max-bodyy-bytes"), std::string::npos) << r.err;
  }
}

TEST_F(ServerTest, ServesHttpsWithTheGivenCertificate) {
  const auto cert = dir_ / "cert.pem";
  const auto key = dir_ / "key.pem";
  const auto gen = schemagate::testing::run_command(
      {"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
       "-nodes", "-keyout", key.string(), "-out", cert.string(), "-days", "1", "-subj",
       "/CN=localhost"});
  ASSERT_EQ(gen.status, 0) << gen.err;
  Server s(dir_, {"--tls-cert", cert.string(), "--tls-key", key.string()});
  EXPECT_NE(s.process->stderr_text().find("https://"), std::string::npos);
  HttpClient c("127.0.0.1", s.port, /*tls=*/true);
  const auto r = c.get("/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(body_json(r).at("status"), "ok");
}

TEST_F(ServerTest, RefusesToStartWithAMissingTlsKey) {
  Process p({SCHEMAGATE_BINARY, "serve", "--listen", "127.0.0.1:0", "--db",
             (dir_ / "x.db").string(), "--tls-cert", (dir_ / "none.pem").string(), "--tls-key",
             (dir_ / "none.key").string()});
  EXPECT_EQ(p.wait(20s), 1);
  EXPECT_NE(p.stderr_text().find("none.pem"), std::string::npos) << p.stderr_text();
}

TEST_F(ServerTest, RefusesADatabaseFromANewerVersion) {
  if (schemagate::testing::on_postgres()) GTEST_SKIP() << "about the SQLite file";
  const auto db = dir_ / "schemagate.db";
  {
    Server s(dir_);  // creates and migrates the file
    s.process->signal(SIGTERM);
    ASSERT_EQ(s.process->wait(20s), 0);
  }
  const auto bump = schemagate::testing::run_command(
      {"/usr/bin/sqlite3", db.string(),
       "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)"});
  ASSERT_EQ(bump.status, 0) << bump.err;
  Process p({SCHEMAGATE_BINARY, "serve", "--listen", "127.0.0.1:0", "--db", db.string()});
  EXPECT_EQ(p.wait(20s), 1);
  EXPECT_NE(p.stderr_text().find("schema version 999"), std::string::npos) << p.stderr_text();
  EXPECT_NE(p.stderr_text().find("newer"), std::string::npos);
}

TEST_F(ServerTest, RejectsAJsonDepthBeyondTheSafeCeiling) {
  const auto r = schemagate::testing::run_command({SCHEMAGATE_BINARY, "serve", "--listen",
                                                   "127.0.0.1:0", "--db", (dir_ / "x.db").string(),
                                                   "--max-json-depth", "100000"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("between 1 and 4096"), std::string::npos) << r.err;
}

TEST_F(ServerTest, RejectsABadListenAddress) {
  const auto r = schemagate::testing::run_command(
      {SCHEMAGATE_BINARY, "serve", "--listen", "localhost", "--db", (dir_ / "x.db").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("HOST:PORT"), std::string::npos) << r.err;
}

}  // namespace

namespace {

// The web console is served by the server itself, from files compiled in: no CDN, a strict
// Content-Security-Policy, and a first page under 300 KB.
TEST_F(ServerTest, TheConsoleIsServedFromTheBinary) {
  Server s(dir_);
  HttpClient c("127.0.0.1", s.port);
  const auto page = c.get("/ui/");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(page.header("content-security-policy").find("default-src 'self'"), std::string::npos);
  EXPECT_NE(page.body.find(R"(<script type="module" src="app.js">)"), std::string::npos);
  std::size_t total = page.body.size();
  for (const char* file : {"app.js", "form.js", "validate.js", "chart.js", "style.css"}) {
    const auto r = c.get(std::string("/ui/") + file);
    ASSERT_EQ(r.status, 200) << file;
    EXPECT_EQ(r.body.find("https://"), std::string::npos) << file << " fetches from elsewhere";
    EXPECT_EQ(r.body.find("http://"), std::string::npos) << file << " fetches from elsewhere";
    total += r.body.size();
    EXPECT_EQ(
        c.request("GET", std::string("/ui/") + file, "", {{"If-None-Match", r.header("etag")}})
            .status,
        304);
  }
  EXPECT_LT(total, 300u * 1024) << "the first page stays small";
  EXPECT_EQ(c.get("/ui/app.js").header("content-type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(c.get("/ui/missing.js").status, 404);
  const auto bare = c.get("/ui");
  EXPECT_EQ(bare.status, 308);
  EXPECT_EQ(bare.header("location"), "/ui/");
}

}  // namespace
