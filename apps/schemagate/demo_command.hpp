#pragma once

#include "server/config.hpp"

namespace schemagate::cli {

// `schemagate demo`: the server plus seed 000's demo agents, in one process.
int run_demo(const server::Config& config);

}  // namespace schemagate::cli
