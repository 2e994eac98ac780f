#pragma once

// Keeps one replica's in-memory views (the search index, the API-key cache) in step with what
// other replicas commit to the shared database: it follows the store's change log, in order,
// from where it started, every `interval`.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace schemagate::store {
class Store;
}
namespace schemagate::registry {
class RegistryService;
}
namespace schemagate::gateway {
class AccessControl;
class GatewayService;
}  // namespace schemagate::gateway
namespace schemagate::exchange {
class ExchangeService;
}
namespace schemagate::versioning {
class VersioningService;
}

namespace schemagate::server {

// Services that keep other stored documents in memory: each is told of every change and reads
// again what is its own.
struct FollowingServices {
  exchange::ExchangeService* exchange = nullptr;
  versioning::VersioningService* versioning = nullptr;
  gateway::GatewayService* gateway = nullptr;
};

class ChangeFeed {
 public:
  ChangeFeed(store::Store& store, registry::RegistryService& registry,
             gateway::AccessControl& access, FollowingServices others,
             std::chrono::milliseconds interval);
  ~ChangeFeed();  // stops following
  ChangeFeed(const ChangeFeed&) = delete;
  ChangeFeed& operator=(const ChangeFeed&) = delete;

  // Applies what was committed since the last call; returns how many changes it read.
  std::size_t catch_up();
  // Says this replica is alive (collection "replicas") and counts the replicas seen in the last
  // few seconds, which share the clients' rates. Returns that count.
  std::size_t heartbeat();

 private:
  store::Store& store_;
  registry::RegistryService& registry_;
  gateway::AccessControl& access_;
  FollowingServices others_;
  std::int64_t cursor_ = 0;
  std::string replica_id_;
  std::chrono::steady_clock::time_point last_beat_{};
  std::mutex mu_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace schemagate::server
