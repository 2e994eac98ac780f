// Seed 004 §4-5 through HTTP: registration, retrieval, listing and search.

#include "support/http_client.hpp"
#include "support/server_process.hpp"
#include "support/test_agent.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <csignal>
#include <set>

namespace bj = boost::json;
using namespace std::chrono_literals;
using schemagate::testing::body_json;
using schemagate::testing::error_code;
using schemagate::testing::fresh_dir;
using schemagate::testing::HttpClient;
using schemagate::testing::HttpResponse;
using schemagate::testing::Server;

namespace {

// Seed 004 §4, as printed.
const char* kTranslator = R"({ "id": "translator-001", "name": "MultiLang Text Translator",
  "description": "Translates text between English and French.",
  "capabilities": ["translation", "language"],
  "inputs": { "text": "string", "source_language": "string", "target_language": "string" },
  "outputs": { "translated_text": "string" }, "supported_languages": ["en", "fr"],
  "tags": ["NLP", "translation", "English", "French"], "authentication": "API Key",
  "endpoint": "https://api.example.com/agents/translator-001", "version": "1.0",
  "provider": "ExampleAI", "certification": { "verified": true, "quality_score": 4.8 } })";

bj::object agent(const std::string& id, const std::string& name, const std::string& description,
                 std::vector<std::string> capabilities, std::vector<std::string> languages = {},
                 const std::string& provider = "Acme") {
  bj::array caps, langs;
  for (auto& c : capabilities)
    caps.push_back(bj::value(c));
  for (auto& l : languages)
    langs.push_back(bj::value(l));
  return bj::object{
      {"id", id},
      {"name", name},
      {"description", description},
      {"capabilities", caps},
      {"supported_languages", langs},
      {"provider", provider},
      {"authentication", "none"},
      {"endpoint", "http://127.0.0.1:9/" + id},
      {"operations", bj::array{bj::object{{"name", "run"},
                                          {"description", description},
                                          {"input_schema", bj::object{{"type", "object"}}}}}}};
}

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    server_ = std::make_unique<Server>(dir_);
    c_ = std::make_unique<HttpClient>("127.0.0.1", server_->port);
  }
  // Stops the server (SIGTERM) and starts another on the same database.
  void restart(std::vector<std::string> args = {}, std::map<std::string, std::string> env = {}) {
    server_->process->signal(SIGTERM);
    server_->process->wait(20s);
    server_ = std::make_unique<Server>(dir_, std::move(args), std::move(env));
    c_ = std::make_unique<HttpClient>("127.0.0.1", server_->port);
  }
  HttpResponse add(const bj::value& card) { return c_->post_json("/agents", bj::serialize(card)); }
  bj::value search(const std::string& body) {
    return body_json(c_->post_json("/agents/search", body));
  }
  void populate() {
    ASSERT_EQ(c_->post_json("/agents", kTranslator).status, 201);
    ASSERT_EQ(add(agent("spanish-gpt", "SpanishGPT Agent",
                        "Large language model specialized in Spanish outputs.", {"text-generation"},
                        {"es"}, "Hola Inc"))
                  .status,
              201);
    ASSERT_EQ(add(agent("doc-summarizer", "Document Summarizer",
                        "Summarizes long documents and reports into short abstracts.",
                        {"summarization"}, {"en"}))
                  .status,
              201);
    ASSERT_EQ(add(agent("xray-vision", "X-Ray Classifier",
                        "Image classification of medical chest X-ray images.",
                        {"vision", "classification"}, {"en"}))
                  .status,
              201);
    ASSERT_EQ(add(agent("zh-translator", "Chinese Product Translator",
                        "Translates product descriptions from English to Chinese.", {"translation"},
                        {"en", "zh-CN"}))
                  .status,
              201);
  }
  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<HttpClient> c_;
};

