#pragma once

#include "server/config.hpp"

namespace schemagate::server {

// Opens the store, wires every route and serves until SIGINT/SIGTERM. Returns the process exit
// code: 0 after a clean shutdown, 1 when the store or the listener cannot start (the reason is
// logged).
int run(const Config& config);

}  // namespace schemagate::server
