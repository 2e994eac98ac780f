#include "registry/vector_index.hpp"

#include <hnswlib/hnswlib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace schemagate::registry {

namespace {
// hnswlib parameters: 16 links per node and a 100-wide construction beam; the search beam is
// at least 64 and grows with k.
constexpr std::size_t kLinks = 16;
constexpr std::size_t kConstructionEf = 100;
constexpr std::size_t kMinSearchEf = 64;
}  // namespace

struct VectorIndex::Graph {
  hnswlib::InnerProductSpace space;
  hnswlib::HierarchicalNSW<float> hnsw;
  Graph(std::size_t dims, std::size_t capacity)
      : space(dims), hnsw(&space, capacity, kLinks, kConstructionEf) {}
  Graph(std::size_t dims, const std::string& file, std::size_t capacity)
      : space(dims), hnsw(&space, file, false, capacity) {}
};

namespace {
constexpr char kGraphMagic[] = "schemagate-vector-graph-1\n";
// Labels for nodes that stand for no slot (dropped at load): far above any slot.
constexpr hnswlib::labeltype kDroppedLabel = hnswlib::labeltype{1} << 40;

template <class T>
void put(std::ostream& out, const T& v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof v);
}
template <class T>
bool get(std::istream& in, T& v) {
  return static_cast<bool>(in.read(reinterpret_cast<char*>(&v), sizeof v));
}
}  // namespace

// A graph being built on a thread of its own, over a copy of the vectors it started with.
struct VectorIndex::Build {
  std::vector<std::uint32_t> slots;
  std::vector<float> vectors;
  std::unique_ptr<Graph> graph;
  std::atomic<bool> done{false};
  std::atomic<bool> abandoned{false};  // the index is going away: stop adding nodes
  std::thread thread;
};

VectorIndex::VectorIndex(std::size_t exact_below)
    : exact_below_(std::max<std::size_t>(exact_below, 1)) {}

VectorIndex::~VectorIndex() {
  // A server stopping while its graph is built (minutes at a million vectors) does not wait.
  if (building_ && building_->thread.joinable()) {
    building_->abandoned = true;
    building_->thread.join();
  }
}

bool VectorIndex::approximate() const {
  return ready_graph() != nullptr;
}

void VectorIndex::wait_for_graph() {
  {
    std::lock_guard lock(build_mu_);
    if (building_ && building_->thread.joinable()) building_->thread.join();
  }
  ready_graph();
}

void VectorIndex::start_building() {
  auto b = std::make_unique<Build>();
  for (std::uint32_t s = 0; s < present_.size(); ++s) {
    if (!present_[s]) continue;
    b->slots.push_back(s);
    const float* v = data_.data() + static_cast<std::size_t>(s) * dims_;
    b->vectors.insert(b->vectors.end(), v, v + dims_);
  }
  Build* raw = b.get();
  const std::size_t dims = dims_, capacity = std::max<std::size_t>(live_ * 2, 1024);
  std::lock_guard lock(build_mu_);
  building_ = std::move(b);
  raw->thread = std::thread([raw, dims, capacity] {
    try {
      raw->graph = build(dims, raw->slots, raw->vectors.data(), capacity, &raw->abandoned);
    } catch (const std::exception& e) {
      // Out of memory, most likely: searches go on scanning, and a later registration retries.
      spdlog::error("vector graph build failed: {}", e.what());
    }
    raw->done = true;
  });
}

VectorIndex::Graph* VectorIndex::ready_graph() const {
  if (Graph* g = graph_view_.load(std::memory_order_acquire)) return g;
  std::unique_lock lock(build_mu_, std::try_to_lock);
  if (!lock || !building_ || !building_->done) return nullptr;  // scan exactly meanwhile
  if (building_->thread.joinable()) building_->thread.join();
  auto graph = std::move(building_->graph);
  if (!graph) {
    building_.reset();
    return nullptr;
  }
  // What changed while it was built: vectors added since, and vectors erased since.
  std::vector<char> in_graph(present_.size(), 0);
  for (const auto s : building_->slots) {
    if (s < present_.size() && present_[s]) {
      in_graph[s] = 1;
    } else {
      graph->hnsw.markDelete(s);
    }
  }
  for (std::uint32_t s = 0; s < present_.size(); ++s) {
    if (!present_[s] || in_graph[s]) continue;
    auto& h = graph->hnsw;
    if (h.cur_element_count >= h.max_elements_) h.resizeIndex(h.max_elements_ * 2);
    h.addPoint(data_.data() + static_cast<std::size_t>(s) * dims_, s);
  }
  building_.reset();
  graph_ = std::move(graph);
  graph_view_.store(graph_.get(), std::memory_order_release);
  return graph_.get();
}

