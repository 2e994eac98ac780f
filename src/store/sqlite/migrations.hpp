#pragma once

#include <span>

namespace schemagate::store::sqlite {

struct Migration {
  int version;
  const char* name;
  const char* sql;
};

// Applied in order at start; each one's version is recorded in schema_migrations.
std::span<const Migration> migrations();

}  // namespace schemagate::store::sqlite
