#pragma once

#include <boost/json/value.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace schemagate::store {
class Store;
}
namespace schemagate::util {
class Clock;
}

namespace schemagate::gateway {

enum class Role { client = 0, publisher = 1, admin = 2 };
std::string_view to_string(Role r);
std::optional<Role> role_from(std::string_view s);

struct RateLimit {
  double requests_per_second = 0;  // 0: unlimited
  double burst = 0;
  std::uint64_t requests_per_day = 0;  // quota per UTC day; 0: unlimited
};

// Who a request comes from, once its key is checked.
struct Principal {
  std::string client_id;
  Role role = Role::client;
  std::vector<std::string> groups;
  RateLimit rate;
};

// API keys (seed 004 §7), stored as BLAKE2b hashes: a key is shown once, when created. The first
// admin key comes from the environment; with no key at all the server is "open" (loopback only,
// every caller an admin).
class AccessControl {
 public:
  AccessControl(store::Store& store, const util::Clock& clock, std::string bootstrap_admin_key);
  ~AccessControl();  // writes what the audit queue still holds

  bool open() const;
  // nullopt: no such key.
  // Known keys are remembered for a short while (kKeyCacheTtl) so that an authenticated request
  // does not read the database: there is no key revocation yet, and a key made by another
  // process sharing the database is found on its first use.
  std::optional<Principal> authenticate(std::string_view key) const;

  struct Created {
    std::string key;  // the only time it is visible
    Principal principal;
  };
  Created create_key(const std::string& client_id, Role role, std::vector<std::string> groups,
                     RateLimit rate);

  // Removes every key of a client; returns how many. Cached principals go at once here, and
  // on other replicas when they read the change (within a second).
  std::size_t revoke_keys(const std::string& client_id);

  // Token bucket per client: 0 when the request may go, else the seconds to wait.
  int take_token(const Principal& p);
  // Daily quota per client: 0 when the request may go, else the seconds until the UTC day
  // turns. Counts are kept across restarts (written with the audit batches).
  int take_quota(const Principal& p);
  // Several replicas share the store: quota counts are then taken in the store itself, one
  // optimistic increment per request, so that the quota is exact across replicas.
  void count_quotas_in_store(bool shared) { shared_quotas_ = shared; }
  // Rates across N live replicas behind a load balancer that spreads requests evenly: each
  // replica's bucket holds 1/N of the rate and of the burst (docs/operations.md).
  void share_rates_among(std::size_t replicas) { rate_share_ = std::max<std::size_t>(1, replicas); }

  // Registrations and invocations: who, what, status, latency; never payload content. Entries
  // are queued and written in batches (one disk sync per batch, at most ~50 ms later), so that
  // auditing does not put a disk sync on every request.
  // `trace_id`: the W3C trace the action belongs to; empty takes the current request's.
  void audit(const std::string& client_id, std::string_view action, std::string_view target,
             int status, double latency_ms, std::string_view trace_id = {});
  boost::json::array audit_tail(std::size_t limit);
  // Keys changed on another replica: cached principals are looked up again.
  void forget_cached_keys();
  void flush_audit();

 private:
  store::Store& store_;
  const util::Clock& clock_;
  std::string admin_hash_;
  bool shared_quotas_ = false;
  std::atomic<std::size_t> rate_share_{1};
  int take_shared_quota(const std::string& key, std::uint64_t limit);
  std::atomic<bool> has_stored_keys_{false};
  mutable std::mutex mu_;
  std::mutex audit_mu_;
  std::mutex audit_write_mu_;  // taken before audit_mu_
  std::condition_variable audit_cv_;
  // Records wait as plain fields: the JSON (and its RFC 3339 timestamp) is built by the writer
  // thread, off the request path.
  struct AuditRecord {
    std::int64_t at_ms;
    std::string client_id, action, target;
    int status;
    double latency_ms;
    std::string trace_id;
  };
  static std::vector<boost::json::value> to_events(const std::vector<AuditRecord>& records);
  static constexpr std::chrono::seconds kKeyCacheTtl{60};
  static constexpr std::size_t kKeyCacheMax = 10000;
  mutable std::mutex key_cache_mu_;
  mutable std::unordered_map<std::string,
                             std::pair<Principal, std::chrono::steady_clock::time_point>>
      key_cache_;  // key hash -> principal, when looked up
  std::vector<AuditRecord> audit_queue_;
  bool stopping_ = false;
  std::thread audit_writer_;
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point last;
  };
  std::map<std::string, Bucket> buckets_;
  std::map<std::string, std::uint64_t> usage_;        // "<client>/<yyyy-mm-dd>" -> requests
  std::map<std::string, std::uint64_t> usage_dirty_;  // to write with the next batch
};

}  // namespace schemagate::gateway
