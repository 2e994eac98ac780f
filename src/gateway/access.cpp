#include "gateway/access.hpp"

#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/trace.hpp"

#include <sodium.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace schemagate::gateway {

namespace bj = boost::json;

namespace {

constexpr std::string_view kKeys = "api_keys";      // hash -> principal
constexpr std::string_view kAudit = "audit";        // event stream
constexpr std::string_view kUsage = "quota_usage";  // "<client>/<yyyy-mm-dd>" -> {requests}

std::string utc_day(const util::Clock& clock) {
  return util::format_rfc3339(clock.now()).substr(0, 10);
}

std::string hex(const unsigned char* data, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[data[i] >> 4];
    out += digits[data[i] & 15];
  }
  return out;
}

std::string hash_key(std::string_view key) {
  unsigned char out[32];
  crypto_generichash(out, sizeof out, reinterpret_cast<const unsigned char*>(key.data()),
                     key.size(), nullptr, 0);
  return hex(out, sizeof out);
}

bj::object principal_json(const Principal& p, std::int64_t created_ms) {
  bj::array groups;
  for (const auto& g : p.groups)
    groups.push_back(bj::value(g));
  return bj::object{{"client_id", p.client_id},
                    {"role", to_string(p.role)},
                    {"groups", std::move(groups)},
                    {"rate_limit", bj::object{{"requests_per_second", p.rate.requests_per_second},
                                              {"burst", p.rate.burst},
                                              {"requests_per_day", p.rate.requests_per_day}}},
                    {"created_at_ms", created_ms}};
}

}  // namespace

std::string_view to_string(Role r) {
  switch (r) {
    case Role::admin:
      return "admin";
    case Role::publisher:
      return "publisher";
    default:
      return "client";
  }
}

std::optional<Role> role_from(std::string_view s) {
  if (s == "admin") return Role::admin;
  if (s == "publisher") return Role::publisher;
  if (s == "client") return Role::client;
  return std::nullopt;
}

AccessControl::AccessControl(store::Store& store, const util::Clock& clock,
                             std::string bootstrap_admin_key)
    : store_(store), clock_(clock) {
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialize");
  if (!bootstrap_admin_key.empty()) admin_hash_ = hash_key(bootstrap_admin_key);
  has_stored_keys_ = !store_.list(kKeys, {"", "", 1}).items.empty();
  audit_writer_ = std::thread([this] {
    std::unique_lock lock(audit_mu_);
    while (!stopping_) {
      audit_cv_.wait_for(lock, std::chrono::milliseconds(50));
      if (audit_queue_.empty() && usage_dirty_.empty()) continue;
      lock.unlock();
      try {
        flush_audit();
      } catch (const std::exception&) {
        // The store reports its own failures; a batch of records is not worth a crash.
      }
      lock.lock();
    }
  });
}

std::vector<bj::value> AccessControl::to_events(const std::vector<AuditRecord>& records) {
  std::vector<bj::value> out;
  out.reserve(records.size());
  for (const auto& r : records) {
    out.push_back(bj::object{{"at", util::format_rfc3339(std::chrono::system_clock::time_point(
                                        std::chrono::milliseconds(r.at_ms)))},
                             {"client_id", r.client_id},
                             {"action", r.action},
                             {"target", r.target},
                             {"status", r.status},
                             {"latency_ms", std::round(r.latency_ms * 1000) / 1000}});
    if (!r.trace_id.empty()) out.back().as_object()["trace_id"] = r.trace_id;
  }
  return out;
}

AccessControl::~AccessControl() {
  {
    std::lock_guard lock(audit_mu_);
    stopping_ = true;
  }
  audit_cv_.notify_all();
  audit_writer_.join();
  flush_audit();
}

void AccessControl::flush_audit() {
  // Held until the batch is stored: a reader that flushes first must not miss a batch that the
  // writer thread has taken from the queue but not yet stored.
  std::lock_guard writing(audit_write_mu_);
  std::vector<AuditRecord> batch;
  std::map<std::string, std::uint64_t> usage;
  {
    std::lock_guard lock(audit_mu_);
    batch.swap(audit_queue_);
    usage.swap(usage_dirty_);
  }
  if (!batch.empty()) store_.append_events(kAudit, to_events(batch));
  std::vector<store::Write> writes;
  for (const auto& [key, count] : usage) {
    writes.push_back(store::Write::put(std::string(kUsage), key, bj::object{{"requests", count}}));
  }
  if (!writes.empty()) store_.commit(writes);
}

bool AccessControl::open() const {
  return admin_hash_.empty() && !has_stored_keys_;
}

std::optional<Principal> AccessControl::authenticate(std::string_view key) const {
  if (key.empty()) return std::nullopt;
  const std::string h = hash_key(key);
  if (!admin_hash_.empty() && sodium_memcmp(h.data(), admin_hash_.data(), h.size()) == 0) {
    return Principal{"admin", Role::admin, {}, {}};
  }
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(key_cache_mu_);
    if (const auto it = key_cache_.find(h); it != key_cache_.end()) {
      if (now - it->second.second < kKeyCacheTtl) return it->second.first;
      key_cache_.erase(it);
    }
  }
  const auto doc = store_.get(kKeys, h);
  if (!doc) return std::nullopt;
  const auto& o = doc->body.as_object();
  Principal p;
  p.client_id = o.at("client_id").as_string();
  p.role = role_from(o.at("role").as_string()).value_or(Role::client);
  for (const auto& g : o.at("groups").as_array())
    p.groups.emplace_back(g.as_string());
  p.rate.requests_per_second = o.at("rate_limit").at("requests_per_second").to_number<double>();
  p.rate.burst = o.at("rate_limit").at("burst").to_number<double>();
  if (const auto* q = o.at("rate_limit").as_object().if_contains("requests_per_day")) {
    p.rate.requests_per_day = q->to_number<std::uint64_t>();
  }
  std::lock_guard lock(key_cache_mu_);
  if (key_cache_.size() >= kKeyCacheMax) key_cache_.clear();
  key_cache_.insert_or_assign(h, std::make_pair(p, now));
  return p;
}

