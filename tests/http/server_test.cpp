// The HTTP server's time limits against raw sockets on loopback: a client that stops sending
// mid-request or sits idle on a keep-alive connection is closed after the idle timeout, while a
// handler that takes longer than that is not cut off; a server that busy-polls still sleeps
// once idle.

#include "http/server.hpp"
#include "util/metrics.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace {

using namespace schemagate;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class TimedServer {
 public:
  explicit TimedServer(std::chrono::microseconds busy_poll = 0us) {
    router_.add("GET", "/ok", [](http::Request&) { return http::Response::text(200, "ok"); });
    router_.add("GET", "/slow", [](http::Request&) {
      std::this_thread::sleep_for(900ms);  // three idle timeouts
      return http::Response::text(200, "slow");
    });
    http::ServerOptions options;
    options.port = 0;
    options.threads = 1;
    options.idle_timeout = 300ms;
    options.busy_poll = busy_poll;
    options.handle_signals = false;
    options.access_log = false;
    server_ = std::make_unique<http::Server>(router_, metrics_, options);
    port_ = server_->listen();
    thread_ = std::thread([this] { server_->run(); });
  }
  ~TimedServer() {
    server_->stop();
    thread_.join();
  }

  int connect() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port_);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    return fd;
  }

 private:
  http::Router router_;
  util::MetricsRegistry metrics_;
  std::unique_ptr<http::Server> server_;
  unsigned short port_ = 0;
  std::thread thread_;
};

void send_text(int fd, const std::string& text) {
  ASSERT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
}

// Reads until the server closes the connection or `limit` passes; returns what arrived and
// whether the connection was closed.
std::pair<std::string, bool> read_until_closed(int fd, std::chrono::milliseconds limit) {
  std::string in;
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
    if (::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 1))) <= 0) continue;
    char buf[4096];
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return {in, true};
    in.append(buf, static_cast<std::size_t>(n));
  }
  return {in, false};
}

// One request on a keep-alive connection, answered 200 (`i`: how many came before it).
void expect_ok(int fd, int i) {
  send_text(fd, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
  char buf[4096];
  const auto n = ::recv(fd, buf, sizeof buf, 0);
  ASSERT_GT(n, 0) << "closed after " << i << " requests";
  EXPECT_NE(std::string(buf, static_cast<std::size_t>(n)).find("200 OK"), std::string::npos);
}

TEST(HttpServerLimits, AClientThatStopsMidRequestIsClosedAfterTheIdleTimeout) {
  TimedServer server;
  const int fd = server.connect();
  send_text(fd, "GET /ok HTTP/1.1\r\nHost: x\r\n");  // the header never ends
  const auto started = Clock::now();
  const auto [in, closed] = read_until_closed(fd, 3000ms);
  EXPECT_TRUE(closed) << "the server kept a stalled request open";
  EXPECT_GE(Clock::now() - started, 250ms);
  EXPECT_EQ(in, "");
  ::close(fd);
}

TEST(HttpServerLimits, AnIdleKeepAliveConnectionIsClosedAndABusyOneIsNot) {
  TimedServer server;
  const int fd = server.connect();
  // Requests 100 ms apart keep the connection in use for longer than the idle timeout.
  for (int i = 0; i < 6; ++i) {
    ASSERT_NO_FATAL_FAILURE(expect_ok(fd, i));
    std::this_thread::sleep_for(100ms);
  }
  // Then idle: closed.
  const auto [in, closed] = read_until_closed(fd, 3000ms);
  EXPECT_TRUE(closed);
  EXPECT_EQ(in, "");
  ::close(fd);
}

TEST(HttpServerLimits, AHandlerSlowerThanTheIdleTimeoutStillAnswers) {
  TimedServer server;
  const int fd = server.connect();
  send_text(fd, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  const auto [in, closed] = read_until_closed(fd, 3000ms);
  EXPECT_NE(in.find("200 OK"), std::string::npos) << in;
  EXPECT_NE(in.find("slow"), std::string::npos);
  EXPECT_TRUE(closed) << "then idle, the connection is closed";
  ::close(fd);
}

// CPU time of this process (every thread), user and system.
std::chrono::microseconds process_cpu() {
  rusage r{};
  ::getrusage(RUSAGE_SELF, &r);
  const auto us = [](const timeval& t) { return t.tv_sec * 1'000'000 + t.tv_usec; };
  return std::chrono::microseconds(us(r.ru_utime) + us(r.ru_stime));
}

TEST(HttpServerLimits, ABusyPollingServerAnswersKeepsItsTimeoutsAndSleepsWhenIdle) {
  TimedServer server(200us);
  const int fd = server.connect();
  for (int i = 0; i < 50; ++i) {
    ASSERT_NO_FATAL_FAILURE(expect_ok(fd, i));
  }
  const auto [in, closed] = read_until_closed(fd, 3000ms);
  EXPECT_TRUE(closed) << "the idle timeout no longer fires while the thread polls";
  ::close(fd);
  // Nothing to do: the I/O thread sleeps instead of polling (it would burn the whole second).
  const auto before = process_cpu();
  std::this_thread::sleep_for(1s);
  EXPECT_LT(process_cpu() - before, 200ms) << "the I/O thread kept polling while idle";
}

}  // namespace
