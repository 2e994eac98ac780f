#pragma once

#include <memory>
#include <string>

namespace spdlog {
class logger;
}

namespace schemagate::util {

// Diagnostics go to stderr through the default logger; the access log (one JSON object per
// line) goes to stdout so it can be shipped without parsing human text.
void configure_logging(const std::string& level);
std::shared_ptr<spdlog::logger> access_log();

}  // namespace schemagate::util
