#include "store/sqlite/migrations.hpp"

namespace schemagate::store::sqlite {

namespace {

// Never edit a migration that has shipped: add a new one.
constexpr Migration kMigrations[] = {
    {1, "documents",
     R"sql(
CREATE TABLE documents (
  collection TEXT NOT NULL,
  key        TEXT NOT NULL,
  revision   INTEGER NOT NULL CHECK (revision > 0),
  body       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (collection, key)
) WITHOUT ROWID;
)sql"},
    {2, "events",
     R"sql(
CREATE TABLE events (
  sequence   INTEGER PRIMARY KEY AUTOINCREMENT,
  stream     TEXT NOT NULL,
  body       TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX events_by_stream ON events (stream, sequence);
)sql"},
    {3, "changes",
     R"sql(
CREATE TABLE changes (
  sequence   INTEGER PRIMARY KEY AUTOINCREMENT,
  collection TEXT NOT NULL,
  key        TEXT NOT NULL,
  revision   INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
)sql"},
};

}  // namespace

std::span<const Migration> migrations() {
  return kMigrations;
}

}  // namespace schemagate::store::sqlite
