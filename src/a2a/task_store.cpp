#include "a2a/task_store.hpp"

#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/text.hpp"

#include <cstdio>
#include <limits>
#include <stdexcept>

namespace schemagate::a2a {

namespace bj = boost::json;

namespace {

constexpr std::string_view kTasks = "a2a_tasks";
constexpr std::string_view kListing = "a2a_task_listing";  // agent, owner, newest first
constexpr std::string_view kExpiry = "a2a_task_expiry";    // oldest expiry first
constexpr char kSep = '\x1f';

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string owner_prefix(const std::string& agent, const std::string& owner) {
  return agent + kSep + owner + kSep;
}

// Newest first under byte order: the time is stored inverted.
std::string listing_key(const StoredTask& t) {
  return owner_prefix(t.agent, t.owner) +
         hex16(std::numeric_limits<std::uint64_t>::max() -
               static_cast<std::uint64_t>(t.updated_ms)) +
         kSep + t.id();
}

std::string expiry_key(std::int64_t expires_ms, const std::string& id) {
  return hex16(static_cast<std::uint64_t>(expires_ms)) + kSep + id;
}

StoredTask from_document(const store::Document& d) {
  const auto& b = d.body.as_object();
  StoredTask t;
  t.task = b.at("task").as_object();
  t.agent = std::string(b.at("agent").as_string());
  t.owner = std::string(b.at("owner").as_string());
  if (const auto* u = b.if_contains("upstream_task"); u && u->is_string()) {
    t.upstream_task = std::string(u->get_string());
  }
  t.updated_ms = b.at("updated_ms").as_int64();
  t.expires_ms = b.at("expires_ms").as_int64();
  t.revision = d.revision;
  return t;
}

}  // namespace

std::string StoredTask::id() const {
  const auto* v = task.if_contains("id");
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::string StoredTask::state() const {
  const auto* s = task.if_contains("status");
  const auto* st = s && s->is_object() ? s->get_object().if_contains("state") : nullptr;
  return st && st->is_string() ? std::string(st->get_string()) : std::string();
}

TaskStore::TaskStore(store::Store& store, const util::Clock& clock,
                     std::chrono::milliseconds retention)
    : store_(store), clock_(clock), retention_(retention) {}

void TaskStore::save(StoredTask& t) {
  const std::string id(t.task.at("id").as_string());
  std::vector<store::Write> writes;
  if (t.revision > 0) {
    // Drop the previous listing and expiry entries of this task (as it was read).
    writes.push_back(store::Write::remove(std::string(kListing), listing_key(t)));
    writes.push_back(store::Write::remove(std::string(kExpiry), expiry_key(t.expires_ms, id)));
  }
  t.updated_ms = std::max(clock_.now_unix_ms(), t.updated_ms);
  const std::int64_t expires = t.updated_ms + retention_.count();
  bj::object body{{"task", t.task},
                  {"agent", t.agent},
                  {"owner", t.owner},
                  {"updated_ms", t.updated_ms},
                  {"expires_ms", expires}};
  if (!t.upstream_task.empty()) body["upstream_task"] = t.upstream_task;
  writes.insert(writes.begin(),
                store::Write::put(std::string(kTasks), id, std::move(body), t.revision));
  writes.push_back(
      store::Write::put(std::string(kListing), listing_key(t), bj::object{{"id", id}}));
  writes.push_back(
      store::Write::put(std::string(kExpiry), expiry_key(expires, id), bj::object{{"id", id}}));
  const auto done = commit_grouped(std::move(writes));
  t.revision = done.front().revision;
  t.expires_ms = expires;
  if (clock_.now_unix_ms() >= next_prune_ms_.load()) prune();
}

struct TaskStore::Pending {
  std::vector<store::Write> writes;
  std::vector<store::Document> result;
  std::exception_ptr error;
  bool done = false;
};

std::vector<store::Document> TaskStore::commit_grouped(std::vector<store::Write> writes) {
  Pending me{std::move(writes), {}, nullptr, false};
  std::unique_lock lock(group_mu_);
  waiting_.push_back(&me);
  while (!me.done) {
    if (committing_) {
      group_cv_.wait(lock);
      continue;
    }
    // This save leads: it commits everything waiting, its own included.
    committing_ = true;
    std::vector<Pending*> batch;
    batch.swap(waiting_);
    lock.unlock();
    try {
      std::vector<store::Document> results;
      if (batch.size() == 1) {
        results = store_.commit(batch.front()->writes);
      } else {
        std::vector<store::Write> all;
        for (const auto* p : batch)
          all.insert(all.end(), p->writes.begin(), p->writes.end());
        results = store_.commit(all);
      }
      std::size_t at = 0;
      for (auto* p : batch) {
        p->result.assign(std::make_move_iterator(results.begin() + static_cast<std::ptrdiff_t>(at)),
                         std::make_move_iterator(
                             results.begin() + static_cast<std::ptrdiff_t>(at + p->writes.size())));
        at += p->writes.size();
      }
    } catch (const store::ConflictError&) {
      // One of them is stale: each on its own, so that only that one fails.
      for (auto* p : batch) {
        try {
          p->result = store_.commit(p->writes);
        } catch (...) {
          p->error = std::current_exception();
        }
      }
    } catch (...) {
      for (auto* p : batch)
        p->error = std::current_exception();
    }
    lock.lock();
    for (auto* p : batch)
      p->done = true;
    committing_ = false;
    group_cv_.notify_all();
  }
  if (me.error) std::rethrow_exception(me.error);
  return std::move(me.result);
}

std::optional<StoredTask> TaskStore::get(std::string_view id) {
  const auto d = store_.get(kTasks, id);
  if (!d) return std::nullopt;
  auto t = from_document(*d);
  if (d->body.as_object().at("expires_ms").as_int64() <= clock_.now_unix_ms()) return std::nullopt;
  return t;
}

TaskStore::Page TaskStore::list(const Query& q) {
  Page page;
  const std::string prefix = owner_prefix(q.agent, q.owner);
  std::string after;
  if (!q.page_token.empty()) {
    if (!util::decode_base64(q.page_token, after) || !after.starts_with(prefix)) {
      throw std::invalid_argument("pageToken is not one this server gave out for this listing");
    }
  }
  const std::int64_t now = clock_.now_unix_ms();
  std::string cursor;
  store::ListQuery lq{prefix, "", 200};
  std::string last_key;
  for (;;) {
    lq.after_key = cursor;
    const auto chunk = store_.list(kListing, lq);
    for (const auto& entry : chunk.items) {
      const auto d = store_.get(kTasks, entry.body.at("id").as_string());
      if (!d || d->body.as_object().at("expires_ms").as_int64() <= now) continue;
      auto t = from_document(*d);
      if (listing_key(t) != entry.key) continue;  // a stale entry
      if (t.updated_ms <= q.updated_after_ms && q.updated_after_ms > 0) continue;
      if (!q.context_id.empty()) {
        const auto* c = t.task.if_contains("contextId");
        if (!c || !c->is_string() || c->get_string() != q.context_id) continue;
      }
      if (!q.state.empty() && t.state() != q.state) continue;
      ++page.total;
      if (!q.page_token.empty() && entry.key <= after) continue;  // on an earlier page
      if (page.tasks.size() < q.page_size) {
        page.tasks.push_back(std::move(t));
        last_key = entry.key;
      } else if (page.next_page_token.empty()) {
        page.next_page_token = util::encode_base64(last_key);  // more follow
      }
    }
    if (!chunk.next_after_key) break;
    cursor = *chunk.next_after_key;
  }
  return page;
}

std::size_t TaskStore::prune() {
  const std::int64_t now = clock_.now_unix_ms();
  next_prune_ms_ = now + 60'000;
  std::size_t removed = 0;
  const auto due = store_.list(kExpiry, store::ListQuery{"", "", 500});
  for (const auto& e : due.items) {
    const auto expires = static_cast<std::int64_t>(std::stoull(e.key.substr(0, 16), nullptr, 16));
    if (expires > now) break;
    const std::string id(e.body.at("id").as_string());
    std::vector<store::Write> writes{store::Write::remove(std::string(kExpiry), e.key)};
    // The task goes only if this entry is its current expiry (an update wrote a later one).
    if (const auto d = store_.get(kTasks, id); d && from_document(*d).expires_ms <= now) {
      const auto t = from_document(*d);
      writes.push_back(store::Write::remove(std::string(kTasks), id, d->revision));
      writes.push_back(store::Write::remove(std::string(kListing), listing_key(t)));
    }
    try {
      store_.commit(writes);
      ++removed;
    } catch (const store::StoreError&) {
      // Updated meanwhile: its new expiry entry decides.
    }
  }
  return removed;
}

}  // namespace schemagate::a2a
