#include "store/postgres/migrations.hpp"

namespace schemagate::store::postgres {

namespace {

// Never edit a migration that has shipped: add a new one. Bodies are text, not jsonb: jsonb
// would reorder members and rewrite numbers, and the store hands bodies back as written. Keys
// use the "C" collation so that they list in byte order, as SQLite's do.
constexpr Migration kMigrations[] = {
    {1, "documents",
     R"sql(
CREATE TABLE documents (
  collection TEXT NOT NULL,
  key        TEXT COLLATE "C" NOT NULL,
  revision   BIGINT NOT NULL CHECK (revision > 0),
  body       TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (collection, key)
);
)sql"},
    {2, "events",
     R"sql(
CREATE TABLE events (
  sequence   BIGSERIAL PRIMARY KEY,
  stream     TEXT NOT NULL,
  body       TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX events_by_stream ON events (stream, sequence);
)sql"},
    {3, "changes",
     R"sql(
CREATE TABLE changes (
  sequence   BIGSERIAL PRIMARY KEY,
  collection TEXT NOT NULL,
  key        TEXT COLLATE "C" NOT NULL,
  revision   BIGINT NOT NULL,
  created_at BIGINT NOT NULL
);
)sql"},
};

}  // namespace

std::span<const Migration> migrations() {
  return kMigrations;
}

}  // namespace schemagate::store::postgres
