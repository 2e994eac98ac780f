#pragma once

#include "http/message.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace schemagate::http {

struct ClientResponse {
  int status = 0;
  std::vector<Header> headers;
  std::string body;
  std::optional<std::string_view> header(std::string_view name) const;
};

class ClientError : public std::runtime_error {
 public:
  enum class Kind { timeout, connect, protocol, unsupported };
  ClientError(Kind kind, std::string message)
      : std::runtime_error(std::move(message)), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct ClientOptions {
  std::size_t max_idle_per_host = 8;         // keep-alive connections kept for reuse
  std::size_t max_response_bytes = 8 << 20;  // larger replies are a protocol error
};

// A reply whose body is read as it arrives (server-sent events). Owns its connection.
class ClientStream {
 public:
  ~ClientStream();
  int status() const;
  const std::vector<Header>& headers() const;
  std::optional<std::string_view> header(std::string_view name) const;
  // Appends what arrives next of the body to `out`, waiting at most `timeout`; false once the
  // body is complete. Throws ClientError (timeout when nothing came in time).
  bool read(std::string& out, std::chrono::milliseconds timeout);
  struct Impl;

 private:
  friend class Client;
  explicit ClientStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A blocking HTTP/1.1 client with a keep-alive connection pool per host:port; safe to share
// between threads. Each call is bounded by its timeout (connect, write and read together).
class Client {
 public:
  explicit Client(ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // `url` is http://host[:port]/path. Throws ClientError.
  ClientResponse request(std::string_view method, std::string_view url, std::string body,
                         const std::vector<Header>& headers, std::chrono::milliseconds timeout);
  // Sends the request and returns once the reply's header is in (within `timeout`); the body
  // is then read piece by piece. Throws ClientError.
  std::unique_ptr<ClientStream> open(std::string_view method, std::string_view url,
                                     std::string body, const std::vector<Header>& headers,
                                     std::chrono::milliseconds timeout);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace schemagate::http
