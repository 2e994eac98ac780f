#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace schemagate::embed {

using Vector = std::vector<float>;

class EmbedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Turns texts into unit-length vectors whose dot product measures how close their meanings are.
// The registry stores the vectors with model(): vectors of another model are never compared, they
// are recomputed.
class Embedder {
 public:
  virtual ~Embedder() = default;
  // Names the vector space, e.g. "glove-100d-sif" or "http:text-embedding-3-small".
  virtual std::string model() const = 0;
  virtual std::size_t dimensions() const = 0;
  // One vector per text, in order. A text with nothing the model knows gets an all-zero vector.
  // Throws EmbedError when the model cannot answer (a remote server down, say).
  virtual std::vector<Vector> embed(const std::vector<std::string>& texts) = 0;
};

// Scales `v` to unit length in place; an all-zero vector stays zero.
void normalize(Vector& v);

}  // namespace schemagate::embed
