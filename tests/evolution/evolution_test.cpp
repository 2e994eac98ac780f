// Seed 000 §6.2 on the injected clock: `other` fragments submitted through the exchange are
// pooled, clustered with the offline word-vector embedder, heated and cooled, and mature clusters
// become experimental keys (or client-only patches, or queued triggers).

#include "embed/word_vectors.hpp"
#include "evolution/evolution_engine.hpp"
#include "exchange/exchange_service.hpp"
#include "http/client.hpp"
#include "http/server.hpp"
#include "json/parse.hpp"
#include "llm/chat_model.hpp"
#include "sdk/payload_builder.hpp"
#include "server/http_agent_transport.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/contract_error.hpp"
#include "util/metrics.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <boost/json/serialize.hpp>

#include <filesystem>

namespace bj = boost::json;
namespace fs = std::filesystem;
using namespace schemagate;
using namespace std::chrono_literals;

namespace {

const std::string kWordVectors = SCHEMAGATE_SOURCE_DIR "/data/word-vectors/glove-100d.sgwv";

class EvolutionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { embedder_ = embed::WordVectorEmbedder::load(kWordVectors); }
  static void TearDownTestSuite() { embedder_.reset(); }

  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("schemagate-evolution-" + std::to_string(::getpid())) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_ = store::open_store({(dir_ / "db.sqlite").string()}, clock_);
    exchange_ = std::make_unique<exchange::ExchangeService>(*store_, clock_, transport_);
    exchange_->publish("flight_booking", "1.0.0", json::parse(R"({
      "schema_id": "flight_booking_v1", "scenario": "flight_booking",
      "keys": [
        {"key_name": "origin", "key_type": "string", "required": true,
         "semantic_description": "Departure city or airport code."},
        {"key_name": "destination", "key_type": "string", "required": true,
         "semantic_description": "Arrival city or airport code."}]})"));
  }

  evolution::EvolutionEngine engine(evolution::EvolutionOptions options = {}) {
    return evolution::EvolutionEngine(*store_, clock_, *exchange_, *embedder_, options);
  }

  void submit(const std::string& client, const std::string& other) {
    exchange_->submit("flight_booking_v1",
                      bj::object{{"origin", "PEK"}, {"destination", "SHA"}, {"other", other}},
                      client);
  }

  static std::vector<bj::object> of(const evolution::EvolutionEngine::Timeline& t,
                                    std::string_view event) {
    std::vector<bj::object> out;
    for (const auto& e : t) {
      if (e.at("event").as_string() == event) out.push_back(e);
    }
    return out;
  }

  static std::unique_ptr<embed::WordVectorEmbedder> embedder_;
  fs::path dir_;
  util::ManualClock clock_;
  http::Client client_;
  server::HttpAgentTransport transport_{client_};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<exchange::ExchangeService> exchange_;
};

std::unique_ptr<embed::WordVectorEmbedder> EvolutionTest::embedder_;

TEST_F(EvolutionTest, SeatRequestsFromSeveralClientsBecomeAnExperimentalKey) {
  auto e = engine();
  const std::vector<std::string> fragments{"window seat please", "an aisle seat",
                                           "window seat",        "aisle seat if possible",
                                           "a window seat",      "aisle seat please"};
  for (std::size_t i = 0; i < fragments.size(); ++i) {
    submit("client-" + std::to_string(i), fragments[i]);
    clock_.advance(20min);
  }
  const auto timeline = e.step();
  const auto patched = of(timeline, "patched");
  ASSERT_EQ(patched.size(), 1u) << bj::serialize(bj::array(timeline.begin(), timeline.end()));
  const auto& key = patched[0].at("key").as_object();
  EXPECT_EQ(key.at("key_name"), "seat_preference");
  EXPECT_EQ(key.at("enum"), json::parse(R"(["aisle","window"])"));
  EXPECT_NE(key.at("semantic_description").as_string().find("'window seat please' -> 'window'"),
            bj::string::npos)
      << key.at("semantic_description");
  EXPECT_TRUE(patched[0].at("client_id").is_null()) << "a global key";

  // The patch is delivered like any other (experimental), and clients may use the key.
  const auto updates = exchange_->updates("flight_booking", "anyone", std::nullopt);
  ASSERT_EQ(updates.at("patches").as_array().size(), 1u);
  EXPECT_EQ(updates.at("patches").at(0).at("new_keys").at(0).at("experimental"), true);
  const auto r = exchange_->submit(
      "flight_booking_v1",
      bj::object{{"origin", "PEK"}, {"destination", "SHA"}, {"seat_preference", "window"}}, "c9");
  EXPECT_EQ(r.at("payload").at("seat_preference"), "window");

  // State survives a restart: a new engine over the same store does not fire again.
  auto again = engine();
  EXPECT_TRUE(of(again.step(), "patched").empty());
  const auto state = again.state("flight_booking");
  EXPECT_EQ(state.at("experimental_keys"), 1);
  EXPECT_EQ(state.at("clusters").at(0).at("state"), "patched");
}

