#pragma once

#include "store/store.hpp"

namespace schemagate::store::sqlite {

// The embedded store: one SQLite file in WAL mode with synchronous=FULL, so a write that
// commit() returned from is on disk and survives kill -9 and power loss alike.
std::unique_ptr<Store> open(const StoreOptions& options, const util::Clock& clock);

}  // namespace schemagate::store::sqlite
