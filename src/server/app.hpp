#pragma once

#include "server/config.hpp"

#include <functional>

namespace schemagate::exchange {
class ExchangeService;
}

namespace schemagate::server {

// Runs before the server listens, with the services ready (the demo publishes its templates).
using StartHook = std::function<void(exchange::ExchangeService&)>;

// Opens the store, wires every route and serves until SIGINT/SIGTERM. Returns the process exit
// code: 0 after a clean shutdown, 1 when the store or the listener cannot start (the reason is
// logged).
int run(const Config& config, const StartHook& on_start = {});

}  // namespace schemagate::server
