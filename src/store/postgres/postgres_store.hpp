#pragma once

#include "store/store.hpp"

namespace schemagate::store::postgres {

// The store for several replicas: a PostgreSQL database named by a postgres:// URL (libpq's
// parameters, sslmode included, pass through: ?sslmode=verify-full asks for TLS). A pool of
// StoreOptions::pool_size connections; migrations run once under an advisory lock when replicas
// start together; a database that cannot be reached answers util::ContractError 503
// Unavailable (Retry-After 1) until it can again, each call trying to reconnect.
std::unique_ptr<Store> open(const StoreOptions& options, const util::Clock& clock);

// The URL without its password, for logs and /readyz.
std::string redact(const std::string& url);

}  // namespace schemagate::store::postgres
