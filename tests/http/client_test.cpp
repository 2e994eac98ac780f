// The HTTP clients against a real socket on loopback: the blocking one and the server's
// asynchronous one (what the gateway calls agents with): keep-alive pools, what they do when the
// peer has closed pooled connections, large bodies, and agents that do not answer.

#include "http/client.hpp"
#include "http/server.hpp"
#include "util/metrics.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace schemagate;
using namespace std::chrono_literals;

// Answers each request on a connection with 200 and keeps the connection open; holds the first
// `hold` answers until that many requests are in, so that the client opens that many
// connections; close_all() closes every connection it has accepted, as an idle timeout would.
class KeepAliveServer {
 public:
  explicit KeepAliveServer(int hold) : hold_(hold) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listener_, 16);
    socklen_t len = sizeof addr;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] {
      for (;;) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd < 0) return;
        std::lock_guard lock(mu_);
        ++connections_;
        fds_.push_back(fd);
        workers_.emplace_back([this, fd] { serve(fd); });
      }
    });
  }
  ~KeepAliveServer() {
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    acceptor_.join();
    close_all();
    for (auto& w : workers_)
      w.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  int connections() {
    std::lock_guard lock(mu_);
    return connections_;
  }
  void close_all() {
    std::lock_guard lock(mu_);
    for (const int fd : fds_)
      ::shutdown(fd, SHUT_RDWR);
  }

 private:
  void serve(int fd) {
    std::string in;
    char buf[65536];
    for (;;) {
      const auto n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      in.append(buf, static_cast<std::size_t>(n));
      const auto end = in.find("\r\n\r\n");
      if (end == std::string::npos) continue;
      std::size_t length = 0;
      if (const auto at = in.find("Content-Length: "); at != std::string::npos && at < end) {
        length = std::stoul(in.substr(at + 16));
      }
      if (in.size() < end + 4 + length) continue;
      const std::size_t body = in.size() - end - 4;
      in.clear();
      {
        std::unique_lock lock(mu_);
        ++requests_;
        cv_.notify_all();
        cv_.wait_for(lock, 5s, [&] { return requests_ >= hold_; });
        if (silent_) continue;  // reads on, never answers
      }
      // The body's size as the answer tells the client all of it arrived.
      const std::string text = body == 0 ? "ok" : std::to_string(body);
      const std::string reply =
          "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(text.size()) + "\r\n\r\n" + text;
      if (::write(fd, reply.data(), reply.size()) < 0) break;
    }
    std::lock_guard lock(mu_);
    std::erase(fds_, fd);  // closed: its number may be handed out again
    ::close(fd);
  }

 public:
  void go_silent() {
    std::lock_guard lock(mu_);
    silent_ = true;
  }

 private:
  int listener_ = -1;
  int port_ = 0;
  int hold_;
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> fds_;
  std::vector<std::thread> workers_;
  int connections_ = 0;
  int requests_ = 0;
  bool silent_ = false;
};

TEST(HttpClient, RetriesOnAFreshConnectionWhenPooledOnesWereClosed) {
  KeepAliveServer server(3);
  http::Client client;
  // Three requests at once: three connections, all pooled afterwards.
  std::vector<std::thread> callers;
  std::atomic<int> ok{0};
  for (int i = 0; i < 3; ++i) {
    callers.emplace_back([&] {
      if (client.request("GET", server.url(), "", {}, 5s).status == 200) ++ok;
    });
  }
  for (auto& c : callers)
    c.join();
  ASSERT_EQ(ok, 3);
  ASSERT_EQ(server.connections(), 3);
  // The peer closes every one of them (its idle timeout): the next request meets a closed
  // pooled connection, and must not retry on another closed one from the pool.
  server.close_all();
  std::this_thread::sleep_for(50ms);
  const auto r = client.request("GET", server.url(), "", {}, 5s);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
  EXPECT_EQ(server.connections(), 4);
}

// The server's asynchronous client, called as a fast path calls it, waited for here.
class AsyncCaller {
 public:
  AsyncCaller() {
    http::ServerOptions options;
    options.port = 0;
    options.threads = 1;
    options.handle_signals = false;
    options.access_log = false;
    server_ = std::make_unique<http::Server>(router_, metrics_, options);
    server_->listen();
    thread_ = std::thread([this] { server_->run(); });
  }
  ~AsyncCaller() {
    server_->stop();
    thread_.join();
  }
  // The reply, or the ClientError the callback got.
  http::ClientResponse post(const std::string& url, std::string body,
                            std::chrono::milliseconds timeout = 5s) {
    std::promise<http::ClientResponse> reply;
    server_->async_client().request("POST", url, std::move(body), {}, timeout,
                                    [&reply](http::ClientResponse r, std::exception_ptr e) {
                                      if (e) {
                                        reply.set_exception(e);
                                      } else {
                                        reply.set_value(std::move(r));
                                      }
                                    });
    return reply.get_future().get();
  }

 private:
  http::Router router_;
  util::MetricsRegistry metrics_;
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
};

TEST(AsyncHttpClient, ReusesItsConnectionAndRetriesWhenThePeerClosedIt) {
  KeepAliveServer server(1);
  AsyncCaller caller;
  for (int i = 0; i < 5; ++i) {
    const auto r = caller.post(server.url(), "");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "ok");
  }
  EXPECT_EQ(server.connections(), 1);
  server.close_all();
  std::this_thread::sleep_for(50ms);
  const auto r = caller.post(server.url(), "{\"a\": 1}");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "8");
  EXPECT_EQ(server.connections(), 2);
}

// A body larger than a socket's buffer goes out in pieces, and the reply is still read whole.
TEST(AsyncHttpClient, SendsABodyLargerThanTheSocketBuffer) {
  KeepAliveServer server(1);
  AsyncCaller caller;
  const std::string body(6 << 20, 'x');
  const auto r = caller.post(server.url(), body);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, std::to_string(body.size()));
  // And the connection serves the next exchange.
  EXPECT_EQ(caller.post(server.url(), "").body, "ok");
  EXPECT_EQ(server.connections(), 1);
}

TEST(AsyncHttpClient, AnAgentThatDoesNotAnswerTimesOut) {
  KeepAliveServer server(1);
  AsyncCaller caller;
  EXPECT_EQ(caller.post(server.url(), "").body, "ok");  // pooled from here on
  server.go_silent();
  for (int i = 0; i < 2; ++i) {  // on the pooled connection, then on a fresh one
    const auto started = std::chrono::steady_clock::now();
    try {
      caller.post(server.url(), "", 300ms);
      ADD_FAILURE() << "a silent agent answered";
    } catch (const http::ClientError& e) {
      EXPECT_EQ(e.kind(), http::ClientError::Kind::timeout) << e.what();
    }
    const auto waited = std::chrono::steady_clock::now() - started;
    EXPECT_GE(waited, 250ms);
    EXPECT_LT(waited, 3s);
  }
}

}  // namespace