void VectorIndex::add(std::uint32_t slot, const embed::Vector& unit) {
  if (unit.empty()) return;
  if (dims_ == 0) dims_ = unit.size();
  if (unit.size() != dims_) {
    throw std::invalid_argument("vector has " + std::to_string(unit.size()) +
                                " dimensions, the index " + std::to_string(dims_));
  }
  // A finished build is taken first, so that it is brought up to date without this vector.
  Graph* graph = ready_graph();
  if (present_.size() <= slot) {
    present_.resize(slot + 1, 0);
    data_.resize(present_.size() * dims_, 0.0f);
  }
  std::copy(unit.begin(), unit.end(), data_.begin() + static_cast<std::ptrdiff_t>(slot * dims_));
  present_[slot] = 1;
  ++live_;
  if (Graph* g = graph) {
    auto& h = g->hnsw;
    if (h.cur_element_count >= h.max_elements_) h.resizeIndex(h.max_elements_ * 2);
    h.addPoint(unit.data(), slot);
  } else if (live_ >= exact_below_ && !bulk_ && !building_) {
    start_building();  // added to it when it is taken (ready_graph)
  }
}

void VectorIndex::end_bulk_load(bool in_background) {
  bulk_ = false;
  if (ready_graph() || building_ || live_ < exact_below_) return;
  if (in_background) {
    start_building();
  } else {
    build_graph();
  }
}

std::unique_ptr<VectorIndex::Graph> VectorIndex::build(std::size_t dims,
                                                       const std::vector<std::uint32_t>& slots,
                                                       const float* vectors, std::size_t capacity,
                                                       const std::atomic<bool>* abandoned) {
  auto graph = std::make_unique<Graph>(dims, capacity);
  // hnswlib inserts concurrently (it locks per node); distinct labels from several threads.
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < slots.size(); i = next++) {
      if (abandoned && abandoned->load(std::memory_order_relaxed)) return;
      graph->hnsw.addPoint(vectors + i * dims, slots[i]);
    }
  };
  const unsigned threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (auto& t : pool)
    t.join();
  if (abandoned && abandoned->load()) return nullptr;
  graph->hnsw.setEf(kMinSearchEf);
  return graph;
}

void VectorIndex::build_graph() {
  // In place: the vectors of live slots are gathered so that build() reads them in order.
  std::vector<std::uint32_t> slots;
  std::vector<float> vectors;
  vectors.reserve(live_ * dims_);
  for (std::uint32_t s = 0; s < present_.size(); ++s) {
    if (!present_[s]) continue;
    slots.push_back(s);
    const float* v = data_.data() + static_cast<std::size_t>(s) * dims_;
    vectors.insert(vectors.end(), v, v + dims_);
  }
  graph_ = build(dims_, slots, vectors.data(), std::max<std::size_t>(live_ * 2, 1024));
  graph_view_.store(graph_.get(), std::memory_order_release);
}

std::uint64_t VectorIndex::checksum(std::uint32_t slot) const {
  // FNV-1a over the vector's bytes: a changed vector is a changed checksum.
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto* bytes =
      reinterpret_cast<const unsigned char*>(data_.data() + static_cast<std::size_t>(slot) * dims_);
  for (std::size_t i = 0; i < dims_ * sizeof(float); ++i)
    h = (h ^ bytes[i]) * 0x100000001b3ull;
  return h;
}

bool VectorIndex::save_graph(const std::string& path,
                             const std::function<std::string(std::uint32_t slot)>& key_of) const {
  {
    std::lock_guard lock(build_mu_);
    if (building_ && building_->thread.joinable()) building_->thread.join();
  }
  Graph* graph = ready_graph();
  if (!graph) return false;
  auto& h = graph->hnsw;
  const std::string graph_file = path + ".hnsw";
  h.saveIndex(graph_file + ".tmp");
  std::ofstream out(path + ".tmp", std::ios::binary | std::ios::trunc);
  out.write(kGraphMagic, sizeof kGraphMagic - 1);
  put(out, static_cast<std::uint64_t>(dims_));
  put(out, static_cast<std::uint64_t>(h.cur_element_count));
  put(out, static_cast<std::uint64_t>(std::filesystem::file_size(graph_file + ".tmp")));
  for (std::size_t i = 0; i < h.cur_element_count; ++i) {
    const auto internal = static_cast<hnswlib::tableint>(i);
    const auto label = h.getExternalLabel(internal);
    const bool live = !h.isMarkedDeleted(internal) && label < present_.size() && present_[label];
    const std::string key = live ? key_of(static_cast<std::uint32_t>(label)) : std::string();
    put(out, static_cast<std::uint32_t>(key.size()));
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    put(out, live ? checksum(static_cast<std::uint32_t>(label)) : std::uint64_t{0});
  }
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path + ".tmp");
  // The graph first: a map file names the graph size it was written with.
  std::filesystem::rename(graph_file + ".tmp", graph_file);
  std::filesystem::rename(path + ".tmp", path);
  return true;
}

