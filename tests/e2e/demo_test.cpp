// `schemagate demo`: seed 000's Figure 8 and Figure 5 payloads, sent as a client would, get the
// agents' confirmations.

#include "support/http_client.hpp"
#include "support/process.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <boost/json.hpp>

#include <csignal>
#include <filesystem>
#include <regex>

namespace bj = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using schemagate::testing::HttpClient;
using schemagate::testing::Process;

namespace {

struct Demo {
  std::unique_ptr<Process> process;
  unsigned short port = 0;
  explicit Demo(const fs::path& db) {
    process = std::make_unique<Process>(std::vector<std::string>{
        SCHEMAGATE_BINARY, "demo", "--listen", "127.0.0.1:0", "--db", db.string()});
    if (!process->wait_for_stderr("schemagate listening on", 20s)) {
      ADD_FAILURE() << "demo did not start:\n" << process->stderr_text();
      return;
    }
    std::smatch m;
    const auto err = process->stderr_text();
    if (std::regex_search(err, m, std::regex(R"(schemagate listening on http://[^:]+:(\d+))"))) {
      port = static_cast<unsigned short>(std::stoi(m[1]));
    }
  }
  ~Demo() {
    process->signal(SIGTERM);
    process->wait(20s);
  }
};

TEST(Demo, SeedExamplesWorkWithCurlShapedRequests) {
  const auto dir = fs::temp_directory_path() / ("schemagate-demo-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (int run = 0; run < 2; ++run) {  // a restart on the same database works the same way
    Demo demo(dir / "demo.db");
    HttpClient c("127.0.0.1", demo.port);
    const auto list = bj::parse(c.get("/scenarios").body);
    ASSERT_EQ(list.at("scenarios").as_array().size(), 3u) << "run " << run;

    // Appendix A.1 then A.2 (Figures 6-9).
    const auto tmpl = bj::parse(c.post_json("/sdsi", R"({"method": "get_schema_template",
        "params": {"scenario": "flight_booking", "preferred_language": "en-US"}})")
                                    .body);
    EXPECT_EQ(tmpl.at("schema_id"), "flight_booking_v1");
    const auto booked = c.post_json("/scenarios/flight_booking/payloads", R"({
      "schema_id": "flight_booking_v1",
      "payload": {"origin": "PEK", "destination": "SHA", "departure_date": "2026-05-04",
                  "cabin_class": "business", "passenger_count": 1, "other": "window seat"}})");
    ASSERT_EQ(booked.status, 200) << booked.body;
    const auto b = bj::parse(booked.body);
    EXPECT_EQ(b.at("status"), "confirmed");
    EXPECT_TRUE(b.at("booking_id").as_string().starts_with("BK-20260504-"));
    EXPECT_EQ(b.at("seat").as_string().back(), 'A');  // "window seat" reached the agent
    for (const char* k : {"flight_number", "departure_time", "arrival_time", "total_amount"}) {
      EXPECT_TRUE(b.as_object().contains(k)) << k;
    }

    // §5.2, Figure 5.
    const auto retouched = c.post_json("/scenarios/photo_retouch/payloads", R"({
      "schema_id": "photo_retouch_v2",
      "payload": {"skin_smoothing": 7, "teeth_whitening": true, "background_blur": true,
                  "filter_style": "vintage", "eye_enlargement": false,
                  "other": "increase eye size proportionally"}})");
    ASSERT_EQ(retouched.status, 200) << retouched.body;
    const auto r = bj::parse(retouched.body);
    EXPECT_EQ(r.at("status"), "completed");
    EXPECT_EQ(r.at("applied").at("filter_style"), "vintage");

    // The demo agents are in the registry too: found by describing a need, invoked through the
    // gateway (their operation runs the scenario through the exchange).
    const auto found = bj::parse(
        c.post_json("/agents/search", R"({"query": "touch up a portrait picture"})").body);
    ASSERT_GE(found.at("count").as_int64(), 1) << found;
    EXPECT_EQ(found.at("results").at(0).at("id"), "photo-retouch");
    const auto invoked = c.post_json("/agents/photo-retouch/invoke",
                                     R"({"skin_smoothing": 3, "filter_style": "warm"})");
    ASSERT_EQ(invoked.status, 200) << invoked.body;
    EXPECT_EQ(bj::parse(invoked.body).at("applied").at("filter_style"), "warm");
    EXPECT_EQ(bj::parse(c.post_json("/agents/search", R"({"query": "fly to Shanghai"})").body)
                  .at("results")
                  .at(0)
                  .at("id"),
              "flight-booking");

    // The agents' own checks still hold behind the gateway.
    EXPECT_EQ(c.post_json("/scenarios/photo_retouch/payloads",
                          R"({"schema_id":"photo_retouch_v2","payload":{"skin_smoothing":11}})")
                  .status,
              400);
  }
}

}  // namespace