TEST_F(EvolutionTest, ARareFragmentNeverTriggers) {
  auto e = engine();
  for (int day = 0; day < 30; ++day) {
    submit("client-" + std::to_string(day % 7), "a glass of fresh orange juice");
    clock_.advance(24h);
    EXPECT_TRUE(of(e.step(), "triggered").empty()) << "day " << day;
  }
  // Once a day, heat settles near increment / (1 - 1/2) = 20, under the threshold of 50.
  const auto state = e.state("flight_booking");
  EXPECT_LT(state.at("clusters").at(0).at("heat").to_number<double>(), 20.0);
  EXPECT_EQ(state.at("clusters").at(0).at("state"), "collecting");
}

TEST_F(EvolutionTest, OneClientsRepeatedWishBecomesItsOwnPatch) {
  auto e = engine();
  for (int i = 0; i < 10; ++i) {
    submit("frequent-flyer", "extra legroom please");
    clock_.advance(30min);
  }
  const auto patched = of(e.step(), "patched");
  ASSERT_EQ(patched.size(), 1u);
  EXPECT_EQ(patched[0].at("client_id"), "frequent-flyer");
  EXPECT_EQ(patched[0].at("key").at("key_type"), "boolean");
  EXPECT_EQ(exchange_->updates("flight_booking", "frequent-flyer", std::nullopt)
                .at("patches")
                .as_array()
                .size(),
            1u);
  EXPECT_TRUE(exchange_->updates("flight_booking", "someone-else", std::nullopt)
                  .at("patches")
                  .as_array()
                  .empty())
      << "the global schema is not polluted";
}

TEST_F(EvolutionTest, TheConvergenceGuardQueuesTheEleventhTrigger) {
  auto e = engine();
  const std::vector<std::string> wishes{"vegetarian meal",
                                        "extra legroom",
                                        "quiet cabin",
                                        "warm blanket",
                                        "noise cancelling headphones",
                                        "daily newspaper",
                                        "priority boarding",
                                        "lounge pass",
                                        "champagne bottle",
                                        "birthday cake",
                                        "stroller storage"};
  evolution::EvolutionEngine::Timeline all;
  for (const auto& wish : wishes) {
    for (int c = 0; c < 5; ++c)
      submit("client-" + std::to_string(c), wish);
    clock_.advance(1min);
    const auto t = e.step();
    all.insert(all.end(), t.begin(), t.end());
  }
  EXPECT_EQ(of(all, "patched").size(), 10u) << bj::serialize(bj::array(all.begin(), all.end()));
  const auto queued = of(all, "queued");
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(e.state("flight_booking").at("experimental_keys"), 10);
}

TEST_F(EvolutionTest, SecurityRelevantKeysWaitForAnAdmin) {
  auto e = engine();
  for (int c = 0; c < 5; ++c)
    submit("client-" + std::to_string(c), "pay with my credit card");
  const auto t = e.step();
  const auto waiting = of(t, "awaiting_approval");
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_TRUE(of(t, "patched").empty());
  EXPECT_TRUE(
      exchange_->updates("flight_booking", "", std::nullopt).at("patches").as_array().empty());
  const auto cluster = std::string(waiting[0].at("cluster").as_string());
  EXPECT_THROW(e.decide("flight_booking", "c9999", true), util::ContractError);
  const auto decided = e.decide("flight_booking", cluster, true);
  EXPECT_EQ(decided.at("state"), "patched");
  EXPECT_EQ(exchange_->updates("flight_booking", "", std::nullopt).at("patches").as_array().size(),
            1u);
}

