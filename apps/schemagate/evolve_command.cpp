#include "evolve_command.hpp"

#include "embed/word_vectors.hpp"
#include "evolution/evolution_engine.hpp"
#include "examples_embedded.hpp"
#include "exchange/agent_transport.hpp"
#include "exchange/exchange_service.hpp"
#include "json/parse.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/files.hpp"
#include "util/json_text.hpp"
#include "util/text.hpp"

#include <boost/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace schemagate::cli {

namespace bj = boost::json;

namespace {

// The simulation executes nothing: payloads are validated and completed, not forwarded.
class NoAgents final : public exchange::AgentTransport {
 public:
  Reply post_json(const std::string& url, const std::string&, std::chrono::milliseconds,
                  const std::vector<std::pair<std::string, std::string>>&) override {
    throw exchange::AgentUnreachable("the simulation has no agent at " + url);
  }
  std::unique_ptr<Stream> post_for_stream(
      const std::string& url, const std::string&, std::chrono::milliseconds,
      const std::vector<std::pair<std::string, std::string>>&) override {
    throw exchange::AgentUnreachable("the simulation has no agent at " + url);
  }
};

struct Request {
  std::int64_t at_ms = 0;
  std::string client;
  bj::object payload;
};

std::string describe(const bj::object& e) {
  std::string line =
      std::string(e.at("at").as_string()) + "  " + std::string(e.at("event").as_string());
  for (const char* k : {"cluster", "key_name", "version", "client_id", "heat", "occurrences",
                        "distinct_clients", "fragment", "reason", "accepted_until"}) {
    const auto* v = e.if_contains(k);
    if (!v || v->is_null()) continue;
    std::string text;
    if (v->is_string()) {
      text = v->get_string();
    } else if (v->is_double()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f", v->get_double());
      text = buf;
    } else {
      text = bj::serialize(*v);
    }
    line += std::string("  ") + k + "=" + text;
  }
  if (const auto* m = e.if_contains("metrics")) {
    char buf[160];
    const auto num = [&](const char* k) {
      const auto* v = m->as_object().if_contains(k);
      return v && v->is_number() ? v->to_number<double>() : -1.0;
    };
    std::snprintf(buf, sizeof buf, "  usage=%.2f types=%.2f adoption=%.2f", num("usage_frequency"),
                  num("value_type_correctness"), num("client_adoption_rate"));
    line += buf;
  }
  return line;
}

}  // namespace

void add_evolve(CLI::App& app, EvolveCommand& c) {
  auto* evolve = app.add_subcommand("evolve", "Schema self-evolution (seed 000 §6.2)");
  evolve->require_subcommand(1);
  c.simulate = evolve->add_subcommand(
      "simulate",
      "Replay a traffic file over simulated days and print the timeline: clusters, triggers, "
      "patches, promotions, deprecations, withdrawals");
  c.simulate
      ->add_option("TRAFFIC", c.traffic,
                   "JSON lines {\"day\": 0.5 | \"at\": RFC 3339, \"client\": \"c1\", \"payload\": "
                   "{...}}; a payload's `other` feeds the pools")
      ->required();
  c.simulate->add_option("--template", c.template_file,
                         "The scenario's template (default: the demo's flight booking)");
  c.simulate->add_option("--settings", c.settings,
                         "JSON file naming evolution thresholds (trial_days, promote_usage, ...)");
  c.simulate->add_option("--word-vectors", c.word_vectors, "The offline embedder's file")
      ->capture_default_str();
  c.simulate
      ->add_option("--extra-days", c.extra_days,
                   "Simulated days to run after the last request (lifecycles finish)")
      ->capture_default_str();
  c.simulate->add_flag("--json", c.json, "One JSON event per line");
}

