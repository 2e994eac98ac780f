#include "util/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

namespace schemagate::util {

void configure_logging(const std::string& level) {
  const auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    throw std::invalid_argument("unknown log level '" + level +
                                "' (use trace, debug, info, warn, error, critical or off)");
  }
  auto logger = spdlog::get("schemagate");
  if (!logger) logger = spdlog::stderr_logger_mt("schemagate");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
  logger->set_level(lvl);
  spdlog::set_default_logger(logger);
}

std::shared_ptr<spdlog::logger> access_log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = spdlog::stdout_logger_mt("access");
    l->set_pattern("%v");
    l->flush_on(spdlog::level::info);
    return l;
  }();
  return logger;
}

}  // namespace schemagate::util
