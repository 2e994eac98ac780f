#pragma once

#include "exchange/exchange_service.hpp"
#include "http/server.hpp"
#include "json/parse.hpp"
#include "store/store.hpp"

#include <string>

namespace schemagate::server {

// Everything `schemagate serve` can be told, from flags, SCHEMAGATE_* variables or a file.
struct Config {
  Config() { http.handler_threads = 16; }  // gateway calls block: keep the I/O threads free
  http::ServerOptions http;
  store::StoreOptions store;
  json::ParseLimits json_limits;
  exchange::ExchangeLimits exchange;
  std::string log_level = "info";
  std::string admin_key;  // from SCHEMAGATE_ADMIN_KEY only: keys do not belong in argv
};

// "HOST:PORT", "[IPv6]:PORT" or ":PORT" (all interfaces). Throws std::invalid_argument naming
// the bad part.
void apply_listen_address(const std::string& text, http::ServerOptions& options);

}  // namespace schemagate::server
