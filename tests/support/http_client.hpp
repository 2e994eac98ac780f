#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace schemagate::testing {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string header(const std::string& lower_name) const {
    const auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// A keep-alive HTTP/1.1 client over one connection (plain or TLS, certificate not verified:
// tests use self-signed certificates).
class HttpClient {
 public:
  HttpClient(std::string host, unsigned short port, bool tls = false);
  ~HttpClient();

  HttpResponse request(const std::string& method, const std::string& target,
                       const std::string& body = {},
                       const std::map<std::string, std::string>& headers = {});
  HttpResponse get(const std::string& target) { return request("GET", target); }
  HttpResponse post_json(const std::string& target, const std::string& body) {
    return request("POST", target, body, {{"Content-Type", "application/json"}});
  }
  // The local port of the current connection: unchanged across requests means keep-alive.
  unsigned short local_port() const;
  bool connected() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Sends raw bytes on a fresh plain connection, optionally in two parts with a pause between
// them, and returns everything the server sends until it closes (or the timeout).
std::string raw_exchange(unsigned short port, const std::string& first,
                         const std::string& second = {},
                         std::chrono::milliseconds pause = std::chrono::milliseconds(0),
                         std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace schemagate::testing
