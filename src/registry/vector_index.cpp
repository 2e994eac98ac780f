#include "registry/vector_index.hpp"

#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <atomic>
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
};

VectorIndex::VectorIndex(std::size_t exact_below)
    : exact_below_(std::max<std::size_t>(exact_below, 1)) {}
VectorIndex::~VectorIndex() = default;

bool VectorIndex::approximate() const {
  return graph_ != nullptr;
}

void VectorIndex::add(std::uint32_t slot, const embed::Vector& unit) {
  if (unit.empty()) return;
  if (dims_ == 0) dims_ = unit.size();
  if (unit.size() != dims_) {
    throw std::invalid_argument("vector has " + std::to_string(unit.size()) +
                                " dimensions, the index " + std::to_string(dims_));
  }
  if (present_.size() <= slot) {
    present_.resize(slot + 1, 0);
    data_.resize(present_.size() * dims_, 0.0f);
  }
  std::copy(unit.begin(), unit.end(), data_.begin() + static_cast<std::ptrdiff_t>(slot * dims_));
  present_[slot] = 1;
  ++live_;
  if (graph_) {
    auto& h = graph_->hnsw;
    if (h.cur_element_count >= h.max_elements_) h.resizeIndex(h.max_elements_ * 2);
    h.addPoint(unit.data(), slot);
  } else if (live_ >= exact_below_ && !bulk_) {
    build_graph();
  }
}

void VectorIndex::end_bulk_load() {
  bulk_ = false;
  if (!graph_ && live_ >= exact_below_) build_graph();
}

void VectorIndex::build_graph() {
  graph_ = std::make_unique<Graph>(dims_, std::max<std::size_t>(live_ * 2, 1024));
  std::vector<std::uint32_t> slots;
  for (std::uint32_t s = 0; s < present_.size(); ++s) {
    if (present_[s]) slots.push_back(s);
  }
  // hnswlib inserts concurrently (it locks per node); distinct labels from several threads.
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < slots.size(); i = next++) {
      graph_->hnsw.addPoint(data_.data() + static_cast<std::size_t>(slots[i]) * dims_, slots[i]);
    }
  };
  const unsigned threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (auto& t : pool)
    t.join();
  graph_->hnsw.setEf(kMinSearchEf);
}

void VectorIndex::erase(std::uint32_t slot) {
  if (slot >= present_.size() || !present_[slot]) return;
  present_[slot] = 0;
  --live_;
  if (graph_) graph_->hnsw.markDelete(slot);
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
  if (!graph_) return exact(query, k, accept);
  const std::size_t fetch = std::min(live_, k * 2);
  // setEf mutates the graph; searches run under a shared lock, so the beam is fixed at the
  // widest any search needs instead of per call.
  auto pq = graph_->hnsw.searchKnn(query.data(), fetch);
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
