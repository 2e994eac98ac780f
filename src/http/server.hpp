#pragma once

#include "http/client.hpp"
#include "http/router.hpp"

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace schemagate::util {
class MetricsRegistry;
}

namespace schemagate::http {

struct TlsFiles {
  std::string certificate_chain;  // PEM
  std::string private_key;        // PEM
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;  // 0 picks a free port; listen() returns it
  std::size_t max_body_bytes = 1 << 20;
  std::size_t max_header_bytes = 16 << 10;
  std::chrono::milliseconds idle_timeout{60'000};  // keep-alive and slow-client limit
  std::chrono::milliseconds shutdown_grace{30'000};
  unsigned threads = 0;  // 0: one per core
  // Handlers may block (database, calls to agents): with N > 0 they run on a pool of N threads
  // while the I/O threads keep serving other connections; 0 runs them on the I/O threads.
  unsigned handler_threads = 0;
  // After it has run something, an I/O thread keeps looking for ready sockets this long before
  // it sleeps in the kernel: a reply or request that arrives meanwhile is handled without a
  // thread wake-up (tens of microseconds on a virtual machine), for at most this much CPU per
  // idle moment. 0: sleep at once.
  std::chrono::microseconds busy_poll{0};
  std::optional<TlsFiles> tls;
  bool handle_signals = true;       // SIGINT/SIGTERM start a graceful shutdown
  bool access_log = true;           // one JSON line per request on stdout
  std::string name = "schemagate";  // in the "<name> listening on <url>" log line
  // Called once when a graceful shutdown begins: long-lived streams end themselves here
  // instead of holding the shutdown for its whole grace period.
  std::function<void()> on_shutdown;
};

// HTTP calls run by the server's own I/O threads, so that no thread waits for the reply: for fast
// paths that answer through a Responder. Keep-alive connections are pooled per host:port; a stale
// pooled connection is retried once on a fresh one. `done` runs on an I/O thread with the
// response, or with a ClientError in the exception_ptr.
class AsyncClient {
 public:
  using Callback = std::function<void(ClientResponse, std::exception_ptr)>;
  virtual ~AsyncClient() = default;
  virtual void request(std::string method, std::string url, std::string body,
                       std::vector<Header> headers, std::chrono::milliseconds timeout,
                       Callback done) = 0;
};

// An HTTP/1.1 server on Boost.Beast and C++20 coroutines. Requests are routed through the
// Router; failures become {"error":{...}} envelopes; every request is counted and timed in the
// metrics registry. Shutdown stops accepting, closes idle keep-alive connections and lets
// requests in flight finish (up to shutdown_grace).
class Server {
 public:
  Server(const Router& router, util::MetricsRegistry& metrics, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts accepting; returns the bound port. Throws std::runtime_error with the
  // address when binding fails or the TLS files cannot be loaded.
  unsigned short listen();

  // Serves until shutdown completes. Call listen() first.
  void run();

  // Begins a graceful shutdown; safe from any thread.
  void stop();

  // A client on this server's I/O threads; valid as long as the server.
  AsyncClient& async_client();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace schemagate::http