AccessControl::Created AccessControl::create_key(const std::string& client_id, Role role,
                                                 std::vector<std::string> groups, RateLimit rate) {
  unsigned char raw[24];
  randombytes_buf(raw, sizeof raw);
  Created c;
  c.key = "sgk_" + hex(raw, sizeof raw);
  c.principal = Principal{client_id, role, std::move(groups), rate};
  store_.put(std::string(kKeys), hash_key(c.key), principal_json(c.principal, clock_.now_unix_ms()),
             0);
  return c;
}

std::size_t AccessControl::revoke_keys(const std::string& client_id) {
  std::vector<store::Write> writes;
  store_.scan(kKeys, "", [&](const store::Document& d) {
    const auto* c = d.body.as_object().if_contains("client_id");
    if (c && c->is_string() && c->get_string() == client_id.c_str()) {
      writes.push_back(store::Write::remove(std::string(kKeys), d.key));
    }
  });
  if (!writes.empty()) store_.commit(writes);
  forget_cached_keys();
  return writes.size();
}

int AccessControl::take_quota(const Principal& p) {
  if (p.rate.requests_per_day == 0) return 0;
  const std::string key = p.client_id + "/" + utc_day(clock_);
  if (shared_quotas_) return take_shared_quota(key, p.rate.requests_per_day);
  std::lock_guard lock(audit_mu_);
  auto it = usage_.find(key);
  if (it == usage_.end()) {
    const auto stored = store_.get(kUsage, key);
    it = usage_.emplace(key, stored ? stored->body.at("requests").to_number<std::uint64_t>() : 0)
             .first;
  }
  if (it->second >= p.rate.requests_per_day) {
    const auto now =
        std::chrono::duration_cast<std::chrono::seconds>(clock_.now().time_since_epoch()).count();
    return static_cast<int>(86400 - now % 86400);
  }
  usage_dirty_[key] = ++it->second;
  return 0;
}

int AccessControl::take_shared_quota(const std::string& key, std::uint64_t limit) {
  for (int attempt = 0; attempt < 32; ++attempt) {
    const auto current = store_.get(kUsage, key);
    const std::uint64_t used =
        current ? current->body.at("requests").to_number<std::uint64_t>() : 0;
    if (used >= limit) {
      const auto now =
          std::chrono::duration_cast<std::chrono::seconds>(clock_.now().time_since_epoch()).count();
      return static_cast<int>(86400 - now % 86400);
    }
    try {
      store_.put(std::string(kUsage), key, bj::object{{"requests", used + 1}},
                 current ? current->revision : 0);
      return 0;
    } catch (const store::ConflictError&) {
      // Another replica counted a request meanwhile: read again.
    }
  }
  return 1;  // counted by too many replicas at once: come back in a second
}

int AccessControl::take_token(const Principal& p) {
  if (p.rate.requests_per_second <= 0) return 0;
  const double share = static_cast<double>(rate_share_.load());
  const double rate = p.rate.requests_per_second / share;
  const double burst =
      std::max(1.0, (p.rate.burst > 0 ? p.rate.burst : p.rate.requests_per_second) / share);
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mu_);
  auto [it, fresh] = buckets_.try_emplace(p.client_id, Bucket{burst, now});
  Bucket& b = it->second;
  if (!fresh) {
    const double elapsed = std::chrono::duration<double>(now - b.last).count();
    b.tokens = std::min(burst, b.tokens + elapsed * rate);
    b.last = now;
  }
  if (b.tokens >= 1.0) {
    b.tokens -= 1.0;
    return 0;
  }
  return static_cast<int>(std::ceil((1.0 - b.tokens) / rate));
}

void AccessControl::audit(const std::string& client_id, std::string_view action,
                          std::string_view target, int status, double latency_ms,
                          std::string_view trace_id) {
  if (trace_id.empty()) {
    if (const auto* t = util::current_trace()) trace_id = t->trace_id;
  }
  AuditRecord record{clock_.now_unix_ms(), client_id, std::string(action),
                     std::string(target),  status,    latency_ms,
                     std::string(trace_id)};
  std::lock_guard lock(audit_mu_);
  audit_queue_.push_back(std::move(record));
}

void AccessControl::forget_cached_keys() {
  std::lock_guard lock(key_cache_mu_);
  key_cache_.clear();
}

bj::array AccessControl::audit_tail(std::size_t limit) {
  flush_audit();  // what is queued belongs in the answer
  const auto events = store_.read_last_events(kAudit, limit);
  bj::array out;
  for (const auto& e : events)
    out.push_back(e.body);
  return out;
}

}  // namespace schemagate::gateway
