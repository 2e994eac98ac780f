// The blocking HTTP client against a real socket on loopback: its keep-alive pool and what it
// does when the peer has closed pooled connections.

#include "http/client.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
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
    char buf[4096];
    for (;;) {
      const auto n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      in.append(buf, static_cast<std::size_t>(n));
      if (in.find("\r\n\r\n") == std::string::npos) continue;
      in.clear();  // the test's requests have no body
      {
        std::unique_lock lock(mu_);
        ++requests_;
        cv_.notify_all();
        cv_.wait_for(lock, 5s, [&] { return requests_ >= hold_; });
      }
      const std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
      if (::write(fd, reply.data(), reply.size()) < 0) break;
    }
    std::lock_guard lock(mu_);
    std::erase(fds_, fd);  // closed: its number may be handed out again
    ::close(fd);
  }

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

}  // namespace
