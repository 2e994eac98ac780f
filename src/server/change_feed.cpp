#include "server/change_feed.hpp"

#include "exchange/exchange_service.hpp"
#include "gateway/access.hpp"
#include "gateway/gateway_service.hpp"
#include "registry/registry_service.hpp"
#include "store/store.hpp"
#include "util/ids.hpp"
#include "versioning/versioning_service.hpp"

#include <spdlog/spdlog.h>

namespace schemagate::server {

ChangeFeed::ChangeFeed(store::Store& store, registry::RegistryService& registry,
                       gateway::AccessControl& access, FollowingServices others,
                       std::chrono::milliseconds interval)
    : store_(store), registry_(registry), access_(access), others_(others) {
  cursor_ = store_.last_change();  // what is older was loaded at start
  replica_id_ = util::new_uuid();
  heartbeat();
  thread_ = std::thread([this, interval] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      lock.unlock();
      // PostgreSQL's NOTIFY wakes this at once; the interval bounds the wait (and the stop).
      store_.wait_for_changes(interval);
      lock.lock();
      if (stopping_) break;
      lock.unlock();
      try {
        catch_up();
        if (std::chrono::steady_clock::now() - last_beat_ > std::chrono::seconds(1)) heartbeat();
      } catch (const std::exception& e) {
        // The database is restarting, say: the next round tries again from the same place.
        spdlog::debug("change feed: {}", e.what());
      }
      lock.lock();
    }
  });
}

ChangeFeed::~ChangeFeed() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  try {
    store_.remove("replicas", replica_id_);  // the others take back its share of the rates
  } catch (const std::exception&) {
    // The database is gone too; the entry ages out.
  }
}

std::size_t ChangeFeed::heartbeat() {
  last_beat_ = std::chrono::steady_clock::now();
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  store_.put("replicas", replica_id_, boost::json::object{{"seen_ms", now}});
  std::size_t alive = 0;
  std::vector<std::string> gone;
  store_.scan("replicas", "", [&](const store::Document& d) {
    const auto seen = d.body.at("seen_ms").to_number<std::int64_t>();
    if (now - seen < 3000) {
      ++alive;
    } else if (now - seen > 60'000) {
      gone.push_back(d.key);  // a replica that stopped a while ago
    }
  });
  for (const auto& key : gone)
    store_.remove("replicas", key);
  access_.share_rates_among(alive);
  return alive;
}

std::size_t ChangeFeed::catch_up() {
  std::size_t read = 0;
  for (;;) {
    const auto changes = store_.read_changes(cursor_, 500);
    if (changes.empty()) return read;
    if (changes.front().sequence > cursor_ + store::Store::kChangesKept) {
      spdlog::warn("change feed: fell behind the change log; restart this replica to reload");
    }
    bool keys = false;
    for (const auto& c : changes) {
      if (c.collection == "agents") registry_.reload(c.key);
      if (c.collection == "api_keys") keys = true;
      if (others_.exchange) others_.exchange->on_stored_change(c.collection, c.key);
      if (others_.versioning) others_.versioning->on_stored_change(c.collection, c.key);
      if (others_.gateway) others_.gateway->on_stored_change(c.collection, c.key);
      cursor_ = c.sequence;
    }
    if (keys) access_.forget_cached_keys();
    read += changes.size();
  }
}

}  // namespace schemagate::server
