#pragma once

#include "embed/embedder.hpp"
#include "http/client.hpp"

#include <atomic>
#include <chrono>
#include <string>

namespace schemagate::embed {

// An OpenAI-compatible embeddings server (OpenAI, vLLM, llama.cpp, Ollama, text-embeddings-
// inference...): POST {base_url}/v1/embeddings {"model", "input": [texts]} answering
// {"data": [{"index", "embedding": [...]}]}. Texts go in batches of `batch_size`; vectors are
// normalized here, whatever the server does.
class HttpEmbedder final : public Embedder {
 public:
  struct Options {
    std::string base_url;  // http://host:port[/prefix]
    std::string model;
    std::string api_key;  // sent as Authorization: Bearer; never logged
    std::chrono::milliseconds timeout{10000};
    std::size_t batch_size = 64;
  };
  HttpEmbedder(http::Client& client, Options options);

  std::string model() const override { return "http:" + options_.model; }
  // Learned from the first answer (0 until then).
  std::size_t dimensions() const override { return dimensions_; }
  std::vector<Vector> embed(const std::vector<std::string>& texts) override;

 private:
  std::vector<Vector> embed_batch(const std::vector<std::string>& texts, std::size_t from,
                                  std::size_t to);
  http::Client& client_;
  Options options_;
  std::atomic<std::size_t> dimensions_{0};  // registrations embed concurrently
};

}  // namespace schemagate::embed