// §6.2.3: after its 7-day trial a key used in >= 15% of payloads, always well-typed, is
// promoted into a new minor version of the template, and its patch ends.
TEST_F(EvolutionTest, AUsedKeyIsPromotedAfterItsTrial) {
  auto e = engine();
  for (int i = 0; i < 6; ++i)
    submit("client-" + std::to_string(i), i % 2 ? "aisle seat please" : "window seat please");
  ASSERT_EQ(of(e.step(), "patched").size(), 1u);
  for (int day = 0; day < 8; ++day) {
    for (int i = 0; i < 10; ++i) {
      bj::object payload{{"origin", "PEK"}, {"destination", "SHA"}};
      if (i < 3) payload["seat_preference"] = i % 2 ? "aisle" : "window";  // 30% of payloads
      exchange_->submit("flight_booking_v1", payload, "client-" + std::to_string(i));
    }
    clock_.advance(24h);
    const auto t = e.step();
    if (day < 6) {
      EXPECT_TRUE(of(t, "promoted").empty()) << "still on trial, day " << day;
    }
    if (const auto promoted = of(t, "promoted"); !promoted.empty()) {
      EXPECT_EQ(promoted[0].at("version"), "1.1.0");
      EXPECT_GE(promoted[0].at("metrics").at("usage_frequency").as_double(), 0.15);
      EXPECT_EQ(promoted[0].at("metrics").at("value_type_correctness").as_double(), 1.0);
      break;
    }
    ASSERT_LT(day, 7) << "never promoted";
  }
  const auto t = exchange_->template_json("flight_booking");
  EXPECT_EQ(t.at("version"), "1.1.0");
  bool found = false;
  for (const auto& k : t.at("keys").as_array()) {
    if (k.at("key_name") == "seat_preference") {
      found = true;
      EXPECT_FALSE(k.as_object().contains("experimental")) << k;
    }
  }
  EXPECT_TRUE(found);
  EXPECT_TRUE(
      exchange_->updates("flight_booking", "x", std::nullopt).at("patches").as_array().empty())
      << "the patch ended: the key is in the template now";
}

// An unused key is deprecated after its trial, withdrawn after the 14-day grace period, and still
// accepted (as text in `other`, with a warning) for 30 more days.
TEST_F(EvolutionTest, AnUnusedKeyIsDeprecatedThenWithdrawnAndStillAcceptedFor30Days) {
  auto e = engine();
  for (int i = 0; i < 6; ++i)
    submit("client-" + std::to_string(i), i % 2 ? "aisle seat please" : "window seat please");
  ASSERT_EQ(of(e.step(), "patched").size(), 1u);
  const auto daily = [&](int days, std::string_view wanted) {
    for (int d = 0; d < days; ++d) {
      exchange_->submit("flight_booking_v1", bj::object{{"origin", "PEK"}, {"destination", "SHA"}},
                        "client-1");
      clock_.advance(24h);
      const auto hit = of(e.step(), wanted);
      if (!hit.empty()) return hit.front();
    }
    return bj::object{};
  };
  const auto deprecated = daily(8, "deprecated");
  ASSERT_FALSE(deprecated.empty()) << "never deprecated";
  EXPECT_LT(deprecated.at("metrics").at("usage_frequency").as_double(), 0.05);
  auto updates = exchange_->updates("flight_booking", "x", std::nullopt);
  EXPECT_EQ(updates.at("patches").at(0).at("new_keys").at(0).at("deprecated"), true);

  const auto withdrawn = daily(15, "withdrawn");
  ASSERT_FALSE(withdrawn.empty()) << "never withdrawn";
  EXPECT_TRUE(
      exchange_->updates("flight_booking", "x", std::nullopt).at("patches").as_array().empty());
  const bj::object legacy{{"origin", "PEK"}, {"destination", "SHA"}, {"seat_preference", "window"}};
  auto r = exchange_->submit("flight_booking_v1", legacy, "legacy-client");
  EXPECT_EQ(r.at("payload").at("other"), "seat_preference: window");
  EXPECT_EQ(r.at("warnings").as_array().size(), 1u);
  clock_.advance(31 * 24h);
  EXPECT_THROW(exchange_->submit("flight_booking_v1", legacy, "legacy-client"),
               exchange::ExchangeError)
      << "after the acceptance window the key is unknown";
}

