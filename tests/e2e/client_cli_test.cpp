// The client CLI against a running server: what a person reads, what a script parses, and the
// exit codes both rely on.

#include "support/process.hpp"
#include "support/server_process.hpp"
#include "support/test_agent.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <fstream>

namespace bj = boost::json;
using schemagate::testing::fresh_dir;
using schemagate::testing::run_command;
using schemagate::testing::Server;

namespace {

class ClientCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    server_ = std::make_unique<Server>(
        dir_, std::vector<std::string>{},
        std::map<std::string, std::string>{{"SCHEMAGATE_ADMIN_KEY", kAdmin}});
  }
  schemagate::testing::Completed cli(std::vector<std::string> args, bool with_key = true) {
    std::vector<std::string> argv{SCHEMAGATE_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--server");
    argv.push_back("http://127.0.0.1:" + std::to_string(server_->port));
    if (with_key) {
      argv.push_back("--api-key");
      argv.push_back(kAdmin);
    }
    return run_command(argv);
  }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  static constexpr const char* kAdmin = "client-cli-admin-key-0123456789";
  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
  schemagate::testing::Agent agent_;
};

TEST_F(ClientCli, RegisterListGetSearchInvokeDelete) {
  const auto card = write("card.json", R"({"id": "translator", "name": "French translator",
    "description": "Translates English text into French.", "capabilities": ["translation"],
    "endpoint": ")" + agent_.url("/translate") +
                                           R"(",
    "operations": [{"name": "translate", "input_schema": {"type": "object",
      "properties": {"text": {"type": "string", "maxLength": 20}}, "required": ["text"],
      "additionalProperties": false}}]})");
  const auto reg = cli({"agents", "register", card});
  ASSERT_EQ(reg.status, 0) << reg.err;
  EXPECT_EQ(reg.out, "registered translator\n");
  EXPECT_EQ(cli({"agents", "register", card}).status, 1) << "a second POST of the id conflicts";
  EXPECT_EQ(cli({"agents", "register", card, "--replace"}).status, 0);

  const auto table = cli({"agents", "list"});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(table.out.rfind("ID ", 0), 0u) << table.out;
  EXPECT_NE(table.out.find("translator  French translator  translation"), std::string::npos)
      << table.out;
  const auto listed = cli({"agents", "list", "--json"});
  EXPECT_EQ(bj::parse(listed.out).at("agents").as_array()[0].at("id"), "translator");

  const auto shown = cli({"agents", "get", "translator"});
  EXPECT_NE(shown.out.find("operation translate 1.0.0"), std::string::npos) << shown.out;

  const auto found = cli({"search", "put this sentence in French", "--json"});
  ASSERT_EQ(found.status, 0) << found.err;
  EXPECT_EQ(bj::parse(found.out).at("results").as_array()[0].at("id"), "translator");

  const auto ok = cli({"invoke", "translator", "translate", "--data",
                       "@" + write("in.json", R"({"text": "good morning"})"), "--json"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(bj::parse(ok.out).at("translated_text"), "[fr] good morning");

  // Refused by the gateway: exit 1, every violation on its own line, nothing on stdout.
  const auto bad = cli({"invoke", "translator", "translate", "--data",
                        R"({"text": "a sentence far too long", "x": 1})"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.out, "");
  EXPECT_NE(bad.err.find("\n  /text: must be at most 20 characters long, got 23"),
            std::string::npos)
      << bad.err;
  EXPECT_NE(bad.err.find("\n  /x: property \"x\" is not allowed (additionalProperties)"),
            std::string::npos)
      << bad.err;
  EXPECT_EQ(cli({"invoke", "translator", "--data", "{not json"}).status, 2);

  EXPECT_EQ(cli({"agents", "delete", "translator"}).status, 0);
  const auto gone = cli({"agents", "get", "translator"});
  EXPECT_EQ(gone.status, 1);
  EXPECT_NE(gone.err.find("HTTP 404 NotFound"), std::string::npos) << gone.err;
}

TEST_F(ClientCli, TemplatesPublishListGet) {
  const auto tmpl = write("t.json", R"({"schema_id": "cab_v1", "scenario": "cab", "keys": [
    {"key_name": "pickup", "key_type": "string", "required": true,
     "semantic_description": "Where the cab picks you up."},
    {"key_name": "seats", "key_type": "integer", "required": false,
     "semantic_description": "How many seats.", "default_value": 1}]})");
  const auto pub = cli({"templates", "publish", "cab", "1.0.0", tmpl});
  ASSERT_EQ(pub.status, 0) << pub.err;
  EXPECT_EQ(pub.out, "published cab 1.0.0\n");
  EXPECT_NE(cli({"templates", "list"}).out.find("cab       1.0.0   1.0.0"), std::string::npos);
  const auto got = cli({"templates", "get", "cab"});
  EXPECT_NE(got.out.find("pickup  string   yes       Where the cab picks you up."),
            std::string::npos)
      << got.out;
  EXPECT_EQ(bj::parse(cli({"templates", "get", "cab", "--json"}).out).at("version"), "1.0.0");
}

TEST_F(ClientCli, ExitCodesForNoKeyUnreachableAndUsage) {
  const auto card = write("card.json", R"({"id": "a", "name": "A", "description": "d",
    "endpoint": "http://127.0.0.1:9/x", "inputs": {"text": "string"}})");
  const auto no_key = cli({"agents", "register", card}, false);
  EXPECT_EQ(no_key.status, 1);
  EXPECT_NE(no_key.err.find("HTTP 401"), std::string::npos) << no_key.err;

  const auto down =
      run_command({SCHEMAGATE_BINARY, "agents", "list", "--server", "http://127.0.0.1:1"});
  EXPECT_EQ(down.status, 3);
  EXPECT_NE(down.err.find("cannot reach http://127.0.0.1:1"), std::string::npos) << down.err;
  EXPECT_EQ(run_command({SCHEMAGATE_BINARY, "agents"}).status, 2) << "a subcommand is required";
  const auto help = run_command({SCHEMAGATE_BINARY, "invoke", "--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--data"), std::string::npos);
  EXPECT_NE(help.out.find("Exit codes"), std::string::npos);
}

}  // namespace