bool VectorIndex::load_graph(
    const std::string& path,
    const std::function<std::optional<std::uint32_t>(std::string_view key)>& slot_of) {
  if (ready_graph() || building_ || dims_ == 0) return false;
  const std::string graph_file = path + ".hnsw";
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  char magic[sizeof kGraphMagic - 1];
  std::uint64_t dims = 0, nodes = 0, graph_bytes = 0;
  if (!in.read(magic, sizeof magic) || std::memcmp(magic, kGraphMagic, sizeof magic) != 0 ||
      !get(in, dims) || !get(in, nodes) || !get(in, graph_bytes) || dims != dims_) {
    return false;
  }
  std::error_code ec;
  if (std::filesystem::file_size(graph_file, ec) != graph_bytes || ec) return false;
  // Which slot each node now stands for (kDroppedLabel + node when none).
  std::vector<hnswlib::labeltype> labels(nodes);
  std::vector<char> claimed(present_.size(), 0);
  std::size_t kept = 0;
  for (std::uint64_t i = 0; i < nodes; ++i) {
    std::uint32_t size = 0;
    std::uint64_t sum = 0;
    if (!get(in, size) || size > (1u << 20)) return false;
    std::string key(size, '\0');
    if (!in.read(key.data(), size) || !get(in, sum)) return false;
    labels[i] = kDroppedLabel + i;
    if (key.empty()) continue;
    const auto slot = slot_of(key);
    if (slot && *slot < present_.size() && present_[*slot] && !claimed[*slot] &&
        checksum(*slot) == sum) {
      labels[i] = *slot;
      claimed[*slot] = 1;
      ++kept;
    }
  }
  if (kept * 2 < live_) return false;
  std::unique_ptr<Graph> loaded;
  try {
    loaded = std::make_unique<Graph>(dims_, graph_file, std::max<std::size_t>(live_ * 2, 1024));
  } catch (const std::exception&) {
    return false;  // hnswlib found the file damaged
  }
  auto& h = loaded->hnsw;
  if (h.cur_element_count != nodes) return false;
  h.label_lookup_.clear();
  for (std::size_t i = 0; i < nodes; ++i) {
    const auto internal = static_cast<hnswlib::tableint>(i);
    h.setExternalLabel(internal, labels[i]);
    h.label_lookup_[labels[i]] = internal;
    if (labels[i] >= kDroppedLabel && !h.isMarkedDeleted(internal)) h.markDeletedInternal(internal);
  }
  if (h.max_elements_ < nodes + (live_ - kept)) h.resizeIndex(nodes + (live_ - kept) + 1024);
  for (std::uint32_t s = 0; s < present_.size(); ++s) {
    if (present_[s] && !claimed[s])
      h.addPoint(data_.data() + static_cast<std::size_t>(s) * dims_, s);
  }
  h.setEf(kMinSearchEf);
  graph_ = std::move(loaded);
  graph_view_.store(graph_.get(), std::memory_order_release);
  return true;
}

void VectorIndex::erase(std::uint32_t slot) {
  if (slot >= present_.size() || !present_[slot]) return;
  Graph* graph = ready_graph();  // taken before: it must not drop this slot a second time
  present_[slot] = 0;
  --live_;
  if (graph) graph->hnsw.markDelete(slot);
}

embed::Vector VectorIndex::vector_of(std::uint32_t slot) const {
  if (slot >= present_.size() || !present_[slot]) return {};
  const float* v = data_.data() + static_cast<std::size_t>(slot) * dims_;
  return embed::Vector(v, v + dims_);
}

float VectorIndex::similarity(std::uint32_t slot, const embed::Vector& query) const {
  if (slot >= present_.size() || !present_[slot] || query.size() != dims_) return 0.0f;
  const float* v = data_.data() + static_cast<std::size_t>(slot) * dims_;
  float dot = 0.0f;
  for (std::size_t d = 0; d < dims_; ++d)
    dot += v[d] * query[d];
  return dot;
}

std::vector<VectorIndex::Neighbour> VectorIndex::exact(
    const embed::Vector& query, std::size_t k,
    const std::function<bool(std::uint32_t)>& accept) const {
  std::vector<Neighbour> all;
  for (std::uint32_t s = 0; s < present_.size(); ++s) {
    if (present_[s] && accept(s)) all.push_back({s, similarity(s, query)});
  }
  const auto better = [](const Neighbour& a, const Neighbour& b) {
    return a.similarity != b.similarity ? a.similarity > b.similarity : a.slot < b.slot;
  };
  const std::size_t n = std::min(k, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), better);
  all.resize(n);
  return all;
}

std::vector<VectorIndex::Neighbour> VectorIndex::nearest(
    const embed::Vector& query, std::size_t k,
    const std::function<bool(std::uint32_t)>& accept) const {
  if (k == 0 || live_ == 0 || query.size() != dims_) return {};
  Graph* graph = ready_graph();
  if (!graph) return exact(query, k, accept);
  const std::size_t fetch = std::min(live_, k * 2);
  // setEf mutates the graph; searches run under a shared lock, so the beam is fixed at the
  // widest any search needs instead of per call.
  auto pq = graph->hnsw.searchKnn(query.data(), fetch);
  std::vector<Neighbour> out;
  while (!pq.empty()) {
    const auto [distance, label] = pq.top();
    pq.pop();
    const auto slot = static_cast<std::uint32_t>(label);
    if (accept(slot)) out.push_back({slot, 1.0f - distance});
  }
  std::reverse(out.begin(), out.end());
  if (out.size() < k && fetch < live_) return exact(query, k, accept);
  if (out.size() > k) out.resize(k);
  return out;
}

}  // namespace schemagate::registry