TEST_F(RegistryTest, RegistersTheSeedExampleAndServesItWithCacheHeaders) {
  const auto created = c_->post_json("/agents", kTranslator);
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.header("location"), "/agents/translator-001");
  EXPECT_EQ(c_->post_json("/agents", kTranslator).status, 409);
  const auto got = c_->get("/agents/translator-001");
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(body_json(got).at("certification").at("quality_score"), 4.8);
  EXPECT_TRUE(body_json(got).as_object().contains("last_update"));
  const auto tag = got.header("etag");
  EXPECT_FALSE(got.header("last-modified").empty());
  EXPECT_EQ(c_->request("GET", "/agents/translator-001", {}, {{"If-None-Match", tag}}).status, 304);
  // A replacement changes the ETag.
  auto changed = bj::parse(kTranslator).as_object();
  changed["description"] = "Translates text between English, French and Spanish.";
  const auto replaced = c_->request("PUT", "/agents/translator-001", bj::serialize(changed),
                                    {{"Content-Type", "application/json"}});
  EXPECT_EQ(replaced.status, 200);
  EXPECT_EQ(c_->request("GET", "/agents/translator-001", {}, {{"If-None-Match", tag}}).status, 200);
}

TEST_F(RegistryTest, BadCardsListEveryProblem) {
  const auto r =
      c_->post_json("/agents", R"({"id": "has space", "name": "", "capabilities": "translation",
      "endpoint": "ftp://x", "inputs": {"text": "str"},
      "operations": [{"description": "no name"}], "visibility": "friends"})");
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(error_code(r), "SchemaError");
  std::set<std::string> paths;
  const auto body = body_json(r);
  for (const auto& p : body.at("error").at("details").at("problems").as_array())
    paths.insert(std::string(p.at("path").as_string()));
  for (const char* p : {"/id", "/name", "/description", "/capabilities", "/endpoint",
                        "/inputs/text", "/operations/0/name", "/visibility"}) {
    EXPECT_TRUE(paths.count(p)) << p << " in " << r.body;
  }
}

// Seed 000 §4.2: descriptions in any language. Limits count characters, as their messages say,
// are set by flags, and a lowered limit never hides a card that is already stored.
TEST_F(RegistryTest, TextLimitsCountCharactersNotBytes) {
  std::string chinese;
  for (int i = 0; i < 1500; ++i)
    chinese += "\u9884";  // 预: three bytes in UTF-8
  ASSERT_EQ(chinese.size(), 4500u);
  auto card = agent("zh-agent", "中文预订代理", chinese, {"booking"}, {"zh"});
  const auto created = add(card);
  ASSERT_EQ(created.status, 201) << created.body;

  std::string long_text(4001, 'x');
  auto too_long = agent("long-agent", "Long", long_text, {"booking"});
  const auto refused = add(too_long);
  ASSERT_EQ(refused.status, 422);
  EXPECT_NE(refused.body.find("description is longer than 4000 characters"), std::string::npos)
      << refused.body;

  // A lower limit by flag: new registrations are held to it; the stored card still loads.
  restart({"--max-description-chars", "1000", "--max-name-chars", "5"});
  EXPECT_EQ(c_->get("/agents/zh-agent").status, 200);
  const auto named = add(agent("short", "123456", "fine", {"x"}));
  ASSERT_EQ(named.status, 422);
  EXPECT_NE(named.body.find("name is longer than 5 characters"), std::string::npos) << named.body;
  EXPECT_EQ(add(agent("short", "中文预订代", "fine", {"x"})).status, 201)
      << "five characters of three bytes each fit a five-character limit";
}

TEST_F(RegistryTest, PutCreatesReplacesAndDeleteRemoves) {
  const auto card = agent("a1", "Agent One", "Does one thing.", {"one"});
  EXPECT_EQ(
      c_->request("PUT", "/agents/a1", bj::serialize(card), {{"Content-Type", "application/json"}})
          .status,
      201);
  EXPECT_EQ(
      c_->request("PUT", "/agents/a1", bj::serialize(card), {{"Content-Type", "application/json"}})
          .status,
      200);
  EXPECT_EQ(c_->request("PUT", "/agents/other", bj::serialize(card),
                        {{"Content-Type", "application/json"}})
                .status,
            400);
  EXPECT_EQ(c_->request("DELETE", "/agents/a1").status, 204);
  EXPECT_EQ(c_->get("/agents/a1").status, 404);
  EXPECT_EQ(c_->request("DELETE", "/agents/a1").status, 404);
  EXPECT_EQ(search(R"({"query": "one thing"})").at("count"), 0);
}

