// ExchangeService without a socket: a real SQLite store and a clock the test moves.

#include "exchange/exchange_service.hpp"
#include "http/client.hpp"
#include "json/parse.hpp"
#include "server/http_agent_transport.hpp"
#include "signing/key_store.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/contract_error.hpp"
#include "versioning/versioning_service.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace bj = boost::json;
namespace fs = std::filesystem;
using namespace schemagate;
using exchange::ExchangeError;

namespace {

class ExchangeServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("schemagate-exchange-" + std::to_string(::getpid())) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_ = store::open_store({(dir_ / "db.sqlite").string()}, clock_);
    service_ = std::make_unique<exchange::ExchangeService>(*store_, clock_, transport_, limits_);
    // No endpoint: payloads are validated and completed, not forwarded.
    service_->publish("photo_retouch", "2.0.0", json::parse(R"({
      "schema_id": "photo_retouch_v2", "scenario": "photo_retouch",
      "keys": [
        {"key_name": "skin_smoothing", "key_type": "integer", "required": false, "default_value": 0,
         "minimum": 0, "maximum": 10, "semantic_description": "Skin smoothing intensity, 0-10."},
        {"key_name": "filter_style", "key_type": "string", "required": false, "default_value": "none",
         "enum": ["none", "vintage", "cinematic", "warm", "cool"], "semantic_description": "Filter style."}
      ]})"));
  }
  fs::path dir_;
  util::ManualClock clock_;
  http::Client client_;
  server::HttpAgentTransport transport_{client_};
  exchange::ExchangeLimits limits_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<exchange::ExchangeService> service_;
};

TEST_F(ExchangeServiceTest, OtherIsRecordedWithClientAndTime) {
  service_->submit(
      "photo_retouch_v2",
      json::parse(R"({"filter_style":"vintage","other":"increase eye size\tproportionally"})"),
      "client-7");
  service_->submit("photo_retouch_v2", json::parse(R"({"other":"   "})"),
                   "client-8");  // blank: dropped
  const auto events = store_->read_events("other/photo_retouch", 0, 10);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].body.at("text"), "increase eye size proportionally");
  EXPECT_EQ(events[0].body.at("client_id"), "client-7");
  EXPECT_EQ(events[0].body.at("schema_id"), "photo_retouch_v2");
  EXPECT_EQ(events[0].body.at("at").as_string(), util::format_rfc3339(clock_.now()).c_str());
}

TEST_F(ExchangeServiceTest, DefaultsCompleteThePayload) {
  const auto r =
      service_->submit("photo_retouch_v2", json::parse(R"({"filter_style":"warm"})"), "");
  EXPECT_EQ(r.at("payload").at("skin_smoothing"), 0);
  EXPECT_EQ(r.at("payload").at("filter_style"), "warm");
  EXPECT_EQ(r.at("applied_defaults"), json::parse(R"(["skin_smoothing"])"));
}

TEST_F(ExchangeServiceTest, PatchesExpire) {
  const auto patch = service_->post_patch("photo_retouch", json::parse(R"({
      "parent_schema_id": "photo_retouch_v2", "ttl_seconds": 3600,
      "new_keys": [{"key_name": "eye_size_scale", "key_type": "number", "required": false,
                    "minimum": 1.0, "maximum": 1.5, "semantic_description": "Eye size scale."}]})"));
  EXPECT_EQ(service_->updates("photo_retouch", "", std::nullopt).at("patches").as_array().size(),
            1u);
  const auto accepted =
      service_->submit("photo_retouch_v2", json::parse(R"({"eye_size_scale":1.2})"), "");
  EXPECT_TRUE(accepted.contains("schema_update_suggestion"));
  clock_.advance(std::chrono::hours(2));
  EXPECT_TRUE(
      service_->updates("photo_retouch", "", std::nullopt).at("patches").as_array().empty());
  try {
    service_->submit("photo_retouch_v2", json::parse(R"({"eye_size_scale":1.2})"), "");
    FAIL() << "an expired patch key was accepted";
  } catch (const ExchangeError& e) {
    EXPECT_EQ(e.kind(), ExchangeError::Kind::invalid_payload);
  }
  EXPECT_EQ(patch.at("expires_at_ms").as_int64() - patch.at("timestamp_ms").as_int64(), 3'600'000);
}

