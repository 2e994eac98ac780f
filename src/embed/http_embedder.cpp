#include "embed/http_embedder.hpp"

#include <boost/json.hpp>

namespace schemagate::embed {

namespace bj = boost::json;

HttpEmbedder::HttpEmbedder(http::Client& client, Options options)
    : client_(client), options_(std::move(options)) {
  while (options_.base_url.ends_with("/"))
    options_.base_url.pop_back();
  if (options_.batch_size == 0) options_.batch_size = 1;
}

std::vector<Vector> HttpEmbedder::embed(const std::vector<std::string>& texts) {
  std::vector<Vector> out;
  out.reserve(texts.size());
  for (std::size_t from = 0; from < texts.size(); from += options_.batch_size) {
    auto part = embed_batch(texts, from, std::min(texts.size(), from + options_.batch_size));
    for (auto& v : part)
      out.push_back(std::move(v));
  }
  return out;
}

std::vector<Vector> HttpEmbedder::embed_batch(const std::vector<std::string>& texts,
                                              std::size_t from, std::size_t to) {
  const std::string url = options_.base_url + "/v1/embeddings";
  bj::array input;
  for (std::size_t i = from; i < to; ++i)
    input.emplace_back(texts[i]);
  std::vector<http::Header> headers{{"Content-Type", "application/json"},
                                    {"Accept", "application/json"}};
  if (!options_.api_key.empty()) headers.push_back({"Authorization", "Bearer " + options_.api_key});
  http::ClientResponse res;
  try {
    res = client_.request(
        "POST", url,
        bj::serialize(bj::object{{"model", options_.model}, {"input", std::move(input)}}), headers,
        options_.timeout);
  } catch (const std::exception& e) {
    throw EmbedError("embedding server " + url + ": " + e.what());
  }
  if (res.status != 200) {
    throw EmbedError("embedding server " + url + " answered HTTP " + std::to_string(res.status) +
                     ": " + res.body.substr(0, 200));
  }
  auto bad = [&](const std::string& what) {
    return EmbedError("embedding server " + url + " answered " + what);
  };
  bj::value doc;
  try {
    doc = bj::parse(res.body);
  } catch (const std::exception&) {
    throw bad("something that is not JSON");
  }
  const auto* data = doc.is_object() ? doc.get_object().if_contains("data") : nullptr;
  if (!data || !data->is_array()) throw bad("no \"data\" array");
  std::vector<Vector> out(to - from);
  std::size_t position = 0;
  for (const auto& item : data->get_array()) {
    const auto* o = item.if_object();
    const auto* e = o ? o->if_contains("embedding") : nullptr;
    if (!e || !e->is_array()) throw bad("an item without an \"embedding\" array");
    std::size_t index = position++;
    if (const auto* i = o->if_contains("index"); i && i->is_int64()) {
      index = static_cast<std::size_t>(i->get_int64());
    }
    if (index >= out.size()) throw bad("index " + std::to_string(index) + " out of range");
    Vector v;
    v.reserve(e->get_array().size());
    for (const auto& x : e->get_array()) {
      if (!x.is_number()) throw bad("a non-number in an embedding");
      v.push_back(static_cast<float>(x.to_number<double>()));
    }
    if (v.empty()) throw bad("an empty embedding");
    std::size_t expected = 0;
    if (!dimensions_.compare_exchange_strong(expected, v.size()) && expected != v.size()) {
      throw bad(std::to_string(v.size()) + " dimensions after " + std::to_string(expected));
    }
    normalize(v);
    out[index] = std::move(v);
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].empty()) throw bad("no embedding for input " + std::to_string(i));
  }
  return out;
}

}  // namespace schemagate::embed