TEST_F(RegistryTest, ListingFiltersAndPagesStably) {
  populate();
  auto ids = [&](const std::string& query) {
    std::vector<std::string> out;
    const auto b = body_json(c_->get("/agents" + query));
    for (const auto& a : b.at("agents").as_array())
      out.emplace_back(a.at("id").as_string());
    return out;
  };
  EXPECT_EQ(ids("?capability=translation"),
            (std::vector<std::string>{"translator-001", "zh-translator"}));
  EXPECT_EQ(ids("?language=zh"), (std::vector<std::string>{"zh-translator"}));
  EXPECT_EQ(ids("?provider=hola%20inc"), (std::vector<std::string>{"spanish-gpt"}));
  EXPECT_EQ(ids("?tag=NLP&authentication=API%20Key"), (std::vector<std::string>{"translator-001"}));
  // Pages of two, by cursor: every agent exactly once, in id order.
  std::vector<std::string> all;
  std::string cursor;
  for (int guard = 0; guard < 10; ++guard) {
    const auto b =
        body_json(c_->get("/agents?limit=2" + (cursor.empty() ? "" : "&cursor=" + cursor)));
    for (const auto& a : b.at("agents").as_array())
      all.emplace_back(a.at("id").as_string());
    if (!b.as_object().contains("next_cursor")) break;
    cursor = b.at("next_cursor").as_string();
  }
  EXPECT_EQ(all, (std::vector<std::string>{"doc-summarizer", "spanish-gpt", "translator-001",
                                           "xray-vision", "zh-translator"}));
  EXPECT_EQ(c_->get("/agents?cursor=garbage").status, 400);
  EXPECT_EQ(c_->get("/agents?limit=0").status, 400);
}

TEST_F(RegistryTest, SearchRanksFiltersAndPages) {
  populate();
  const auto r = search(R"({"query": "translate English to Spanish", "top": 5})");
  EXPECT_EQ(r.at("query"), "translate English to Spanish");
  EXPECT_EQ(r.at("top"), 5);
  EXPECT_EQ(r.at("skip"), 0);
  EXPECT_TRUE(r.as_object().contains("search_time"));
  const auto& results = r.at("results").as_array();
  ASSERT_GE(results.size(), 2u);
  double last = 1.0;
  for (const auto& x : results) {
    const double s = x.at("score").to_number<double>();
    EXPECT_GT(s, 0.0);
    EXPECT_LE(s, 1.0);
    EXPECT_LE(s, last);
    last = s;
  }
  // The §5.4 example query finds the Chinese product translator first.
  EXPECT_EQ(search(R"({"query": "translate product descriptions to Chinese"})")
                .at("results")
                .at(0)
                .at("id"),
            "zh-translator");
  EXPECT_EQ(
      search(R"({"query": "image classification of medical images"})").at("results").at(0).at("id"),
      "xray-vision");
  EXPECT_EQ(search(R"({"query": "summarize a document"})").at("results").at(0).at("id"),
            "doc-summarizer");
  // Filters are exact.
  const auto es = search(
      R"({"query": "translate", "filters": {"capabilities": ["translation"], "supported_language": "es"}})");
  EXPECT_EQ(es.at("count"), 0);
  const auto zh = search(
      R"({"query": "translate", "filters": {"capability": "translation", "language": "zh"}})");
  ASSERT_EQ(zh.at("count"), 1);
  EXPECT_EQ(zh.at("results").at(0).at("id"), "zh-translator");
  // Paging.
  const auto all = search(R"({"query": "translate text", "top": 1})");
  const auto second = search(R"({"query": "translate text", "top": 1, "skip": 1})");
  EXPECT_EQ(all.at("count"), second.at("count"));
  EXPECT_NE(all.at("results").at(0).at("id"), second.at("results").at(0).at("id"));
  // Unranked: alphabetical by name, no scores; metadata on request.
  const auto plain = search(R"({"ranked": false, "top": 10, "include_metadata": true})");
  ASSERT_EQ(plain.at("count"), 5);
  EXPECT_EQ(plain.at("results").at(0).at("name"), "Chinese Product Translator");
  EXPECT_FALSE(plain.at("results").at(0).as_object().contains("score"));
  EXPECT_EQ(plain.at("results").at(0).at("metadata").at("id"), "zh-translator");
  EXPECT_EQ(c_->post_json("/agents/search", R"({"top": -1})").status, 400);
  EXPECT_EQ(c_->post_json("/agents/search", R"({"query": 3})").status, 400);
}

