#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace schemagate::evolution {

// Online nearest-centroid clustering of unit vectors (seed 000 §6.2.1): a vector joins the
// cluster whose centroid is most similar, if that similarity reaches the threshold.
// `centroids[i]` is a unit vector; the result indexes it.
std::optional<std::size_t> nearest(const std::vector<const std::vector<float>*>& centroids,
                                   const std::vector<float>& v, double threshold);

// Moves a centroid of `size` members to the normalized mean with `v` (size becomes size + 1).
void absorb(std::vector<float>& centroid, std::int64_t size, const std::vector<float>& v);

double cosine(const std::vector<float>& a, const std::vector<float>& b);  // of unit vectors

}  // namespace schemagate::evolution
