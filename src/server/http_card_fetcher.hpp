#pragma once

#include "http/client.hpp"
#include "registry/registry_service.hpp"

namespace schemagate::server {

// The registry's crawler, over the pooled HTTP client: GET, 2xx with a body, 5 s at most.
class HttpCardFetcher final : public registry::CardFetcher {
 public:
  explicit HttpCardFetcher(http::Client& client) : client_(client) {}
  std::string fetch(const std::string& url) override {
    const auto res =
        client_.request("GET", url, {}, {{"Accept", "application/json"}}, std::chrono::seconds(5));
    if (res.status < 200 || res.status > 299) {
      throw std::runtime_error("HTTP " + std::to_string(res.status));
    }
    return res.body;
  }

 private:
  http::Client& client_;
};

}  // namespace schemagate::server