TEST_F(RegistryTest, SearchUnderstandsQueriesThatShareNoWordWithTheCard) {
  populate();
  ASSERT_EQ(
      add(agent("meteo", "Meteo", "Seven-day weather forecasts for any city.", {"weather"})).status,
      201);
  // Offline word vectors: nothing to configure, no network.
  const auto rain = search(R"({"query": "will it rain tomorrow"})");
  ASSERT_GE(rain.at("count").as_int64(), 1) << rain;
  EXPECT_EQ(rain.at("results").at(0).at("id"), "meteo");
  EXPECT_EQ(search(R"({"query": "shorten a lengthy report"})").at("results").at(0).at("id"),
            "doc-summarizer");
  // Filters stay exact for agents found by meaning, and unrelated agents are no answer.
  EXPECT_EQ(
      search(R"({"query": "will it rain tomorrow", "filters": {"language": "zh-CN"}})").at("count"),
      0);
  // The vectors are stored with the cards: a restart reuses them instead of embedding again,
  // and finds the same agents.
  restart();
  EXPECT_NE(server_->process->stderr_text().find("6 stored glove-100d-sif1 vectors reused"),
            std::string::npos)
      << server_->process->stderr_text();
  EXPECT_EQ(search(R"({"query": "will it rain tomorrow"})").at("results").at(0).at("id"), "meteo");
  // A deleted agent leaves both indexes.
  EXPECT_EQ(c_->request("DELETE", "/agents/meteo").status, 204);
  const auto after = search(R"({"query": "will it rain tomorrow"})");
  for (const auto& r : after.at("results").as_array())
    EXPECT_NE(r.at("id"), "meteo");
}

// The HNSW graph is written when the server stops and read when it starts again, and search
// finds the same agents through it.
TEST_F(RegistryTest, ARestartReadsTheSavedVectorGraph) {
  if (schemagate::testing::on_postgres())
    GTEST_SKIP() << "the graph file's default place is beside a SQLite file";
  restart({"--exact-vector-search-below", "5"});
  populate();
  ASSERT_EQ(
      add(agent("meteo", "Meteo", "Seven-day weather forecasts for any city.", {"weather"})).status,
      201);
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(add(agent("filler-" + std::to_string(i), "Filler " + std::to_string(i),
                        "Keeps inventory counts for warehouse number " + std::to_string(i) + ".",
                        {"inventory"}))
                  .status,
              201);
  }
  EXPECT_EQ(search(R"({"query": "will it rain tomorrow"})").at("results").at(0).at("id"), "meteo");
  const auto graph = dir_ / "schemagate.db.vector-graph";
  restart({"--exact-vector-search-below", "5"});
  EXPECT_TRUE(std::filesystem::exists(graph));
  EXPECT_TRUE(std::filesystem::exists(graph.string() + ".hnsw"));
  EXPECT_NE(server_->process->stderr_text().find("vector graph read from"), std::string::npos)
      << server_->process->stderr_text();
  EXPECT_EQ(search(R"({"query": "will it rain tomorrow"})").at("results").at(0).at("id"), "meteo");
  // A damaged file is not read: the graph is built, and search still answers.
  std::filesystem::resize_file(graph.string() + ".hnsw", 100);
  server_->process->signal(SIGKILL);  // no save at the end: the damaged file stays
  server_->process->wait(20s);
  server_ =
      std::make_unique<Server>(dir_, std::vector<std::string>{"--exact-vector-search-below", "5"});
  c_ = std::make_unique<HttpClient>("127.0.0.1", server_->port);
  EXPECT_EQ(server_->process->stderr_text().find("vector graph read from"), std::string::npos);
  EXPECT_NE(server_->process->stderr_text().find("being built in the background"),
            std::string::npos)
      << server_->process->stderr_text();
  EXPECT_EQ(search(R"({"query": "will it rain tomorrow"})").at("results").at(0).at("id"), "meteo");
}

