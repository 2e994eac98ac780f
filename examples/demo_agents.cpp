#include "demo_agents.hpp"

#include "examples_embedded.hpp"
#include "json/parse.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace schemagate::examples {

namespace bj = boost::json;

namespace {

std::string text(const bj::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// Shaped like seed 000 Figure 9.
bj::value book_flight(const bj::object& p) {
  static std::atomic<int> sequence{0};
  const std::string date = text(p, "departure_date");
  const std::string cabin = text(p, "cabin_class");
  const auto passengers = p.at("passenger_count").to_number<int>();
  const std::string other = text(p, "other");
  std::string compact = date;
  std::erase(compact, '-');
  char booking[40];
  std::snprintf(booking, sizeof booking, "BK-%s-%03d", compact.c_str(), ++sequence % 1000);
  unsigned route = 0;
  for (char c : text(p, "origin") + text(p, "destination"))
    route = route * 31 + static_cast<unsigned char>(c);
  const int base = cabin == "first"             ? 6800
                   : cabin == "business"        ? 2450
                   : cabin == "premium_economy" ? 1200
                                                : 680;
  char amount[40];
  const int total = base * passengers;
  if (total >= 1000) {
    std::snprintf(amount, sizeof amount, "CNY %d,%03d.00", total / 1000, total % 1000);
  } else {
    std::snprintf(amount, sizeof amount, "CNY %d.00", total);
  }
  const bool window = other.find("window") != std::string::npos;
  const bool front = cabin == "business" || cabin == "first";
  return bj::object{{"booking_id", booking},
                    {"status", "confirmed"},
                    {"flight_number", "CA" + std::to_string(1000 + route % 9000)},
                    {"departure_time", date + "T09:00:00+08:00"},
                    {"arrival_time", date + "T11:20:00+08:00"},
                    {"seat", std::string(front ? "3" : "12") + (window ? "A" : "C")},
                    {"total_amount", amount}};
}

bj::value retouch_photo(const bj::object& p) {
  static std::atomic<int> sequence{0};
  bj::object applied;
  for (const auto& kv : p) {
    if (kv.key() != "other") applied[kv.key()] = kv.value();
  }
  bj::object out{{"job_id", "RT-" + std::to_string(++sequence)},
                 {"status", "completed"},
                 {"applied", std::move(applied)}};
  if (const auto other = text(p, "other"); !other.empty()) {
    out["notes"] = bj::array{bj::value("not applied, no key covers it yet: " + other)};
  }
  return out;
}

// Seed 001's example skill: a deterministic judge, so that its walkthrough can be replayed.
bj::value judge_fight(const bj::object& p) {
  const std::string a = text(p, "a");
  const std::string b = text(p, "b");
  unsigned score = 0;
  for (char c : a + "|" + b)
    score = score * 131 + static_cast<unsigned char>(c);
  const bool first = score % 2 == 0;
  const std::string& winner = first ? a : b;
  const std::string& loser = first ? b : a;
  const double probability = static_cast<double>(50 + score % 45) / 100.0;  // 0.50 .. 0.94
  return bj::object{{"winner", winner},
                    {"probability", probability},
                    {"explanation", winner + " has the edge over " + loser +
                                        " in reach, stamina and sheer determination."}};
}

// The same judgement told as it happens, for callers that ask for a stream: three rounds a
// quarter of a second apart, then the verdict that judge_fight() gives.
sdk::AgentServer::EventSource judge_fight_live(const bj::object& p) {
  return [p, round = 0]() mutable -> std::optional<sdk::AgentServer::Event> {
    if (round > 3) return std::nullopt;
    if (round > 0) std::this_thread::sleep_for(std::chrono::milliseconds(250));
    ++round;
    if (round == 4) return sdk::AgentServer::Event{"result", judge_fight(p)};
    const std::string a = text(p, "a"), b = text(p, "b");
    static const char* const moves[] = {"opens with a feint", "lands a heavy blow",
                                        "takes the last exchange"};
    const std::string& mover = (a.size() + b.size() + static_cast<std::size_t>(round)) % 2 ? a : b;
    return sdk::AgentServer::Event{
        "round", bj::object{{"round", round}, {"commentary", mover + " " + moves[round - 1]}}};
  };
}

// Seed 001's fightComparison and fightResponse, as the seed writes them.
bj::value fight_operation() {
  return json::parse(R"({
    "name": "fight-comparison",
    "description": "Determines who would win in a hypothetical fight between two contestants. Requires a data payload with two fields: \"a\" (first contestant) and \"b\" (second contestant). Returns the winner, probability of victory, and an explanation.",
    "input_schema_name": "fightComparison",
    "output_schema_name": "fightResponse",
    "input_schema": {
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "type": "object",
      "properties": {
        "a": {"description": "The name of the first contestant", "type": "string"},
        "b": {"description": "The name of the second contestant", "type": "string"}
      },
      "required": ["a", "b"],
      "additionalProperties": false
    },
    "output_schema": {
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "type": "object",
      "properties": {
        "winner": {"title": "Winner", "description": "The name of the winner of the fight", "type": "string"},
        "probability": {"title": "Probability", "description": "The probability of the winner winning the fight", "type": "number", "minimum": 0, "maximum": 1},
        "explanation": {"title": "Explanation", "description": "A freeform field justifying the reason for choosing the winner", "type": "string"}
      },
      "required": ["winner", "probability", "explanation"],
      "additionalProperties": false
    }
  })");
}

const bj::value& template_named(std::string_view name) {
  static const std::vector<std::pair<std::string, bj::value>> parsed = [] {
    std::vector<std::pair<std::string, bj::value>> out;
    for (const auto& f : embedded_templates())
      out.emplace_back(std::string(f.name), json::parse(f.text));
    return out;
  }();
  for (const auto& [n, v] : parsed) {
    if (n == name) return v;
  }
  throw std::logic_error("no embedded template " + std::string(name));
}

}  // namespace

std::vector<DemoAgent> demo_agents() {
  return {DemoAgent{"flight_booking", "Flight booking agent",
                    "Books airline flights between two cities or airports for a date, with cabin "
                    "class and number of passengers (seed 000, section 5.1).",
                    template_named("flight_booking"), book_flight, nullptr, nullptr},
          DemoAgent{"photo_retouch", "Photo retouching agent",
                    "Retouches portrait photos: skin smoothing, teeth whitening, background blur "
                    "and filter styles (seed 000, section 5.2).",
                    template_named("photo_retouch"), retouch_photo, nullptr, nullptr},
          DemoAgent{"fight_comparison", "Fight comparison agent",
                    "Determines who would win in a hypothetical fight between two contestants "
                    "(seed 001's example skill, with its fightComparison and fightResponse "
                    "schemas).",
                    template_named("fight_comparison"), judge_fight, fight_operation(),
                    judge_fight_live}};
}

}  // namespace schemagate::examples
