#pragma once

// A small agent service for tests, on our own HTTP server: it records what it receives.

#include "http/server.hpp"
#include "util/metrics.hpp"

#include <boost/json.hpp>

#include <mutex>
#include <thread>
#include <vector>

namespace schemagate::testing {

namespace bj = boost::json;
using namespace std::chrono_literals;

class TokenEvents final : public schemagate::http::BodyStream {
 public:
  TokenEvents(std::int64_t count, std::int64_t gap_ms, std::int64_t break_after,
              std::int64_t stall_ms)
      : count_(count), gap_ms_(gap_ms), break_after_(break_after), stall_ms_(stall_ms) {}
  bool next(std::string& piece) override {
    if (sent_ == break_after_) throw std::runtime_error("agent crashed mid-stream");
    if (sent_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms_));
    if (sent_ == 1 && stall_ms_ > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(stall_ms_));
    if (sent_ == count_) {
      piece = "event: done\ndata: {}\n\n";
      return false;
    }
    piece = "data: {\"token\": " + std::to_string(sent_++) + "}\n\n";
    return true;
  }

 private:
  std::int64_t count_, gap_ms_, break_after_, stall_ms_, sent_ = 0;
};

// A small agent service behind the gateway, on our own HTTP server.
class Agent {
 public:
  Agent() {
    namespace http = schemagate::http;
    router_.add("POST", "/book", [this](http::Request& req) {
      record(req.body);
      return http::Response::json(200, bj::object{{"booking_id", "BK-20260430-001"},
                                                  {"status", "confirmed"},
                                                  {"flight_number", "CA1234"},
                                                  {"seat", "12A"},
                                                  {"echo", bj::parse(req.body)}});
    });
    // An agent that moved from version 1 of its booking contract to version 2 (seed 003).
    router_.add("POST", "/v1/book", [this](http::Request& req) {
      record(req.body);
      return http::Response::json(200, bj::object{{"ref", "BK-1"}});
    });
    router_.add("POST", "/v2/book", [this](http::Request& req) {
      record(req.body);
      const auto in = bj::parse(req.body);
      if (!in.as_object().contains("destination") || !in.as_object().contains("cabin_class")) {
        return http::Response::json(400, bj::object{{"error", "version 2 fields missing"}});
      }
      return http::Response::json(200,
                                  bj::object{{"booking_ref", "BK-2"}, {"status", "confirmed"}});
    });
    // Answers with the W3C trace headers it was sent.
    router_.add("POST", "/trace", [](http::Request& req) {
      const auto parent = req.header("traceparent");
      const auto state = req.header("tracestate");
      return http::Response::json(200,
                                  bj::object{{"traceparent", parent ? std::string(*parent) : ""},
                                             {"tracestate", state ? std::string(*state) : ""}});
    });
    router_.add("POST", "/slow", [](http::Request&) {
      std::this_thread::sleep_for(1500ms);
      return http::Response::json(200, bj::object{{"status", "late"}});
    });
    router_.add("POST", "/fail", [](http::Request&) {
      return http::Response::json(500, bj::object{{"error", "boom"}});
    });
    router_.add("POST", "/wrong", [](http::Request&) {
      return http::Response::json(200, bj::object{{"status", 42}});
    });
    router_.add("POST", "/notjson",
                [](http::Request&) { return http::Response::text(200, "hello"); });
    router_.add("POST", "/translate", [this](http::Request& req) {
      record(req.body);
      const auto in = bj::parse(req.body);
      return http::Response::json(
          200, bj::object{{"translated_text", "[fr] " + std::string(in.at("text").as_string())}});
    });
    router_.add("POST", "/bad_output", [](http::Request&) {
      return http::Response::json(200, bj::object{{"translated", 1}});
    });
    router_.add("POST", "/block", [](http::Request&) {
      std::this_thread::sleep_for(500ms);
      return http::Response::json(200, bj::object{{"done", true}});
    });
    router_.add("GET", "/.well-known/agent-card.json", [this](http::Request&) {
      return http::Response::json(200,
                                  bj::object{{"id", "crawled-translator"},
                                             {"name", "Crawled Translator"},
                                             {"description", "Translates text, found by crawling."},
                                             {"capabilities", bj::array{"translation"}},
                                             {"endpoint", url("/translate")},
                                             {"inputs", bj::object{{"text", "string"}}}});
    });
    router_.add("GET", "/a2a/.well-known/agent-card.json", [this](http::Request&) {
      return http::Response::json(
          200, bj::object{{"protocolVersion", "0.3.0"},
                          {"name", "Weather A2A Agent"},
                          {"description", "Forecasts the weather."},
                          {"url", url("/a2a")},
                          {"version", "2.1.0"},
                          {"provider", bj::object{{"organization", "Meteo Co"}}},
                          {"skills",
                           bj::array{bj::object{{"id", "forecast"},
                                                {"name", "Forecast"},
                                                {"description", "Seven-day forecast for a city."},
                                                {"tags", bj::array{"weather"}}}}}});
    });
    // A scripted stand-in for a paid embeddings API (OpenAI's /v1/embeddings shape): one
    // dimension per topic, set by the topic's words, so tests know which texts are close.
    router_.add("POST", "/v1/embeddings", [this](http::Request& req) {
      const auto in = bj::parse(req.body);
      {
        std::lock_guard lock(mu_);
        const auto auth = req.header("Authorization");
        embedding_calls_.push_back(
            bj::object{{"authorization", auth ? std::string(*auth) : std::string()},
                       {"model", in.at("model")},
                       {"inputs", in.at("input").as_array().size()}});
      }
      static const std::vector<std::vector<std::string>> topics = {
          {"rain", "weather", "forecast", "umbrella", "sunny"},
          {"money", "invoice", "payment", "pay", "bank"},
          {"car", "vehicle", "rental", "drive", "automobile"}};
      bj::array data;
      std::int64_t index = 0;
      for (const auto& text : in.at("input").as_array()) {
        std::string t(text.as_string());
        for (auto& ch : t)
          ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        bj::array v;
        for (const auto& words : topics) {
          double hits = 0;
          for (const auto& w : words)
            hits += t.find(w) != std::string::npos ? 1 : 0;
          v.push_back(hits);
        }
        v.push_back(0.1);  // never all zero
        data.push_back(bj::object{{"object", "embedding"}, {"index", index++}, {"embedding", v}});
      }
      return http::Response::json(200, bj::object{{"object", "list"}, {"data", data}});
    });
    // Server-sent events: `count` token events `gap_ms` apart, then `event: done`. With
    // "break_after": n the agent drops the connection after n events; with "stall_ms" it goes
    // quiet that long after the first event.
    router_.add("POST", "/stream", [this](http::Request& req) {
      record(req.body);
      const auto in = bj::parse(req.body).as_object();
      auto number = [&](const char* k, std::int64_t def) {
        const auto* v = in.if_contains(k);
        return v && v->is_int64() ? v->get_int64() : def;
      };
      http::Response r;
      r.set_header("Content-Type", "text/event-stream");
      r.stream = std::make_shared<TokenEvents>(number("count", 3), number("gap_ms", 0),
                                               number("break_after", -1), number("stall_ms", 0));
      return r;
    });
    router_.add("POST", "/whoami", [](http::Request& req) {
      const auto auth = req.header("Authorization");
      return http::Response::json(
          200,
          bj::object{{"authorization", auth ? bj::value(std::string(*auth)) : bj::value(nullptr)}});
    });
    http::ServerOptions opts;
    opts.port = 0;
    opts.threads = 2;
    opts.handler_threads = 4;  // streams and slow routes block their thread
    opts.handle_signals = false;
    opts.access_log = false;
    opts.shutdown_grace = 2s;
    server_ = std::make_unique<http::Server>(router_, metrics_, opts);
    port_ = server_->listen();
    thread_ = std::thread([this] { server_->run(); });
  }
  ~Agent() {
    server_->stop();
    thread_.join();
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::vector<bj::value> embedding_calls() {
    std::lock_guard lock(mu_);
    return embedding_calls_;
  }
  std::vector<bj::value> received() {
    std::lock_guard lock(mu_);
    return received_;
  }

 private:
  void record(const std::string& body) {
    std::lock_guard lock(mu_);
    received_.push_back(bj::parse(body));
  }
  schemagate::http::Router router_;
  schemagate::util::MetricsRegistry metrics_;
  std::unique_ptr<schemagate::http::Server> server_;
  unsigned short port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<bj::value> received_;
  std::vector<bj::value> embedding_calls_;
};

}  // namespace schemagate::testing
