#pragma once

#include "http/message.hpp"
#include "json/parse.hpp"

#include <boost/json/value.hpp>

namespace schemagate::api {

// Decodes a request body that must be JSON: 415 UnsupportedMediaType unless the Content-Type
// is application/json (or a +json type), 400 InvalidInput naming line and column when the text
// is not JSON or breaks a limit.
boost::json::value read_json_body(const http::Request& request, const json::ParseLimits& limits);

}  // namespace schemagate::api
