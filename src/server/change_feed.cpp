#include "server/change_feed.hpp"

#include "gateway/access.hpp"
#include "registry/registry_service.hpp"
#include "store/store.hpp"

#include <spdlog/spdlog.h>

namespace schemagate::server {

ChangeFeed::ChangeFeed(store::Store& store, registry::RegistryService& registry,
                       gateway::AccessControl& access, std::chrono::milliseconds interval)
    : store_(store), registry_(registry), access_(access) {
  cursor_ = store_.last_change();  // what is older was loaded at start
  thread_ = std::thread([this, interval] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      wake_.wait_for(lock, interval, [this] { return stopping_; });
      if (stopping_) break;
      lock.unlock();
      try {
        catch_up();
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
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
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
      cursor_ = c.sequence;
    }
    if (keys) access_.forget_cached_keys();
    read += changes.size();
  }
}

}  // namespace schemagate::server
