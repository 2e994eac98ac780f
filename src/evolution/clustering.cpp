#include "evolution/clustering.hpp"

#include "embed/embedder.hpp"

namespace schemagate::evolution {

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    s += static_cast<double>(a[i]) * b[i];
  return s;
}

std::optional<std::size_t> nearest(const std::vector<const std::vector<float>*>& centroids,
                                   const std::vector<float>& v, double threshold) {
  std::optional<std::size_t> best;
  double best_sim = threshold;
  for (std::size_t i = 0; i < centroids.size(); ++i) {
    const double sim = cosine(*centroids[i], v);
    if (sim >= best_sim) {
      best_sim = sim;
      best = i;
    }
  }
  return best;
}

void absorb(std::vector<float>& centroid, std::int64_t size, const std::vector<float>& v) {
  for (std::size_t k = 0; k < v.size() && k < centroid.size(); ++k) {
    centroid[k] = centroid[k] * static_cast<float>(size) + v[k];
  }
  embed::normalize(centroid);
}

}  // namespace schemagate::evolution