TEST_F(RegistryTest, LexicalOnlyWhenTheEmbedderIsTurnedOff) {
  restart({"--embedder", "none"});
  ASSERT_EQ(
      add(agent("meteo", "Meteo", "Seven-day weather forecasts for any city.", {"weather"})).status,
      201);
  EXPECT_EQ(search(R"({"query": "will it rain tomorrow"})").at("count"), 0);
  EXPECT_EQ(search(R"({"query": "weather forecast"})").at("results").at(0).at("id"), "meteo");
  // Switched back on, the server embeds the agents registered meanwhile.
  restart();
  EXPECT_NE(server_->process->stderr_text().find("0 stored glove-100d-sif1 vectors reused"),
            std::string::npos);
  EXPECT_EQ(search(R"({"query": "will it rain tomorrow"})").at("results").at(0).at("id"), "meteo");
  // Bad embedder settings stop the server with a message.
  const auto other_db = (dir_ / "other.db").string();
  const auto bad =
      schemagate::testing::run_command({SCHEMAGATE_BINARY, "serve", "--listen", "127.0.0.1:0",
                                        "--db", other_db, "--embedder", "magic"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("--embedder must be word-vectors, http or none"), std::string::npos)
      << bad.err;
  const auto missing = schemagate::testing::run_command(
      {SCHEMAGATE_BINARY, "serve", "--listen", "127.0.0.1:0", "--db", other_db, "--word-vectors",
       (dir_ / "nope.sgwv").string()});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("nope.sgwv"), std::string::npos) << missing.err;
}

TEST_F(RegistryTest, HttpEmbedderSpeaksTheOpenAiEmbeddingsApi) {
  schemagate::testing::Agent embeddings;  // a scripted stand-in for a paid API
  restart({"--embedder", "http", "--embedding-url", embeddings.url(""), "--embedding-model",
           "test-embed-1"},
          {{"SCHEMAGATE_EMBEDDING_API_KEY", "sk-test-secret"}});
  ASSERT_EQ(add(agent("meteo", "Meteo", "Seven-day weather forecasts.", {"weather"})).status, 201);
  ASSERT_EQ(add(agent("payer", "Payer", "Settles invoices through the bank.", {"payments"})).status,
            201);
  ASSERT_EQ(add(agent("cars", "Wheels", "Car rental at airports.", {"rental"})).status, 201);
  // "umbrella" and "automobile" appear in no card: the remote model links them.
  EXPECT_EQ(search(R"({"query": "do I need an umbrella"})").at("results").at(0).at("id"), "meteo");
  EXPECT_EQ(search(R"({"query": "automobile"})").at("results").at(0).at("id"), "cars");
  const auto calls = embeddings.embedding_calls();
  ASSERT_GE(calls.size(), 5u);
  for (const auto& call : calls) {
    EXPECT_EQ(call.at("authorization"), "Bearer sk-test-secret");
    EXPECT_EQ(call.at("model"), "test-embed-1");
  }
  EXPECT_EQ(server_->process->stderr_text().find("sk-test-secret"), std::string::npos);
}

TEST_F(RegistryTest, AnUnreachableEmbedderDegradesSearchToLexical) {
  restart(
      {"--embedder", "http", "--embedding-url", "http://127.0.0.1:9", "--embedding-model", "gone"});
  // Registration does not depend on the embedding server...
  ASSERT_EQ(add(agent("meteo", "Meteo", "Seven-day weather forecasts.", {"weather"})).status, 201);
  // ...and search still answers, by words.
  const auto r = search(R"({"query": "weather"})");
  EXPECT_EQ(r.at("results").at(0).at("id"), "meteo");
  EXPECT_NE(server_->process->stderr_text().find("cannot embed"), std::string::npos);
}

TEST_F(RegistryTest, SearchReadsTheKeyDescriptionsOfAnOperationsTemplate) {
  const auto tmpl = bj::parse(R"({"schema_id": "pet_grooming_v1", "scenario": "pet_grooming",
    "keys": [{"key_name": "breed", "key_type": "string", "required": true,
              "semantic_description": {"en": "Dog or cat breed, e.g. poodle.", "fr": "Race."}}]})");
  ASSERT_EQ(c_->request("PUT", "/scenarios/pet_grooming/versions/1.0.0", bj::serialize(tmpl),
                        {{"Content-Type", "application/json"}})
                .status,
            201);
  auto card = agent("groomer", "Salon bookings", "Takes appointments.", {"booking"});
  card["operations"] = bj::array{bj::object{{"name", "book"}, {"scenario", "pet_grooming"}}};
  ASSERT_EQ(add(card).status, 201);
  ASSERT_EQ(
      add(agent("hair", "Hair salon", "Takes appointments for haircuts.", {"booking"})).status,
      201);
  // "poodle" is only in the template's key description.
  const auto r = search(R"({"query": "poodle"})");
  ASSERT_GE(r.at("count").as_int64(), 1) << r;
  EXPECT_EQ(r.at("results").at(0).at("id"), "groomer");
  restart();  // indexed the same way after a restart
  EXPECT_EQ(search(R"({"query": "poodle"})").at("results").at(0).at("id"), "groomer");
}