// A scripted stand-in for a paid chat-model API (OpenAI-compatible): answers from a list,
// and keeps what it was asked.
class ChatStandIn {
 public:
  explicit ChatStandIn(std::vector<std::string> answers) : answers_(std::move(answers)) {
    router_.add("POST", "/v1/chat/completions", [this](http::Request& req) {
      std::lock_guard lock(mu_);
      requests_.push_back(json::parse(req.body));
      const std::string content = next_ < answers_.size() ? answers_[next_++] : "{}";
      return http::Response::json(
          200, bj::object{{"choices",
                           bj::array{bj::object{{"message", bj::object{{"role", "assistant"},
                                                                       {"content", content}}}}}}});
    });
    http::ServerOptions o;
    o.port = 0;
    o.handle_signals = false;
    o.access_log = false;
    server_ = std::make_unique<http::Server>(router_, metrics_, o);
    port_ = server_->listen();
    thread_ = std::thread([this] { server_->run(); });
  }
  ~ChatStandIn() {
    server_->stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<bj::value> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  std::vector<std::string> answers_;
  std::size_t next_ = 0;
  http::Router router_;
  util::MetricsRegistry metrics_;
  std::unique_ptr<http::Server> server_;
  unsigned short port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<bj::value> requests_;
};

const char* kModelKey = R"({"key_name": "seat_choice", "key_type": "string",
  "values": ["window", "aisle"], "semantic_description": "Where the passenger wants to sit.",
  "examples": [{"fragment": "window seat please", "value": "window"},
               {"fragment": "an invented fragment", "value": "aisle"}]})";

TEST(ChatModel, ABadAnswerIsAskedAgainOnceWithWhatWasWrong) {
  ChatStandIn stand_in({"not json at all", R"({"n": "three"})", R"({"n": 3})"});
  http::Client client;
  llm::HttpChatModel model(client, {stand_in.url(), "test-model", "secret"});
  const auto schema = json::parse(R"({"type":"object","required":["n"],
                                       "properties":{"n":{"type":"integer"}}})");
  EXPECT_THROW(model.complete_json("sys", "user", "n", schema), llm::ChatError)
      << "two bad answers";
  EXPECT_EQ(model.complete_json("sys", "user", "n", schema), json::parse(R"({"n": 3})"));
  const auto requests = stand_in.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].at("response_format").at("type"), "json_schema");
  EXPECT_EQ(requests[0].at("response_format").at("json_schema").at("schema"), schema);
  const auto& repair = requests[1].at("messages").as_array().back();
  EXPECT_NE(repair.at("content").as_string().find("not JSON"), bj::string::npos) << repair;
}

TEST_F(EvolutionTest, AChatModelInducesTheKeyAndTheRulesStepInWhenItFails) {
  ChatStandIn stand_in({kModelKey});
  http::Client client;
  llm::HttpChatModel model(client, {stand_in.url(), "test-model", ""});
  evolution::EvolutionOptions options;
  options.chat_model = &model;
  auto e = engine(options);
  for (int i = 0; i < 6; ++i)
    submit("client-" + std::to_string(i), i % 2 ? "aisle seat please" : "window seat please");
  const auto patched = of(e.step(), "patched");
  ASSERT_EQ(patched.size(), 1u);
  EXPECT_EQ(patched[0].at("key").at("key_name"), "seat_choice");
  const auto description = std::string(patched[0].at("key").at("semantic_description").as_string());
  EXPECT_NE(description.find("'window seat please' -> 'window'"), std::string::npos);
  EXPECT_EQ(description.find("invented"), std::string::npos) << "examples come from real fragments";
  const std::string prompt(
      stand_in.requests().at(0).at("messages").at(1).at("content").as_string());
  EXPECT_NE(prompt.find("aisle seat please"), std::string::npos);

  // A model that cannot be reached: the offline inducer decides.
  llm::HttpChatModel down(client, {"http://127.0.0.1:1", "test-model", ""});
  options.chat_model = &down;
  auto fallback = engine(options);
  for (int i = 0; i < 10; ++i)
    submit("flyer", "extra legroom please");
  const auto personal = of(fallback.step(), "patched");
  ASSERT_EQ(personal.size(), 1u);
  EXPECT_EQ(personal[0].at("key").at("key_type"), "boolean");
}

// Seed 000 §6.1 with a chat model: the answer is held to the template's JSON Schema and repaired
// once when it breaks it.
TEST_F(EvolutionTest, AChatModelBuildsAPayloadWithinTheTemplatesSchema) {
  ChatStandIn stand_in({R"({"origin": "PEK", "destination": "SHA", "seats": 2})",
                        R"({"origin": "PEK", "destination": "SHA", "other": "two seats"})"});
  http::Client client;
  llm::HttpChatModel model(client, {stand_in.url(), "test-model", ""});
  const auto tmpl = exchange_->negotiate("flight_booking", "").body;
  const auto schema = exchange_->json_schema("flight_booking");
  const auto built = sdk::build_with_model(model, tmpl, schema,
                                           "Two seats from Beijing to Shanghai", "2026-04-30");
  EXPECT_EQ(built.payload, json::parse(R"({"origin": "PEK", "destination": "SHA",
                                           "other": "two seats"})"));
  const auto requests = stand_in.requests();
  ASSERT_EQ(requests.size(), 2u) << "the first answer broke additionalProperties: repaired";
  EXPECT_NE(requests[0].at("messages").at(0).at("content").as_string().find("origin (string)"),
            bj::string::npos);
  EXPECT_EQ(requests[0].at("response_format").at("json_schema").at("schema").at("required"),
            json::parse(R"(["origin","destination"])"));
}