TEST_F(ExchangeServiceTest, SanitizeOther) {
  EXPECT_EQ(service_->sanitize_other("a\x01\x7f"
                                     "b"),
            "ab");
  EXPECT_EQ(service_->sanitize_other("line\none\r\ntwo"), "line one two");
  EXPECT_EQ(service_->sanitize_other("x\xc2\x85y"), "xy");  // U+0085, a C1 control
  EXPECT_EQ(service_->sanitize_other("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(service_->sanitize_other(std::string(5000, 'a')).size(), limits_.max_other_chars);
  EXPECT_EQ(service_->sanitize_other(" \t\n "), "");
}

TEST_F(ExchangeServiceTest, PublishedTemplatesSurviveARestart) {
  store_.reset();
  store_ = store::open_store({(dir_ / "db.sqlite").string()}, clock_);
  exchange::ExchangeService again(*store_, clock_, transport_, limits_);
  const auto n = again.negotiate("photo_retouch", "en", std::nullopt);
  EXPECT_EQ(n.body.at("schema_id"), "photo_retouch_v2");
  EXPECT_EQ(n.body.at("keys").as_array().size(), 3u);  // + other
}

// Seed 003 §3.5 across the date, on the injected clock: a deprecated version is announced on
// every answer, leaves `accepts` on its date, stays readable, and is served by translation only
// where the client permits an upgrade.
TEST_F(ExchangeServiceTest, ADeprecatedVersionIsWithdrawnOnItsDate) {
  signing::KeyStore keys(*store_, clock_);
  versioning::VersioningService versioning(*store_, clock_, keys);
  service_->use_versioning(&versioning);
  service_->backfill_versions();
  service_->publish("photo_retouch", "3.0.0", json::parse(R"({
      "schema_id": "photo_retouch_v3", "scenario": "photo_retouch",
      "keys": [{"key_name": "smoothing", "key_type": "integer", "required": false,
                "minimum": 0, "maximum": 10, "semantic_description": "Skin smoothing, 0-10."}]})"));
  versioning.put_mapping("photo_retouch", "2.0.0", "3.0.0", json::parse(R"({"operations":[
      {"op": "rename", "from": "/skin_smoothing", "to": "/smoothing"},
      {"op": "remove", "path": "/filter_style"}]})"));
  const auto day = std::chrono::hours(24);
  versioning.deprecate("photo_retouch", "2.0.0", util::format_rfc3339(clock_.now() + 100 * day));
  auto before = service_->submit("photo_retouch_v2", json::parse(R"({"skin_smoothing":4})"), "");
  EXPECT_EQ(before.at("schema_version"), "2.0.0");
  EXPECT_TRUE(before.contains("deprecation_warning"));

  clock_.advance(101 * day);
  try {
    service_->submit("photo_retouch_v2", json::parse(R"({"skin_smoothing":4})"), "");
    FAIL() << "2.0.0 was withdrawn";
  } catch (const util::ContractError& e) {
    EXPECT_EQ(e.code(), "UnsupportedSchemaVersion");
    EXPECT_EQ(e.details().at("accepts"), json::parse(R"(["3.0.0"])"));
  }
  EXPECT_THROW(service_->negotiate("photo_retouch", "", std::string("2.0.0")), util::ContractError);
  EXPECT_EQ(service_->negotiate("photo_retouch", "", std::string("2.0.0"), {}, false)
                .body.at("schema_id"),
            "photo_retouch_v2")
      << "a withdrawn version stays readable";
  exchange::VersionRequest upgrade;
  upgrade.permit_upgrade = true;
  const auto upgraded =
      service_->submit("photo_retouch_v2", json::parse(R"({"skin_smoothing":4})"), "", {}, upgrade);
  EXPECT_EQ(upgraded.at("schema_version"), "3.0.0");
  EXPECT_EQ(upgraded.at("upgraded_from"), "2.0.0");
  EXPECT_EQ(upgraded.at("payload"), json::parse(R"({"smoothing":4})"));
  EXPECT_EQ(upgraded.at("schema_id"), "photo_retouch_v3");
}

}  // namespace
