#pragma once

#include <span>

namespace schemagate::store::postgres {

struct Migration {
  int version;
  const char* name;
  const char* sql;
};

// Applied in order at start, under an advisory lock; each one's version is recorded in
// schema_migrations. The same versions as the SQLite store's: one schema, two dialects.
std::span<const Migration> migrations();

}  // namespace schemagate::store::postgres
