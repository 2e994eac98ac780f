#pragma once

#include "exchange/exchange_service.hpp"
#include "http/server.hpp"
#include "json/parse.hpp"
#include "registry/agent_card.hpp"
#include "store/store.hpp"

#include <chrono>
#include <string>

namespace schemagate::server {

// How search embeds text (seed 004 §5.3).
struct SearchConfig {
  // "word-vectors" (built in, offline), "http" (an OpenAI-compatible server) or "none".
  std::string embedder = "word-vectors";
  std::string word_vectors;  // empty: share/schemagate/ beside the binary, else the build's own
  std::string embedding_url;
  std::string embedding_model;
  std::string embedding_api_key;  // from SCHEMAGATE_EMBEDDING_API_KEY only
  std::size_t exact_vector_search_below = 10000;
  // Where the vector graph is kept between runs: "" beside a SQLite file (<db>.vector-graph),
  // none for PostgreSQL or :memory:; "none" never.
  std::string vector_graph_file;
};

// The A2A face (seeds 001, 002).
struct A2AConfig {
  std::string public_url;  // base URL in agent cards; empty: the request's Host
  std::chrono::hours task_retention{24 * 7};
};

// Seed 003: schema versions, mappings and signatures.
struct VersioningConfig {
  std::string policy = "strict";  // the breaking-change policy: strict or lenient
  unsigned min_deprecation_days = 90;
  bool sign_responses = true;  // signed negotiation, versions, suggestions, profiles
};

// Seed 000 §6.2: schema self-evolution (needs an embedder).
struct EvolutionConfig {
  bool enabled = true;
  unsigned interval_ms = 5000;      // how often the pools take in new fragments
  double similarity_threshold = 0;  // 0: calibrated for the embedder
  double heat_threshold = 50;
  unsigned max_experimental_keys = 10;
  std::string chat_url, chat_model;  // intent induction by a chat model (else the rules)
  std::string chat_api_key;          // from SCHEMAGATE_CHAT_API_KEY only
  std::string settings_file;         // JSON: every threshold by name (with_settings)
};

// Everything `schemagate serve` can be told, from flags, SCHEMAGATE_* variables or a file.
struct Config {
  Config() { http.handler_threads = 16; }  // gateway calls block: keep the I/O threads free
  http::ServerOptions http;
  store::StoreOptions store;
  json::ParseLimits json_limits;
  exchange::ExchangeLimits exchange;
  SearchConfig search;
  registry::CardLimits card_limits;
  A2AConfig a2a;
  VersioningConfig versioning;
  EvolutionConfig evolution;
  std::string log_level = "info";
  bool list_routes =
      false;              // print "METHOD PATTERN" per route and exit (what /openapi.json covers)
  std::string admin_key;  // from SCHEMAGATE_ADMIN_KEY only: keys do not belong in argv
};

// "HOST:PORT", "[IPv6]:PORT" or ":PORT" (all interfaces). Throws std::invalid_argument naming
// the bad part.
void apply_listen_address(const std::string& text, http::ServerOptions& options);

}  // namespace schemagate::server
