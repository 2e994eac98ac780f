#pragma once

// Internal to the store backends: what SQLite and PostgreSQL share around their own SQL.

#include "store/store.hpp"

#include <boost/json/value.hpp>

#include <string_view>

namespace schemagate::store {

// Stored bodies were serialized by the store itself: parsed back without the request limits,
// keeping every double bit-exact.
boost::json::value parse_stored(std::string_view text);

// One write of a batch, between the backend's read of the document's head (`current`
// revision, 0 when absent, and its `created` time) and its own SQL: throws ConflictError when
// the write's precondition fails, else returns the document commit() reports for it.
Document written(const Write& w, std::int64_t current, std::int64_t created, std::int64_t now);

}  // namespace schemagate::store
