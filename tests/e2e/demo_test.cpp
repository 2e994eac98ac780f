// `schemagate demo`: seed 000's Figure 8 and Figure 5 payloads, sent as a client would, get the
// agents' confirmations.

#include "support/http_client.hpp"
#include "support/process.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <boost/json.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

namespace bj = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using schemagate::testing::HttpClient;
using schemagate::testing::Process;

namespace {

struct Demo {
  std::unique_ptr<Process> process;
  unsigned short port = 0;
  explicit Demo(const fs::path& db, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv{SCHEMAGATE_BINARY, "demo", "--listen",
                                  "127.0.0.1:0",     "--db", db.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process = std::make_unique<Process>(argv);
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

// Seed 000 §4.3 and §6.2: a patch adds an optional key that the demo's flight agent does not
// know. Its default is never injected and a value a client sends reaches the agent folded into
// `other`, so the agent keeps working for clients with and without the new key.
TEST(Demo, APatchNeverBreaksAnAgentThatDoesNotKnowItsKeys) {
  const auto dir =
      fs::temp_directory_path() / ("schemagate-demo-patch-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Demo demo(dir / "demo.db");
  HttpClient c("127.0.0.1", demo.port);
  const auto patch = c.post_json("/scenarios/flight_booking/patches", R"({
      "parent_schema_id": "flight_booking_v1",
      "new_keys": [{"key_name": "seat_preference", "key_type": "string", "required": false,
                    "default_value": "no preference", "enum": ["window", "aisle", "no preference"],
                    "semantic_description": "Preferred seat: window, aisle or no preference."}]})");
  ASSERT_EQ(patch.status, 201) << patch.body;
  EXPECT_FALSE(bj::parse(c.get("/scenarios/flight_booking/endpoint").body)
                   .at("accepts_patch_keys")
                   .as_bool());

  // Figure 8, as before the patch: booked, the window seat from `other`, no injected default.
  auto r = c.post_json("/scenarios/flight_booking/payloads", R"({
      "schema_id": "flight_booking_v1",
      "payload": {"origin": "PEK", "destination": "SHA", "departure_date": "2026-05-04",
                  "cabin_class": "business", "passenger_count": 1, "other": "window seat"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto b = bj::parse(r.body);
  EXPECT_EQ(b.at("seat").as_string().back(), 'A');
  if (const auto* applied = b.as_object().if_contains("applied_defaults")) {
    for (const auto& k : applied->as_array())
      EXPECT_NE(k, "seat_preference");
  }
  EXPECT_TRUE(b.as_object().contains("schema_update_suggestion"));

  // With the new key: the value reaches the agent as text in `other`.
  r = c.post_json("/scenarios/flight_booking/payloads", R"({
      "schema_id": "flight_booking_v1",
      "payload": {"origin": "PEK", "destination": "SHA", "departure_date": "2026-05-04",
                  "seat_preference": "window"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  b = bj::parse(r.body);
  EXPECT_EQ(b.at("seat").as_string().back(), 'A') << "\"seat_preference: window\" reached it";
  EXPECT_EQ(b.at("folded_into_other"), bj::parse(R"(["seat_preference"])"));

  // Without it, and through the gateway's scenario operation: still served.
  r = c.post_json("/scenarios/flight_booking/payloads", R"({
      "schema_id": "flight_booking_v1",
      "payload": {"origin": "PEK", "destination": "SHA", "departure_date": "2026-05-04"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(bj::parse(r.body).at("seat").as_string().back(), 'C');
  r = c.post_json("/agents/flight-booking/invoke", R"({"origin": "PEK", "destination": "SHA",
      "departure_date": "2026-05-04", "seat_preference": "aisle"})");
  ASSERT_EQ(r.status, 200) << r.body;
  // A value outside the new key's enumeration is still refused before the agent.
  r = c.post_json("/scenarios/flight_booking/payloads", R"({"schema_id": "flight_booking_v1",
      "payload": {"origin": "PEK", "destination": "SHA", "departure_date": "2026-05-04",
                  "seat_preference": "middle"}})");
  EXPECT_EQ(r.status, 400) << r.body;

  // The binding decides: declared as accepting patch keys, the agent gets the key as is (and
  // this demo agent, which checks its own template, refuses it: the failure the fold avoids).
  const auto agent = bj::parse(c.get("/scenarios/flight_booking/endpoint").body).at("endpoint");
  ASSERT_EQ(c.request("PUT", "/scenarios/flight_booking/endpoint",
                      bj::serialize(bj::object{{"endpoint", agent}, {"accepts_patch_keys", true}}),
                      {{"Content-Type", "application/json"}})
                .status,
            200);
  r = c.post_json("/scenarios/flight_booking/payloads", R"({"schema_id": "flight_booking_v1",
      "payload": {"origin": "PEK", "destination": "SHA", "departure_date": "2026-05-04",
                  "seat_preference": "window"}})");
  EXPECT_EQ(r.status, 502) << r.body;
}

// Seed 000 §6.2 through HTTP: what several clients write in `other` becomes an experimental
// key that the pools, the patch feed and the next submissions show.
TEST(Demo, SeatRequestsInOtherBecomeAnExperimentalKey) {
  const auto dir =
      fs::temp_directory_path() / ("schemagate-demo-evolve-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Demo demo(dir / "demo.db", {"--evolution-interval-ms", "100"});
  HttpClient c("127.0.0.1", demo.port);
  const std::vector<std::string> wishes{"window seat please", "an aisle seat",
                                        "window seat",        "aisle seat if possible",
                                        "a window seat",      "aisle seat please"};
  for (std::size_t i = 0; i < wishes.size(); ++i) {
    const auto r = c.request(
        "POST", "/scenarios/flight_booking/payloads",
        bj::serialize(bj::object{{"schema_id", "flight_booking_v1"},
                                 {"payload", bj::object{{"origin", "PEK"},
                                                        {"destination", "SHA"},
                                                        {"departure_date", "2026-05-04"},
                                                        {"other", wishes[i]}}}}),
        {{"Content-Type", "application/json"}, {"X-Client-Id", "client-" + std::to_string(i)}});
    ASSERT_EQ(r.status, 200) << r.body;
  }
  bj::value state;
  for (int i = 0; i < 100; ++i) {
    state = bj::parse(c.get("/scenarios/flight_booking/evolution").body);
    if (!state.at("keys").as_array().empty()) break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(state.at("keys").as_array().size(), 1u) << state;
  EXPECT_EQ(state.at("keys").at(0).at("key_name"), "seat_preference");
  EXPECT_EQ(state.at("keys").at(0).at("state"), "experimental");
  EXPECT_EQ(state.at("clusters").at(0).at("distinct_clients"), 6);
  const auto updates = bj::parse(c.get("/scenarios/flight_booking/updates").body);
  EXPECT_EQ(updates.at("patches").at(0).at("new_keys").at(0).at("key_name"), "seat_preference");
  // The next client uses the key; the demo agent, which does not know it, reads it from `other`.
  const auto r = c.post_json("/scenarios/flight_booking/payloads", R"({
      "schema_id": "flight_booking_v1",
      "payload": {"origin": "PEK", "destination": "SHA", "departure_date": "2026-05-04",
                  "seat_preference": "window"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(bj::parse(r.body).at("seat").as_string().back(), 'A');
}

// `schemagate evolve simulate`: seat requests from six clients on day 0 become seat_preference,
// its use over the next days promotes it into 1.1.0, and a fragment one client repeats every
// three days never triggers.
TEST(EvolveCli, SimulateReplaysTrafficOverSimulatedDays) {
  const auto dir =
      fs::temp_directory_path() / ("schemagate-simulate-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto traffic = dir / "traffic.jsonl";
  {
    std::ofstream out(traffic);
    const bj::object base{
        {"origin", "PEK"}, {"destination", "SHA"}, {"departure_date", "2026-05-04"}};
    const std::vector<std::string> wishes{"window seat please", "an aisle seat",
                                          "window seat",        "aisle seat if possible",
                                          "a window seat",      "aisle seat please"};
    for (std::size_t i = 0; i < wishes.size(); ++i) {
      auto p = base;
      p["other"] = wishes[i];
      out << bj::serialize(bj::object{{"day", 0.1 * static_cast<double>(i)},
                                      {"client", "c" + std::to_string(i)},
                                      {"payload", p}})
          << "\n";
    }
    for (int d = 0; d < 21; d += 3) {
      auto p = base;
      p["other"] = "a unicorn on board";
      out << bj::serialize(bj::object{{"day", d + 0.5}, {"client", "c1"}, {"payload", p}}) << "\n";
    }
    for (int d = 1; d <= 10; ++d) {
      for (int i = 0; i < 10; ++i) {
        auto p = base;
        if (i < 3) p["seat_preference"] = i % 2 ? "window" : "aisle";
        out << bj::serialize(bj::object{
                   {"day", d + 0.01 * i}, {"client", "c" + std::to_string(i)}, {"payload", p}})
            << "\n";
      }
    }
  }
  const auto run = schemagate::testing::run_command(
      {SCHEMAGATE_BINARY, "evolve", "simulate", traffic.string(), "--extra-days", "5"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("patched  cluster=c0001  key_name=seat_preference"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("promoted  key_name=seat_preference  version=1.1.0"), std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find("triggered  cluster=c0002"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("template now 1.1.0"), std::string::npos) << run.out;
  const auto bad = schemagate::testing::run_command(
      {SCHEMAGATE_BINARY, "evolve", "simulate", (dir / "missing.jsonl").string()});
  EXPECT_EQ(bad.status, 2);
  // Every threshold can be set by name: a 2-day trial promotes the key five days earlier.
  std::ofstream(dir / "settings.json") << R"({"trial_days": 2, "promote_usage": 0.2})";
  const auto quick = schemagate::testing::run_command(
      {SCHEMAGATE_BINARY, "evolve", "simulate", traffic.string(), "--extra-days", "1", "--settings",
       (dir / "settings.json").string()});
  ASSERT_EQ(quick.status, 0) << quick.err;
  EXPECT_NE(quick.out.find("2026-01-03T12:00:00.000Z  promoted"), std::string::npos) << quick.out;
  std::ofstream(dir / "bad.json") << R"({"trial_dayz": 2})";
  const auto typo =
      schemagate::testing::run_command({SCHEMAGATE_BINARY, "evolve", "simulate", traffic.string(),
                                        "--settings", (dir / "bad.json").string()});
  EXPECT_EQ(typo.status, 2);
  EXPECT_NE(typo.err.find("unknown evolution setting \"trial_dayz\""), std::string::npos)
      << typo.err;
}

// Seed 000 §6.1 with the offline payload builder: the seed's two utterances produce its Figures
// 4 and 5 exactly (the reference day makes "next Monday" 2026-05-04), and the built payload is
// accepted by the demo agent.
TEST(Demo, TheSeedsUtterancesBecomeTheSeedsPayloads) {
  const auto dir =
      fs::temp_directory_path() / ("schemagate-demo-say-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Demo demo(dir / "demo.db");
  const std::string server = "http://127.0.0.1:" + std::to_string(demo.port);
  auto run = schemagate::testing::run_command(
      {SCHEMAGATE_BINARY, "negotiate", "--server", server, "--scenario", "flight_booking",
       "--today", "2026-04-30", "--say",
       "Book me a flight from Beijing to Shanghai next Monday, business class, and I prefer a "
       "window seat."});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(bj::parse(run.out), bj::parse(R"({"schema_id": "flight_booking_v1", "payload": {
      "origin": "PEK", "destination": "SHA", "departure_date": "2026-05-04",
      "cabin_class": "business", "passenger_count": 1, "other": "window seat"}})"))
      << "Figure 4";
  run = schemagate::testing::run_command(
      {SCHEMAGATE_BINARY, "negotiate", "--server", server, "--scenario", "photo_retouch", "--say",
       "Please retouch this photo: smooth the skin, whiten teeth, make the background blurry, and "
       "add a vintage filter. Also, I want my eyes to look bigger."});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(bj::parse(run.out), bj::parse(R"({"schema_id": "photo_retouch_v2", "payload": {
      "skin_smoothing": 7, "teeth_whitening": true, "background_blur": true,
      "filter_style": "vintage", "eye_enlargement": false,
      "other": "increase eye size proportionally"}})"))
      << "Figure 5";
  // A request of its own: values outside the examples, a count, and what no key covers.
  run = schemagate::testing::run_command(
      {SCHEMAGATE_BINARY, "negotiate", "--server", server, "--scenario", "flight_booking",
       "--today", "2026-04-30", "--submit", "--say",
       "Two people from Paris to New York tomorrow, economy, with a vegetarian meal"});
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  const auto first_line = run.out.substr(0, run.out.find('\n'));
  EXPECT_EQ(bj::parse(first_line).at("payload"), bj::parse(R"({"origin": "Paris",
      "destination": "New York", "departure_date": "2026-05-01", "cabin_class": "economy",
      "passenger_count": 2, "other": "vegetarian meal"})"));
  EXPECT_NE(run.out.find("\"status\":\"confirmed\""), std::string::npos) << run.out;
}

}  // namespace