std::optional<int> run_evolve(const EvolveCommand& c) {
  if (!c.simulate || !c.simulate->parsed()) return std::nullopt;
  const auto fail = [](const std::string& what) {
    std::cerr << "schemagate evolve simulate: " << what << "\n";
    return 2;
  };
  bj::value tmpl;
  try {
    if (c.template_file.empty()) {
      for (const auto& f : examples::embedded_templates()) {
        if (f.name == "flight_booking") tmpl = json::parse(f.text);
      }
    } else {
      tmpl = json::parse(util::read_file(c.template_file));
    }
  } catch (const std::exception& e) {
    return fail(c.template_file + ": " + e.what());
  }
  if (!tmpl.is_object() || !tmpl.get_object().contains("scenario")) {
    return fail("the template needs a scenario");
  }
  tmpl.get_object().erase("endpoint");
  const std::string scenario(tmpl.at("scenario").as_string());
  const std::string version =
      tmpl.get_object().contains("version") ? std::string(tmpl.at("version").as_string()) : "1.0.0";
  // The traffic, in time order.
  std::vector<Request> requests;
  const std::int64_t start_ms = *util::parse_rfc3339_ms("2026-01-01T00:00:00Z");
  try {
    std::ifstream in(c.traffic);
    if (!in) return fail(c.traffic + ": cannot be read");
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (util::trim(line).empty()) continue;
      const auto v = json::parse(line);
      Request r;
      if (const auto* d = v.as_object().if_contains("day")) {
        r.at_ms = start_ms + static_cast<std::int64_t>(d->to_number<double>() * 86'400'000);
      } else if (const auto at = util::parse_rfc3339_ms(v.at("at").as_string())) {
        r.at_ms = *at;
      } else {
        return fail(c.traffic + ":" + std::to_string(n) + ": needs \"day\" or \"at\"");
      }
      if (const auto* cl = v.as_object().if_contains("client")) r.client = cl->as_string();
      r.payload = v.at("payload").as_object();
      requests.push_back(std::move(r));
    }
  } catch (const std::exception& e) {
    return fail(c.traffic + ": " + e.what());
  }
  std::stable_sort(requests.begin(), requests.end(),
                   [](const Request& a, const Request& b) { return a.at_ms < b.at_ms; });
  std::unique_ptr<embed::WordVectorEmbedder> embedder;
  try {
    embedder = embed::WordVectorEmbedder::load(c.word_vectors);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  evolution::EvolutionOptions options;
  if (!c.settings.empty()) {
    try {
      options = evolution::with_settings(options, json::parse(util::read_file(c.settings)));
    } catch (const std::exception& e) {
      return fail(c.settings + ": " + e.what());
    }
  }
  // A private store in a temporary folder, on a clock that the replay moves.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("schemagate-simulate-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  int status = 0;
  {
    util::ManualClock clock(util::Clock::time_point(
        std::chrono::milliseconds(requests.empty() ? start_ms : requests.front().at_ms)));
    auto store = store::open_store({(dir / "simulation.db").string()}, clock);
    NoAgents agents;
    exchange::ExchangeService exchange(*store, clock, agents);
    evolution::EvolutionEngine engine(*store, clock, exchange, *embedder, options);
    std::size_t accepted = 0, refused = 0;
    try {
      exchange.publish(scenario, version, tmpl);
      const auto print = [&](const evolution::EvolutionEngine::Timeline& t) {
        for (const auto& e : t)
          std::cout << (c.json ? util::json_text(e) : describe(e)) << "\n";
      };
      const std::int64_t hour = 3'600'000;
      std::int64_t next_step = clock.now_unix_ms() + hour;
      const auto run_until = [&](std::int64_t t) {
        while (next_step <= t) {
          clock.set(util::Clock::time_point(std::chrono::milliseconds(next_step)));
          print(engine.step());
          next_step += hour;
        }
      };
      for (const auto& r : requests) {
        run_until(r.at_ms);
        clock.set(util::Clock::time_point(std::chrono::milliseconds(r.at_ms)));
        const auto schema_id = exchange.negotiate(scenario, "").body.at("schema_id");
        try {
          exchange.submit(schema_id.as_string(), r.payload, r.client);
          ++accepted;
        } catch (const exchange::ExchangeError&) {
          ++refused;
        }
      }
      const std::int64_t end =
          clock.now_unix_ms() + static_cast<std::int64_t>(c.extra_days * 86'400'000);
      run_until(end);
    } catch (const std::exception& e) {
      std::cerr << "schemagate evolve simulate: " << e.what() << "\n";
      status = 1;
    }
    if (!c.json) {
      std::cout << requests.size() << " requests (" << accepted << " accepted, " << refused
                << " refused), template now "
                << std::string(exchange.template_json(scenario).at("version").as_string()) << "\n";
    }
  }
  std::filesystem::remove_all(dir);
  return status;
}

}  // namespace schemagate::cli
