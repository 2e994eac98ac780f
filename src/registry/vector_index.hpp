#pragma once

#include "embed/embedder.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace schemagate::registry {

// Unit vectors by index slot, searched by cosine similarity: exhaustively while the index is
// small (exact, and faster than a graph at that size), through an HNSW graph (hnswlib) once it
// holds `exact_below` vectors or more.
class VectorIndex {
 public:
  explicit VectorIndex(std::size_t exact_below = 10000);
  ~VectorIndex();
  VectorIndex(const VectorIndex&) = delete;
  VectorIndex& operator=(const VectorIndex&) = delete;

  // `slot` must be new (the search index never reuses one); throws std::invalid_argument when
  // the vector's dimensions differ from the first one's.
  void add(std::uint32_t slot, const embed::Vector& unit);
  void erase(std::uint32_t slot);
  // While loading many vectors at once (a restart), the graph waits: end_bulk_load() builds it
  // in one go on every core.
  void begin_bulk_load() { bulk_ = true; }
  void end_bulk_load();
  std::size_t size() const { return live_; }
  std::size_t dimensions() const { return dims_; }
  bool approximate() const;  // the HNSW graph answers

  // A copy of the slot's vector, empty when it has none.
  embed::Vector vector_of(std::uint32_t slot) const;
  std::size_t exact_below() const { return exact_below_; }

  // Cosine similarity of the slot's vector with `query`, 0 when the slot has none.
  float similarity(std::uint32_t slot, const embed::Vector& query) const;

  struct Neighbour {
    std::uint32_t slot;
    float similarity;
  };
  // The `k` accepted slots most similar to `query`, best first. Through the graph, candidates are
  // over-fetched and filtered; when too few pass, the search falls back to an exact scan so that
  // a narrow filter never hides a match.
  std::vector<Neighbour> nearest(const embed::Vector& query, std::size_t k,
                                 const std::function<bool(std::uint32_t)>& accept) const;

 private:
  std::vector<Neighbour> exact(const embed::Vector& query, std::size_t k,
                               const std::function<bool(std::uint32_t)>& accept) const;
  void build_graph();

  std::size_t exact_below_;
  bool bulk_ = false;
  std::size_t dims_ = 0;
  std::size_t live_ = 0;
  std::vector<float> data_;    // slot * dims_
  std::vector<char> present_;  // slot -> has a live vector
  struct Graph;
  std::unique_ptr<Graph> graph_;
};

}  // namespace schemagate::registry
