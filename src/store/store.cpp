#include "store/store.hpp"

#include "json/parse.hpp"
#include "store/postgres/postgres_store.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/stored_json.hpp"

namespace schemagate::store {

Write Write::put(std::string collection, std::string key, boost::json::value body,
                 std::optional<std::int64_t> expected_revision) {
  return Write{Kind::put, std::move(collection), std::move(key), std::move(body),
               expected_revision};
}

Write Write::remove(std::string collection, std::string key,
                    std::optional<std::int64_t> expected_revision) {
  return Write{Kind::remove, std::move(collection), std::move(key), nullptr, expected_revision};
}

boost::json::value parse_stored(std::string_view text) {
  json::ParseLimits limits;
  limits.max_depth = json::kMaxParseDepth;
  limits.max_string_bytes = std::size_t{1} << 31;
  limits.max_document_bytes = std::size_t{1} << 31;
  limits.reject_duplicate_keys = false;
  return json::parse(text, limits);
}

Document written(const Write& w, std::int64_t current, std::int64_t created, std::int64_t now) {
  if (w.expected_revision && *w.expected_revision != current) {
    throw ConflictError(w.collection, w.key, w.expected_revision, current);
  }
  Document d;
  d.collection = w.collection;
  d.key = w.key;
  if (w.kind == Write::Kind::remove) {
    d.revision = current;  // the revision it had (0: there was nothing to remove)
    d.body = nullptr;
    return d;
  }
  d.revision = current + 1;
  d.body = w.body;
  d.created_at_ms = created;
  d.updated_at_ms = now;
  return d;
}

namespace {
std::string describe_expected(std::optional<std::int64_t> expected) {
  if (!expected) return "any revision";
  if (*expected == 0) return "no existing document";
  return "revision " + std::to_string(*expected);
}
}  // namespace

ConflictError::ConflictError(std::string collection, std::string key,
                             std::optional<std::int64_t> expected, std::int64_t actual)
    : StoreError(collection + "/" + key + ": expected " + describe_expected(expected) + ", found " +
                 (actual == 0 ? std::string("no document") : "revision " + std::to_string(actual))),
      collection_(std::move(collection)),
      key_(std::move(key)),
      actual_(actual) {}

Document Store::put(std::string collection, std::string key, boost::json::value body,
                    std::optional<std::int64_t> expected_revision) {
  return commit({Write::put(std::move(collection), std::move(key), std::move(body),
                            expected_revision)})
      .front();
}

bool Store::remove(std::string collection, std::string key,
                   std::optional<std::int64_t> expected_revision) {
  return commit({Write::remove(std::move(collection), std::move(key), expected_revision)})
             .front()
             .revision != 0;
}

void Store::scan(std::string_view collection, std::string_view prefix,
                 const std::function<void(const Document&)>& each) {
  std::string after;
  for (;;) {
    const auto page = list(collection, {std::string(prefix), after, 200});
    for (const auto& d : page.items)
      each(d);
    if (!page.next_after_key) return;
    after = *page.next_after_key;
  }
}

std::unique_ptr<Store> open_store(const StoreOptions& options, const util::Clock& clock) {
  const std::string_view t = options.target;
  if (t.starts_with("postgres://") || t.starts_with("postgresql://")) {
    return postgres::open(options, clock);
  }
  return sqlite::open(options, clock);
}

}  // namespace schemagate::store
