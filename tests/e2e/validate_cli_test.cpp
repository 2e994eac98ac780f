// `schemagate validate`: exit codes and JSON output as a script would use them.

#include "support/process.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>

namespace fs = std::filesystem;
using schemagate::testing::run_command;

namespace {

class ValidateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("schemagate-validate-" + std::to_string(::getpid())) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write("schema.json", R"({"type":"object","required":["city"],
        "properties":{"city":{"type":"string"},"seats":{"type":"integer","minimum":1}}})");
  }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  schemagate::testing::Completed validate(std::vector<std::string> args) {
    std::vector<std::string> argv{SCHEMAGATE_BINARY, "validate", "--schema",
                                  (dir_ / "schema.json").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
  }
  fs::path dir_;
};

TEST_F(ValidateCli, ValidInstanceExitsZero) {
  const auto r = validate({"--instance", write("ok.json", R"({"city":"Oslo","seats":2})")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(boost::json::parse(r.out), boost::json::parse(R"({"valid":true})"));
}

TEST_F(ValidateCli, InvalidInstanceExitsOneWithBasicErrors) {
  const auto r = validate({"--instance", write("bad.json", R"({"seats":0})")});
  EXPECT_EQ(r.status, 1);
  const auto out = boost::json::parse(r.out);
  EXPECT_EQ(out.at("valid"), false);
  const auto& errors = out.at("errors").as_array();
  ASSERT_EQ(errors.size(), 2u);
  std::map<std::string, std::string> by_keyword;
  for (const auto& e : errors) {
    by_keyword[std::string(e.at("keywordLocation").as_string())] =
        std::string(e.at("instanceLocation").as_string()) + " " +
        std::string(e.at("error").as_string());
  }
  EXPECT_EQ(by_keyword["/required"], " missing required property \"city\"");
  EXPECT_EQ(by_keyword["/properties/seats/minimum"], "/seats must be >= 1, got 0");
}

TEST_F(ValidateCli, JsonLinesGiveOneResultPerLine) {
  const auto file = write("many.jsonl", "{\"city\":\"a\"}\n\n{\"city\":1}\n{\"city\":\"b\"}\n");
  const auto r = validate({"--instances", file, "--output", "flag"});
  EXPECT_EQ(r.status, 1);
  std::istringstream lines(r.out);
  std::vector<boost::json::value> results;
  for (std::string line; std::getline(lines, line);)
    results.push_back(boost::json::parse(line));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0], boost::json::parse(R"({"valid":true,"line":1})"));
  EXPECT_EQ(results[1], boost::json::parse(R"({"valid":false,"line":3})"));
  EXPECT_EQ(results[2], boost::json::parse(R"({"valid":true,"line":4})"));
}

TEST_F(ValidateCli, SchemaErrorsExitTwoAndNameTheProblem) {
  write("schema.json", R"({"properties":{"a":{"$ref":"https://example.com/a.json"}}})");
  const auto r = validate({"--instance", write("i.json", "{}")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("https://example.com/a.json"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(ValidateCli, RefsResolveAgainstRegisteredFiles) {
  write("schema.json", R"({"properties":{"a":{"$ref":"https://example.com/a.json"}}})");
  const auto a = write("a.json", R"({"type":"string"})");
  const auto ok = validate(
      {"--instance", write("i.json", R"({"a":"x"})"), "--ref", "https://example.com/a.json=" + a});
  EXPECT_EQ(ok.status, 0) << ok.err;
  const auto bad = validate(
      {"--instance", write("j.json", R"({"a":1})"), "--ref", "https://example.com/a.json=" + a});
  EXPECT_EQ(bad.status, 1);
}

TEST_F(ValidateCli, AssertFormatMakesFormatsAssertions) {
  write("schema.json", R"({"format":"email"})");
  const auto instance = write("i.json", R"("not-an-email")");
  EXPECT_EQ(validate({"--instance", instance}).status, 0);
  EXPECT_EQ(validate({"--instance", instance, "--assert-format"}).status, 1);
}

TEST_F(ValidateCli, UsageErrorsExitTwo) {
  EXPECT_EQ(validate({}).status, 2);
  EXPECT_EQ(validate({"--instance", "a", "--instances", "b"}).status, 2);
  EXPECT_EQ(validate({"--instance", (dir_ / "missing.json").string()}).status, 2);
  const auto broken = validate({"--instance", write("broken.json", "{\"a\":")});
  EXPECT_EQ(broken.status, 2);
  EXPECT_NE(broken.err.find("line 1"), std::string::npos) << broken.err;
}

}  // namespace
