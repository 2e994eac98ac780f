#pragma once

// The fuzz input read as a JSON document (depth 32), for the harnesses of parsers that take
// JSON: nullopt when it is not one (the strict parser has its own harness).
#include "json/parse.hpp"

#include <cstdint>
#include <optional>

inline std::optional<boost::json::value> json_input(const std::uint8_t* data, std::size_t size) {
  schemagate::json::ParseLimits limits;
  limits.max_depth = 32;
  try {
    return schemagate::json::parse(std::string_view(reinterpret_cast<const char*>(data), size),
                                   limits);
  } catch (const schemagate::json::ParseError&) {
    return std::nullopt;
  }
}
