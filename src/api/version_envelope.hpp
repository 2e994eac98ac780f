#pragma once

#include "exchange/exchange_service.hpp"
#include "http/message.hpp"

#include <boost/json/value.hpp>

namespace schemagate::api {

// Seed 003 §4.2 request envelope members: schema_version and version_negotiation
// {permit_upgrade, permit_downgrade}. 400 InvalidInput naming the member that is wrong.
exchange::VersionRequest read_version_request(const boost::json::object& envelope);

// An invocation body that is the envelope itself: {"schema_version", "version_negotiation"?,
// "payload"} and nothing else (an "operation" member moves into the payload).
bool is_version_envelope(const boost::json::value& body);

}  // namespace schemagate::api