TEST_F(RegistryTest, PublishingATemplateLaterReindexesTheAgentsThatNameIt) {
  auto card = agent("groomer", "Salon bookings", "Takes appointments.", {"booking"});
  card["operations"] = bj::array{bj::object{{"name", "book"}, {"scenario", "pet_grooming"}}};
  ASSERT_EQ(add(card).status, 201);
  EXPECT_EQ(search(R"({"query": "poodle"})").at("count"), 0);
  const auto tmpl = bj::parse(R"({"schema_id": "pet_grooming_v1", "scenario": "pet_grooming",
    "keys": [{"key_name": "breed", "key_type": "string", "required": true,
              "semantic_description": "Dog or cat breed, e.g. poodle."}]})");
  ASSERT_EQ(c_->request("PUT", "/scenarios/pet_grooming/versions/1.0.0", bj::serialize(tmpl),
                        {{"Content-Type", "application/json"}})
                .status,
            201);
  const auto r = search(R"({"query": "poodle"})");
  ASSERT_EQ(r.at("count"), 1) << r;
  EXPECT_EQ(r.at("results").at(0).at("id"), "groomer");
}

TEST_F(RegistryTest, CrawlsSeedAndA2aCards) {
  schemagate::testing::Agent site;
  const auto seed = c_->post_json("/agents:crawl", R"({"url": ")" + site.url("") + R"("})");
  ASSERT_EQ(seed.status, 201) << seed.body;
  EXPECT_EQ(body_json(seed).at("id"), "crawled-translator");
  EXPECT_EQ(c_->post_json("/agents:crawl", R"({"url": ")" + site.url("") + R"("})").status,
            200);  // refresh
  const auto a2a = c_->post_json("/agents:crawl", R"({"url": ")" + site.url("/a2a") + R"("})");
  ASSERT_EQ(a2a.status, 201) << a2a.body;
  const auto card = body_json(a2a);
  EXPECT_EQ(card.at("name"), "Weather A2A Agent");
  EXPECT_EQ(card.at("provider"), "Meteo Co");
  EXPECT_EQ(card.at("capabilities").at(0), "forecast");
  EXPECT_EQ(search(R"({"query": "weather forecast for a city"})").at("results").at(0).at("id"),
            card.at("id"));
  const auto nowhere = c_->post_json("/agents:crawl", R"({"url": "http://127.0.0.1:1"})");
  EXPECT_EQ(nowhere.status, 502);
  EXPECT_EQ(c_->post_json("/agents:crawl", R"({"url": "ftp://x"})").status, 400);
}

TEST_F(RegistryTest, AcknowledgedRegistrationsSurviveKill9) {
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(add(agent("a" + std::to_string(i), "Agent " + std::to_string(i),
                        "Forecasts the weather for city " + std::to_string(i) + ".", {"weather"}))
                  .status,
              201);
  }
  server_->process->signal(SIGKILL);
  server_->process->wait(20s);
  server_ = std::make_unique<Server>(dir_);
  c_ = std::make_unique<HttpClient>("127.0.0.1", server_->port);
  for (int i = 0; i < 30; ++i)
    EXPECT_EQ(c_->get("/agents/a" + std::to_string(i)).status, 200) << i;
  // Cards and their vectors were written together: none has to be embedded again.
  EXPECT_NE(server_->process->stderr_text().find("30 stored glove-100d-sif1 vectors reused"),
            std::string::npos)
      << server_->process->stderr_text();
  EXPECT_EQ(search(R"({"query": "rain", "top": 50})").at("count"), 30);
}

TEST_F(RegistryTest, TheIndexSurvivesARestart) {
  populate();
  server_->process->signal(SIGTERM);
  ASSERT_EQ(server_->process->wait(20s), 0);
  server_ = std::make_unique<Server>(dir_);
  c_ = std::make_unique<HttpClient>("127.0.0.1", server_->port);
  EXPECT_EQ(search(R"({"query": "summarize a document"})").at("results").at(0).at("id"),
            "doc-summarizer");
  EXPECT_EQ(body_json(c_->get("/agents")).at("agents").as_array().size(), 5u);
}

}  // namespace