// §6.2.1 cohort pools: with a separator, each cohort's fragments cluster apart and its trigger
// patches that cohort only.
TEST_F(EvolutionTest, CohortPoolsPatchTheirCohortOnly) {
  evolution::EvolutionOptions options;
  options.cohort_separator = ":";
  auto e = engine(options);
  for (int i = 0; i < 6; ++i)
    submit("acme:bot-" + std::to_string(i), i % 2 ? "aisle seat please" : "window seat please");
  for (int i = 0; i < 3; ++i)
    submit("globex:bot-" + std::to_string(i), "window seat please");
  const auto t = e.step();
  const auto patched = of(t, "patched");
  ASSERT_EQ(patched.size(), 1u) << bj::serialize(bj::array(t.begin(), t.end()));
  EXPECT_EQ(patched[0].at("cohort"), "acme:");
  EXPECT_EQ(of(t, "cluster_started").size(), 2u) << "one pool per cohort";
  EXPECT_EQ(exchange_->updates("flight_booking", "acme:bot-9", std::nullopt)
                .at("patches")
                .as_array()
                .size(),
            1u);
  EXPECT_TRUE(exchange_->updates("flight_booking", "globex:bot-1", std::nullopt)
                  .at("patches")
                  .as_array()
                  .empty());
  EXPECT_EQ(e.state("flight_booking").at("experimental_keys"), 0)
      << "the global guard is not spent";
  // Settings name it too; a number is refused.
  EXPECT_EQ(
      evolution::with_settings({}, json::parse(R"({"cohort_separator": "/"})")).cohort_separator,
      "/");
  EXPECT_THROW(evolution::with_settings({}, json::parse(R"({"cohort_separator": 1})")),
               std::invalid_argument);
}

// §6.2.2 conflict detection: a candidate named like a key the template has refines that key's
// description (modified_keys, with the fragments' examples) instead of adding a duplicate.
TEST_F(EvolutionTest, ACandidateThatCollidesRefinesTheExistingKey) {
  exchange_->publish("flight_booking", "1.1.0", json::parse(R"({
      "schema_id": "flight_booking_v1_1", "scenario": "flight_booking",
      "keys": [
        {"key_name": "origin", "key_type": "string", "required": true,
         "semantic_description": "Departure city or airport code."},
        {"key_name": "destination", "key_type": "string", "required": true,
         "semantic_description": "Arrival city or airport code."},
        {"key_name": "seat_preference", "key_type": "string", "required": false,
         "semantic_description": "Where to sit."}]})"));
  auto e = engine();
  for (int i = 0; i < 6; ++i) {
    exchange_->submit("flight_booking_v1_1",
                      bj::object{{"origin", "PEK"},
                                 {"destination", "SHA"},
                                 {"other", i % 2 ? "aisle seat please" : "window seat please"}},
                      "client-" + std::to_string(i));
  }
  const auto t = e.step();
  EXPECT_TRUE(of(t, "patched").empty());
  const auto refined = of(t, "refined");
  ASSERT_EQ(refined.size(), 1u) << bj::serialize(bj::array(t.begin(), t.end()));
  EXPECT_EQ(refined[0].at("key_name"), "seat_preference");
  const auto patches = exchange_->updates("flight_booking", "x", std::nullopt).at("patches");
  ASSERT_EQ(patches.as_array().size(), 1u);
  const auto& modified = patches.at(0).at("modified_keys").at(0);
  EXPECT_EQ(modified.at("key_name"), "seat_preference");
  const std::string description(modified.at("semantic_description").as_string());
  EXPECT_TRUE(description.starts_with("Where to sit.")) << description;
  EXPECT_NE(description.find("'window seat please' -> 'window'"), std::string::npos) << description;
  EXPECT_TRUE(patches.at(0).at("new_keys").as_array().empty()) << "no duplicate key";
}

}  // namespace
