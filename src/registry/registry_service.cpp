#include "registry/registry_service.hpp"

#include <spdlog/spdlog.h>
#include "embed/embedder.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/hash.hpp"
#include "util/text.hpp"
#include "versioning/versioning_service.hpp"

#include <algorithm>
#include <boost/json/parse.hpp>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

namespace schemagate::registry {

namespace bj = boost::json;
using Kind = RegistryError::Kind;

namespace {

constexpr std::string_view kAgents = "agents";
constexpr std::string_view kVectors = "agent_vectors";

std::string text_hash(std::string_view text) {
  return std::to_string(util::fnv1a64(text));
}

// `text` is what the vector was computed from (embedding_text of the card and its extras).
bj::object vector_document(const std::string& model, std::string_view text,
                           const embed::Vector& v) {
  return bj::object{
      {"model", model},
      {"text_hash", text_hash(text)},
      {"vector", util::encode_base64(std::string_view(reinterpret_cast<const char*>(v.data()),
                                                      v.size() * sizeof(float)))}};
}

// The stored vector when it was computed by `model` from the card's current `text`, else empty.
embed::Vector stored_vector(const bj::value& body, const std::string& model,
                            std::string_view text) {
  const auto* o = body.if_object();
  if (!o) return {};
  const auto* m = o->if_contains("model");
  const auto* h = o->if_contains("text_hash");
  const auto* v = o->if_contains("vector");
  if (!m || !h || !v || !m->is_string() || !h->is_string() || !v->is_string()) return {};
  if (m->get_string() != model.c_str() || h->get_string() != text_hash(text).c_str()) {
    return {};
  }
  std::string bytes;
  if (!util::decode_base64(v->get_string(), bytes) || bytes.size() % sizeof(float) != 0) return {};
  embed::Vector out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

std::string encode_cursor(std::string_view id) {
  static const char* hex = "0123456789abcdef";
  std::string out = "c1.";
  for (unsigned char c : id) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

std::string decode_cursor(std::string_view cursor) {
  if (cursor.empty()) return {};
  auto bad = [&] {
    return RegistryError(Kind::invalid_input,
                         "cursor \"" + std::string(cursor) + "\" is not one this registry issued");
  };
  if (!cursor.starts_with("c1.") || (cursor.size() - 3) % 2 != 0) throw bad();
  std::string out;
  for (std::size_t i = 3; i < cursor.size(); i += 2) {
    auto nibble = [&](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      throw bad();
    };
    out += static_cast<char>(nibble(cursor[i]) * 16 + nibble(cursor[i + 1]));
  }
  return out;
}

RegistryError invalid(const std::vector<CardProblem>& problems) {
  bj::array list;
  for (const auto& p : problems)
    list.push_back(bj::object{{"path", p.path}, {"message", p.message}});
  return RegistryError(Kind::invalid_card,
                       "the agent card has " + std::to_string(problems.size()) + " problem" +
                           (problems.size() == 1 ? "" : "s") + ": " + problems.front().path + " " +
                           problems.front().message,
                       bj::object{{"problems", std::move(list)}});
}

}  // namespace

bool Caller::may_see(const AgentCard& card) const {
  if (card.is_public || admin) return true;
  if (!client_id.empty() &&
      std::find(card.visible_to_clients.begin(), card.visible_to_clients.end(), client_id) !=
          card.visible_to_clients.end()) {
    return true;
  }
  return std::any_of(groups.begin(), groups.end(), [&](const std::string& g) {
    return std::find(card.visible_to_groups.begin(), card.visible_to_groups.end(), g) !=
           card.visible_to_groups.end();
  });
}

RegistryService::RegistryService(store::Store& store, const util::Clock& clock)
    : RegistryService(store, clock, Options{}) {}

std::vector<store::Write> RegistryService::card_writes(const AgentCard& card,
                                                       const std::string& model,
                                                       std::string_view embedded_text,
                                                       const embed::Vector& vector,
                                                       std::optional<std::int64_t> expected) {
  return {store::Write::put(std::string(kAgents), card.id, card.raw, expected),
          vector.empty() ? store::Write::remove(std::string(kVectors), card.id)
                         : store::Write::put(std::string(kVectors), card.id,
                                             vector_document(model, embedded_text, vector))};
}

RegistryService::RegistryService(store::Store& store, const util::Clock& clock, Options options)
    : store_(store),
      clock_(clock),
      embedder_(options.embedder),
      scenario_text_(std::move(options.scenario_text)),
      versioning_(options.versioning),
      card_limits_(options.card_limits),
      vector_graph_file_(std::move(options.vector_graph_file)),
      index_(options.exact_vector_search_below) {
  const std::string model = embedder_ ? embedder_->model() : std::string();
  // Cards whose stored vector is missing or stale, embedded in batches after the scan.
  struct Pending {
    AgentCard card;
    std::vector<std::string> extra;
    std::string text;  // what is embedded
  };
  std::vector<Pending> pending;
  std::size_t reused = 0;
  auto flush = [&] {
    if (pending.empty()) return;
    std::vector<std::string> texts;
    for (const auto& p : pending)
      texts.push_back(p.text);
    std::vector<embed::Vector> vectors;
    try {
      vectors = embedder_->embed(texts);
    } catch (const std::exception& e) {
      spdlog::warn("{}", std::string("registry: cannot embed agents at start, they are searched "
                                     "lexically until re-registered: ") +
                             e.what());
      vectors.assign(pending.size(), {});
    }
    std::vector<store::Write> writes;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      const auto& p = pending[i];
      index_.upsert(p.card, p.extra, vectors[i]);
      if (!vectors[i].empty()) {
        writes.push_back(store::Write::put(std::string(kVectors), p.card.id,
                                           vector_document(model, p.text, vectors[i])));
      }
    }
    if (!writes.empty()) store_.commit(writes);
    pending.clear();
  };
  index_.begin_bulk_load();
  // Stored vectors, read in pages beside the cards: both collections list in key order (bytes),
  // so each card's vector is found by walking forward, and only a page of them is held at once.
  std::vector<store::Document> vector_page;
  std::size_t vector_at = 0;
  std::string after_vector;
  bool more_vectors = embedder_ != nullptr;
  auto stored_body = [&](const std::string& id) -> const bj::value* {
    for (;;) {
      while (vector_at < vector_page.size() && vector_page[vector_at].key < id)
        ++vector_at;
      if (vector_at < vector_page.size()) {
        return vector_page[vector_at].key == id ? &vector_page[vector_at].body : nullptr;
      }
      if (!more_vectors) return nullptr;
      auto page = store_.list(kVectors, {"", after_vector, 1000});
      vector_page = std::move(page.items);
      vector_at = 0;
      more_vectors = page.next_after_key.has_value();
      if (more_vectors) after_vector = *page.next_after_key;
    }
  };
  // Reading and parsing the stored cards (one thread) runs beside their filing (this thread,
  // and every core while words are counted): a batch is filed while the next one is read.
  struct Batch {
    std::vector<SearchIndex::Entry> ready;  // cards with their vectors
    std::vector<Pending> pending;           // cards to embed first
  };
  std::mutex queue_mu;
  std::condition_variable queue_cv;
  std::deque<Batch> queue;
  bool read_all = false, abandoned = false;
  std::exception_ptr read_failure;
  std::thread reader([&] {
    try {
      Batch batch;
      auto hand_over = [&] {
        std::unique_lock lock(queue_mu);
        queue_cv.wait(lock, [&] { return queue.size() < 2 || abandoned; });
        if (abandoned) throw std::runtime_error("registry start abandoned");
        queue.push_back(std::move(batch));
        batch = {};
        queue_cv.notify_all();
      };
      std::string after;
      for (;;) {
        const auto page = store_.list(kAgents, {"", after, 500});
        for (const auto& d : page.items) {
          auto parsed = parse_agent_card(d.body, CardLimits::unlimited());
          auto* card = std::get_if<AgentCard>(&parsed);
          if (!card) {
            spdlog::error("registry: stored agent {} no longer reads as a card; left in the store",
                          d.key);
            continue;
          }
          meta_[card->id] = {d.revision, d.updated_at_ms};
          auto extra = extra_text(*card);
          embed::Vector v;
          if (embedder_) {
            auto text = embedding_text(*card, extra);
            if (const auto* body = stored_body(card->id)) v = stored_vector(*body, model, text);
            if (v.empty()) {
              batch.pending.push_back({std::move(*card), std::move(extra), std::move(text)});
              if (batch.pending.size() == 256) hand_over();
              continue;
            }
            ++reused;
          }
          batch.ready.push_back({std::move(*card), std::move(extra), std::move(v)});
          if (batch.ready.size() == 4096) hand_over();
        }
        if (!page.next_after_key) break;
        after = *page.next_after_key;
      }
      hand_over();
    } catch (...) {
      read_failure = std::current_exception();
    }
    std::lock_guard lock(queue_mu);
    read_all = true;
    queue_cv.notify_all();
  });
  try {
    for (;;) {
      Batch batch;
      {
        std::unique_lock lock(queue_mu);
        queue_cv.wait(lock, [&] { return !queue.empty() || read_all; });
        if (queue.empty()) break;
        batch = std::move(queue.front());
        queue.pop_front();
        queue_cv.notify_all();
      }
      if (!batch.ready.empty()) index_.upsert_many(std::move(batch.ready));
      pending = std::move(batch.pending);
      flush();
    }
  } catch (...) {
    {
      std::lock_guard lock(queue_mu);
      abandoned = true;
      queue_cv.notify_all();
    }
    reader.join();
    throw;
  }
  reader.join();
  if (read_failure) std::rethrow_exception(read_failure);
  if (!vector_graph_file_.empty()) {
    const auto started = std::chrono::steady_clock::now();
    if (index_.load_vector_graph(vector_graph_file_)) {
      spdlog::info(
          "registry: vector graph read from {} in {:.2f} s", vector_graph_file_,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
  }
  // Without a saved graph (none kept, or damaged), building one takes minutes at a million
  // cards: the server answers meanwhile, its searches scanning the vectors exactly.
  index_.end_bulk_load(true);
  if (!index_.vector_graph_ready() && index_.vector_dimensions() > 0 &&
      index_.size() >= options.exact_vector_search_below) {
    spdlog::info(
        "registry: the vector graph of {} agents is being built in the background; "
        "searches scan the vectors meanwhile",
        index_.size());
  }
  if (embedder_ && index_.size() > 0) {
    spdlog::info("{}", "registry: " + std::to_string(index_.size()) + " agents indexed, " +
                           std::to_string(reused) + " stored " + model + " vectors reused");
  }
}

RegistryService::~RegistryService() {
  if (vector_graph_file_.empty()) return;
  try {
    std::shared_lock lock(mu_);
    const auto started = std::chrono::steady_clock::now();
    if (index_.save_vector_graph(vector_graph_file_)) {
      spdlog::info(
          "registry: vector graph of {} agents written to {} in {:.2f} s", index_.size(),
          vector_graph_file_,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
  } catch (const std::exception& e) {
    spdlog::warn("registry: cannot write the vector graph to {}: {}", vector_graph_file_, e.what());
  }
}

std::vector<std::string> RegistryService::extra_text(const AgentCard& card) const {
  std::vector<std::string> out;
  if (!scenario_text_) return out;
  for (const auto& op : card.operations) {
    if (op.scenario.empty()) continue;
    for (auto& t : scenario_text_(op.scenario))
      out.push_back(std::move(t));
  }
  return out;
}

embed::Vector RegistryService::embed_card(const std::string& id, const std::string& text) const {
  if (!embedder_) return {};
  embed::Vector vector;
  try {
    vector = embedder_->embed({text}).at(0);
  } catch (const std::exception& e) {
    // The card is still registered and found lexically; the next start embeds it again.
    spdlog::warn("{}", "registry: cannot embed agent \"" + id + "\": " + e.what());
    return {};
  }
  std::shared_lock lock(mu_);
  const auto dims = index_.vector_dimensions();
  if (!vector.empty() && dims != 0 && vector.size() != dims) {
    spdlog::warn(
        "registry: agent \"{}\" embeds to {} dimensions, the index holds {}; it is searched "
        "lexically",
        id, vector.size(), dims);
    return {};
  }
  return vector;
}

embed::Vector RegistryService::embed_query(const std::string& query) const {
  if (!embedder_ || query.empty()) return {};
  try {
    return embedder_->embed({query}).at(0);
  } catch (const std::exception& e) {
    spdlog::warn(
        "{}", std::string("registry: cannot embed a search query, ranking lexically: ") + e.what());
    return {};
  }
}

RegistryService::Entry RegistryService::entry_from(std::shared_ptr<const AgentCard> card) {
  const auto& m = meta_.at(card->id);
  return Entry{std::move(card), m.first, m.second};
}

RegistryService::Registered RegistryService::store_card(const bj::value& body,
                                                        std::optional<std::int64_t> expected) {
  auto parsed = parse_agent_card(body, card_limits_);
  if (auto* problems = std::get_if<std::vector<CardProblem>>(&parsed)) throw invalid(*problems);
  AgentCard card = std::move(std::get<AgentCard>(parsed));
  if (!card.raw.contains("last_update")) {
    card.raw["last_update"] = util::format_rfc3339(clock_.now());
  }
  // Embedding may be a network call: it happens before the index is locked.
  const auto extra = extra_text(card);
  const auto text = embedding_text(card, extra);
  const embed::Vector vector = embed_card(card.id, text);
  std::vector<store::Write> version_writes;
  std::vector<std::string> contracts;
  if (versioning_) version_writes = version_operations(card, contracts);
  auto writes =
      card_writes(card, embedder_ ? embedder_->model() : std::string(), text, vector, expected);
  writes.insert(writes.begin() + 1, std::make_move_iterator(version_writes.begin()),
                std::make_move_iterator(version_writes.end()));
  std::unique_lock lock(mu_);
  store::Document doc;
  // The versioning service reads its contracts again after this write, whatever its outcome.
  struct Forget {
    versioning::VersioningService* v;
    const std::vector<std::string>& contracts;
    ~Forget() {
      for (const auto& c : contracts)
        if (v) v->forget(c);
    }
  } forget{versioning_, contracts};
  try {
    doc = store_.commit(writes).front();
  } catch (const store::ConflictError&) {
    throw RegistryError(
        Kind::conflict,
        "agent \"" + card.id + "\" is already registered; PUT /agents/" + card.id + " replaces it");
  }
  index_.upsert(card, extra, vector);
  meta_[card.id] = {doc.revision, doc.updated_at_ms};
  return Registered{Entry{index_.share(card.id), doc.revision, doc.updated_at_ms},
                    doc.revision == 1};
}

std::vector<store::Write> RegistryService::version_operations(AgentCard& card,
                                                              std::vector<std::string>& contracts) {
  std::vector<store::Write> writes;
  bj::array* raw_ops = nullptr;
  if (auto* ops = card.raw.if_contains("operations"); ops && ops->is_array()) {
    raw_ops = &ops->get_array();
  }
  for (std::size_t i = 0; i < card.operations.size(); ++i) {
    auto& op = card.operations[i];
    if (!op.scenario.empty()) continue;  // the template family is the contract
    const std::string contract =
        versioning::VersioningService::operation_contract(card.id, op.name);
    const bj::value input = op.input_schema.is_null() ? bj::value(true) : op.input_schema;
    if (op.version.empty())
      op.version = versioning_->next_version(contract, input, op.output_schema);
    auto plan = versioning_->plan_publish(contract, versioning::VersioningService::Kind::operation,
                                          op.version, input, op.output_schema);
    for (auto& w : plan.writes)
      writes.push_back(std::move(w));
    contracts.push_back(contract);
    if (raw_ops && i < raw_ops->size() && (*raw_ops)[i].is_object()) {
      (*raw_ops)[i].get_object()["version"] = op.version;
    }
  }
  return writes;
}

RegistryService::Registered RegistryService::create(const bj::value& body) {
  auto out = store_card(body, 0);
  changed(out.entry.card->id);
  return out;
}

void RegistryService::reload(const std::string& id) {
  const auto doc = store_.get(kAgents, id);
  {
    std::shared_lock lock(mu_);
    const auto it = meta_.find(id);
    if (doc ? it != meta_.end() && it->second.first >= doc->revision : it == meta_.end()) return;
  }
  // What was read may be overtaken before it is applied (a registration or removal on this
  // replica, between the read and the lock): applied only if the store still says the same under
  // the lock, which this replica's own writes take after their commit.
  const auto still_current = [&] {
    const auto now = store_.get(kAgents, id);
    return doc ? now && now->revision == doc->revision : !now;
  };
  if (!doc) {
    {
      std::unique_lock lock(mu_);
      if (!still_current()) return;
      index_.remove(id);
      meta_.erase(id);
    }
    changed(id);
    return;
  }
  auto parsed = parse_agent_card(doc->body, CardLimits::unlimited());
  auto* card = std::get_if<AgentCard>(&parsed);
  if (!card) return;
  auto extra = extra_text(*card);
  embed::Vector v;
  if (embedder_) {
    // The writing replica stored the vector in the same commit as the card.
    const auto text = embedding_text(*card, extra);
    if (const auto stored = store_.get(kVectors, id)) {
      v = stored_vector(stored->body, embedder_->model(), text);
    }
    if (v.empty()) v = embed_card(id, text);
  }
  {
    std::unique_lock lock(mu_);
    const auto it = meta_.find(id);
    if (it != meta_.end() && it->second.first >= doc->revision) return;  // a newer one won
    if (!still_current()) return;
    index_.upsert(*card, extra, v);
    meta_[id] = {doc->revision, doc->updated_at_ms};
  }
  changed(id);
}

void RegistryService::changed(const std::string& id) const {
  if (on_changed_) on_changed_(id);
}

RegistryService::Registered RegistryService::put(std::string_view id, const bj::value& body) {
  if (!body.is_object()) throw invalid({{"", "an agent card must be a JSON object"}});
  bj::value copy = body;
  auto& o = copy.get_object();
  if (const auto* given = o.if_contains("id");
      given && !(given->is_string() && given->get_string() == std::string(id).c_str())) {
    throw RegistryError(Kind::invalid_input,
                        "the card's id does not match /agents/" + std::string(id));
  }
  o["id"] = id;
  auto out = store_card(copy, std::nullopt);
  changed(out.entry.card->id);
  return out;
}

namespace {

// The named schemas an A2A card declares (seed 001): the root `schemas` map, and the map in
// any extension's params.
bj::object a2a_schemas(const bj::object& a2a) {
  bj::object out;
  if (const auto* caps = a2a.if_contains("capabilities"); caps && caps->is_object()) {
    if (const auto* exts = caps->get_object().if_contains("extensions"); exts && exts->is_array()) {
      for (const auto& e : exts->get_array()) {
        const auto* params = e.is_object() ? e.get_object().if_contains("params") : nullptr;
        const auto* s =
            params && params->is_object() ? params->get_object().if_contains("schemas") : nullptr;
        if (s && s->is_object()) {
          for (const auto& kv : s->get_object())
            out[kv.key()] = kv.value();
        }
      }
    }
  }
  if (const auto* s = a2a.if_contains("schemas"); s && s->is_object()) {
    for (const auto& kv : s->get_object())
      out[kv.key()] = kv.value();
  }
  return out;
}

// The first mode of `modes` (or else of `fallback`) naming a declared schema.
std::string schema_mode(const bj::value* modes, const bj::value* fallback,
                        const bj::object& schemas) {
  for (const auto* list : {modes, fallback}) {
    if (!list || !list->is_array()) continue;
    for (const auto& m : list->get_array()) {
      if (!m.is_string()) continue;
      const auto mt = util::parse_media_type(m.get_string());
      if (!mt.schema.empty() && schemas.contains(mt.schema)) return mt.schema;
    }
  }
  return {};
}

// Seed 002: an object schema with a property per FieldDefinition (a text field is a string).
bj::value schema_from_fields(const bj::value& fields) {
  bj::object props;
  bj::array required;
  for (const auto& f : fields.as_array()) {
    if (!f.is_object()) continue;
    const auto& o = f.get_object();
    const auto* name = o.if_contains("name");
    if (!name || !name->is_string()) continue;
    bj::value schema = bj::object{};
    if (const auto* s = o.if_contains("schema"); s && (s->is_object() || s->is_bool())) {
      schema = *s;
    } else if (const auto* k = o.if_contains("kind");
               k && k->is_string() && k->get_string() == "text") {
      schema = bj::object{{"type", "string"}};
    }
    if (const auto* d = o.if_contains("description"); d && d->is_string() && schema.is_object()) {
      schema.get_object().emplace("description", *d);
    }
    props[name->get_string()] = std::move(schema);
    const auto* opt = o.if_contains("optional");
    if (!opt || !opt->is_bool() || !opt->get_bool()) required.push_back(*name);
  }
  return bj::object{
      {"type", "object"}, {"properties", std::move(props)}, {"required", std::move(required)}};
}

}  // namespace

bj::object card_from_a2a(const bj::object& a2a, const std::string& fallback_id) {
  auto text = [&](const char* k) {
    const auto* v = a2a.if_contains(k);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  // Where and how the agent is reached: its JSON-RPC interface, 1.0 preferred.
  std::string url = text("url");
  std::string version = "0.3";
  if (const auto* ifs = a2a.if_contains("supportedInterfaces"); ifs && ifs->is_array()) {
    for (const auto& i : ifs->get_array()) {
      if (!i.is_object()) continue;
      const auto& o = i.get_object();
      const auto* binding = o.if_contains("protocolBinding");
      const auto* u = o.if_contains("url");
      const auto* v = o.if_contains("protocolVersion");
      if (!binding || !binding->is_string() || binding->get_string() != "JSONRPC" || !u ||
          !u->is_string()) {
        continue;
      }
      const std::string iv = v && v->is_string() ? std::string(v->get_string()) : "0.3";
      if (url.empty() || version != "1.0") {
        url = std::string(u->get_string());
        version = iv.starts_with("1.") || iv == "1" ? "1.0" : "0.3";
      }
    }
  }
  const bj::object schemas = a2a_schemas(a2a);
  bj::array capabilities, tags, operations;
  std::string description = text("description");
  if (const auto* skills = a2a.if_contains("skills"); skills && skills->is_array()) {
    for (const auto& sk : skills->get_array()) {
      if (!sk.is_object()) continue;
      const auto& s = sk.get_object();
      const auto* id = s.if_contains("id");
      if (!id || !id->is_string() || id->get_string().empty()) continue;
      capabilities.push_back(*id);
      if (const auto* t = s.if_contains("tags"); t && t->is_array()) {
        for (const auto& x : t->get_array()) {
          if (x.is_string()) tags.push_back(x);
        }
      }
      bj::object op{{"name", *id}};
      if (const auto* d = s.if_contains("description"); d && d->is_string()) {
        description += " " + std::string(d->get_string());
        op["description"] = *d;
      }
      const auto in =
          schema_mode(s.if_contains("inputModes"), a2a.if_contains("defaultInputModes"), schemas);
      const auto out =
          schema_mode(s.if_contains("outputModes"), a2a.if_contains("defaultOutputModes"), schemas);
      const auto* in_fields = s.if_contains("inputFields");
      const auto* out_fields = s.if_contains("outputFields");
      if (!in.empty()) {
        op["input_schema"] = schemas.at(in);
        op["input_schema_name"] = in;
      } else if (in_fields && in_fields->is_array()) {
        op["input_schema"] = schema_from_fields(*in_fields);
      } else {
        op["input_schema"] = bj::object{};
      }
      if (!out.empty()) {
        op["output_schema"] = schemas.at(out);
        op["output_schema_name"] = out;
      } else if (out_fields && out_fields->is_array()) {
        op["output_schema"] = schema_from_fields(*out_fields);
      }
      if (in_fields && in_fields->is_array()) op["input_fields"] = *in_fields;
      if (out_fields && out_fields->is_array()) op["output_fields"] = *out_fields;
      operations.push_back(std::move(op));
    }
  }
  bj::object card{{"id", fallback_id},
                  {"name", text("name")},
                  {"description", description},
                  {"capabilities", std::move(capabilities)},
                  {"tags", std::move(tags)},
                  {"protocols", bj::array{"a2a"}},
                  {"a2a_protocol_version", version},
                  {"a2a_card", a2a}};
  if (!url.empty()) card["endpoint"] = url;
  if (!operations.empty()) card["operations"] = std::move(operations);
  if (const auto v = text("version"); !v.empty()) card["version"] = v;
  if (const auto* p = a2a.if_contains("provider"); p && p->is_object()) {
    if (const auto* org = p->get_object().if_contains("organization"); org && org->is_string()) {
      card["provider"] = *org;
    }
  }
  return card;
}

RegistryService::Registered RegistryService::crawl(const std::string& url, CardFetcher& fetcher) {
  if (!url.starts_with("http://") && !url.starts_with("https://")) {
    throw RegistryError(Kind::invalid_input, "url must be an http:// or https:// URL");
  }
  const std::string where = url.ends_with(".json")
                                ? url
                                : (url.ends_with("/") ? url.substr(0, url.size() - 1) : url) +
                                      "/.well-known/agent-card.json";
  std::string text;
  try {
    text = fetcher.fetch(where);
  } catch (const std::exception& e) {
    throw RegistryError(Kind::unreachable, "cannot fetch " + where + ": " + e.what());
  }
  bj::value doc;
  try {
    doc = bj::parse(text);
  } catch (const std::exception& e) {
    throw RegistryError(Kind::invalid_card, where + " is not JSON: " + e.what());
  }
  if (!doc.is_object()) throw RegistryError(Kind::invalid_card, where + " is not a JSON object");
  auto& o = doc.get_object();
  // An id derived from where the card lives: host and path, as a slug.
  std::string derived;
  for (char c : where.substr(where.find("://") + 3)) {
    derived += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  }
  if (derived.size() > 128) derived.resize(128);
  const bool a2a = o.contains("skills") || o.contains("protocolVersion") ||
                   o.contains("supportedInterfaces") ||
                   (o.contains("url") && !o.contains("endpoint") && !o.contains("id"));
  bj::value card = a2a ? bj::value(card_from_a2a(o, derived)) : doc;
  if (!card.get_object().contains("id")) card.get_object()["id"] = derived;
  const std::string id(card.at("id").as_string());
  return put(id, card);
}

void RegistryService::remove(std::string_view id) {
  {
    std::unique_lock lock(mu_);
    const auto removed =
        store_.commit({store::Write::remove(std::string(kAgents), std::string(id)),
                       store::Write::remove(std::string(kVectors), std::string(id))});
    if (removed.front().revision == 0) {
      throw RegistryError(Kind::not_found, "no agent \"" + std::string(id) + "\"");
    }
    index_.remove(id);
    meta_.erase(std::string(id));
  }
  changed(std::string(id));
}

RegistryService::Entry RegistryService::get(std::string_view id, const Caller& caller) {
  std::shared_lock lock(mu_);
  const auto* card = index_.find(id);
  // A private agent answers exactly like a missing one: its existence is not disclosed.
  if (!card || !caller.may_see(*card)) {
    throw RegistryError(Kind::not_found, "no agent \"" + std::string(id) + "\"");
  }
  return entry_from(index_.share(id));
}

RegistryService::Page RegistryService::list(const Filters& filters, std::string_view cursor,
                                            std::size_t limit, const Caller& caller) {
  const std::string after = decode_cursor(cursor);
  std::shared_lock lock(mu_);
  bool more = false;
  const auto cards = index_.list(
      filters, after, std::clamp<std::size_t>(limit, 1, 500),
      [&](const AgentCard& c) { return caller.may_see(c); }, more);
  Page page;
  for (const auto* c : cards)
    page.agents.push_back(entry_from(index_.share(c->id)));
  if (more && !page.agents.empty()) page.next_cursor = encode_cursor(page.agents.back().card->id);
  return page;
}

bj::object RegistryService::search(const SearchRequest& r, const Caller& caller) {
  const auto start = std::chrono::steady_clock::now();
  const embed::Vector query_vector = r.ranked ? embed_query(r.query) : embed::Vector{};
  std::shared_lock lock(mu_);
  const auto result =
      index_.search(r.query, query_vector, r.filters, std::min<std::size_t>(r.top, 1000), r.skip,
                    r.ranked, [&](const AgentCard& c) { return caller.may_see(c); });
  bj::array results;
  for (const auto& h : result.hits) {
    bj::object item{
        {"id", h.card->id}, {"name", h.card->name}, {"description", h.card->description}};
    if (r.ranked) item["score"] = std::round(h.score * 10000.0) / 10000.0;
    if (r.include_metadata) item["metadata"] = h.card->raw;
    results.push_back(std::move(item));
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return bj::object{{"results", std::move(results)},
                    {"count", result.count},
                    {"top", r.top},
                    {"skip", r.skip},
                    {"query", r.query},
                    {"search_time", std::round(ms * 1000.0) / 1000.0}};
}

std::size_t RegistryService::refresh_scenario(const std::string& scenario) {
  std::vector<std::shared_ptr<const AgentCard>> affected;
  {
    std::shared_lock lock(mu_);
    bool more = false;
    for (const auto* card : index_.list(
             {}, "", std::numeric_limits<std::size_t>::max(), [](const AgentCard&) { return true; },
             more)) {
      for (const auto& op : card->operations) {
        if (op.scenario == scenario) {
          affected.push_back(index_.share(card->id));
          break;
        }
      }
    }
  }
  for (const auto& card : affected) {
    const auto extra = extra_text(*card);
    const auto text = embedding_text(*card, extra);
    const embed::Vector vector = embed_card(card->id, text);
    std::unique_lock lock(mu_);
    if (index_.share(card->id) != card) continue;  // replaced meanwhile: that one is current
    if (!vector.empty()) {
      store_.put(std::string(kVectors), card->id,
                 vector_document(embedder_->model(), text, vector));
    }
    index_.upsert(*card, extra, vector);
  }
  return affected.size();
}

std::size_t RegistryService::size() const {
  std::shared_lock lock(mu_);
  return index_.size();
}

}  // namespace schemagate::registry
