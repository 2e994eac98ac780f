#pragma once

#include "embed/embedder.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
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
  // in one go on every core, before it returns or, with in_background, on a thread of its own
  // while searches scan exactly (as when a registration crosses `exact_below`: the graph is
  // never built under the caller's lock).
  void begin_bulk_load() { bulk_ = true; }
  void end_bulk_load(bool in_background = false);
  // Waits for a graph being built in the background, and takes it (for tests and the bench).
  void wait_for_graph();
  std::size_t size() const { return live_; }
  std::size_t dimensions() const { return dims_; }
  bool approximate() const;  // the HNSW graph answers

  // The HNSW graph kept in files, so that a restart reads it back instead of building it again
  // (at a million vectors, minutes on two cores). save_graph writes `path` (which card each node
  // stands for, by `key_of` its slot, and a checksum of its vector) and `path`.hnsw (hnswlib's
  // graph), each through a temporary file and a rename; false when there is no graph.
  bool save_graph(const std::string& path,
                  const std::function<std::string(std::uint32_t slot)>& key_of) const;
  // During a bulk load, once every vector is in: takes the saved graph instead of building one.
  // Nodes whose card is gone or whose vector changed are dropped; vectors the graph lacks are
  // added to it. False, and nothing changed, when the files are missing, damaged, for other
  // dimensions, or when fewer than half of the nodes still match (a build is then quicker).
  bool load_graph(const std::string& path,
                  const std::function<std::optional<std::uint32_t>(std::string_view key)>& slot_of);

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
  struct Graph;
  // Builds a graph over the given slots' vectors (`vectors`: one after another), on every core;
  // nothing once `abandoned` is set.
  static std::unique_ptr<Graph> build(std::size_t dims, const std::vector<std::uint32_t>& slots,
                                      const float* vectors, std::size_t capacity,
                                      const std::atomic<bool>* abandoned = nullptr);
  void build_graph();
  void start_building();
  // The graph searches may use: takes a finished background build first. Const because
  // searches call it; the index's writers never run alongside searches (the caller's lock).
  Graph* ready_graph() const;
  std::uint64_t checksum(std::uint32_t slot) const;

  std::size_t exact_below_;
  bool bulk_ = false;
  std::size_t dims_ = 0;
  std::size_t live_ = 0;
  std::vector<float> data_;    // slot * dims_
  std::vector<char> present_;  // slot -> has a live vector
  mutable std::unique_ptr<Graph> graph_;
  mutable std::atomic<Graph*> graph_view_{nullptr};  // graph_, once searches may use it
  struct Build;
  mutable std::mutex build_mu_;
  mutable std::unique_ptr<Build> building_;
};

}  // namespace schemagate::registry
