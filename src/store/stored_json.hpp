#pragma once

// Internal to the store backends: how a stored body is read back.

#include <boost/json/value.hpp>

#include <string_view>

namespace schemagate::store {

// Stored bodies were serialized by the store itself: parsed back without the request limits,
// keeping every double bit-exact.
boost::json::value parse_stored(std::string_view text);

}  // namespace schemagate::store
