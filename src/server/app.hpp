#pragma once

#include "server/config.hpp"

#include <functional>

namespace schemagate::exchange {
class ExchangeService;
}
namespace schemagate::registry {
class RegistryService;
}

namespace schemagate::server {

// Runs before the server listens, with the services ready (the demo publishes its templates and
// registers its agents).
using StartHook = std::function<void(exchange::ExchangeService&, registry::RegistryService&)>;

// Opens the store, wires every route and serves until SIGINT/SIGTERM. Returns the process exit
// code: 0 after a clean shutdown, 1 when the store or the listener cannot start (the reason is
// logged).
int run(const Config& config, const StartHook& on_start = {});

}  // namespace schemagate::server
