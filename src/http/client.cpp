#include "http/client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

namespace schemagate::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

std::optional<std::string_view> ClientResponse::header(std::string_view name) const {
  for (const auto& h : headers) {
    if (h.name.size() == name.size() &&
        std::equal(h.name.begin(), h.name.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return std::string_view(h.value);
    }
  }
  return std::nullopt;
}

namespace {

// One connection with its own io_context, so that a blocking call can still time out.
struct Connection {
  asio::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buffer;
};

// Runs the pending async operation to completion or until the deadline.
void run_until(Connection& c, std::chrono::steady_clock::time_point deadline) {
  c.ioc.restart();
  c.ioc.run_until(deadline);
  if (!c.ioc.stopped()) {
    c.stream.cancel();
    c.ioc.restart();
    c.ioc.run();
  }
}

}  // namespace

struct Client::Impl {
  ClientOptions options;
  std::mutex mu;
  std::map<std::string, std::vector<std::unique_ptr<Connection>>> idle;

  std::unique_ptr<Connection> take(const std::string& key) {
    std::lock_guard lock(mu);
    auto& list = idle[key];
    if (list.empty()) return nullptr;
    auto c = std::move(list.back());
    list.pop_back();
    return c;
  }

  void give_back(const std::string& key, std::unique_ptr<Connection> c) {
    std::lock_guard lock(mu);
    auto& list = idle[key];
    if (list.size() < options.max_idle_per_host) list.push_back(std::move(c));
  }
};

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
}

Client::~Client() = default;

ClientResponse Client::request(std::string_view method, std::string_view url, std::string body,
                               const std::vector<Header>& headers,
                               std::chrono::milliseconds timeout) {
  const auto parsed = boost::urls::parse_uri(url);
  if (!parsed) throw ClientError(ClientError::Kind::unsupported, "invalid URL " + std::string(url));
  if (parsed->scheme() != "http") {
    throw ClientError(ClientError::Kind::unsupported,
                      "only http:// URLs are supported, not " + std::string(parsed->scheme()));
  }
  const std::string host(parsed->host());
  const std::string port = parsed->has_port() ? std::string(parsed->port()) : "80";
  std::string target(parsed->encoded_target());
  if (target.empty()) target = "/";
  const std::string key = host + ":" + port;
  const auto deadline = std::chrono::steady_clock::now() + timeout;

  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
  req.set(bhttp::field::host, host);
  req.set(bhttp::field::user_agent, "schemagate");
  for (const auto& h : headers)
    req.set(h.name, h.value);
  req.body() = std::move(body);
  req.prepare_payload();
  req.keep_alive(true);

  // A pooled connection may have been closed by the peer: one retry on a fresh one.
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto conn = impl_->take(key);
    const bool reused = conn != nullptr;
    if (!conn) {
      conn = std::make_unique<Connection>();
      boost::system::error_code ec;
      tcp::resolver resolver(conn->ioc);
      const auto endpoints = resolver.resolve(host, port, ec);
      if (ec)
        throw ClientError(ClientError::Kind::connect,
                          "cannot resolve " + host + ": " + ec.message());
      conn->stream.expires_at(deadline);
      conn->stream.async_connect(endpoints,
                                 [&](const boost::system::error_code& e, const auto&) { ec = e; });
      run_until(*conn, deadline);
      if (ec == beast::error::timeout || ec == asio::error::operation_aborted) {
        throw ClientError(ClientError::Kind::timeout, "connecting to " + key + " timed out");
      }
      if (ec)
        throw ClientError(ClientError::Kind::connect,
                          "cannot connect to " + key + ": " + ec.message());
    }
    boost::system::error_code ec;
    conn->stream.expires_at(deadline);
    bhttp::async_write(conn->stream, req,
                       [&](const boost::system::error_code& e, std::size_t) { ec = e; });
    run_until(*conn, deadline);
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(impl_->options.max_response_bytes);
    if (!ec) {
      bhttp::async_read(conn->stream, conn->buffer, parser,
                        [&](const boost::system::error_code& e, std::size_t) { ec = e; });
      run_until(*conn, deadline);
    }
    if (ec) {
      if (ec == beast::error::timeout || ec == asio::error::operation_aborted) {
        throw ClientError(ClientError::Kind::timeout, "no reply from " + key + " in time");
      }
      if (reused && attempt == 0 &&
          (ec == bhttp::error::end_of_stream || ec == asio::error::connection_reset ||
           ec == asio::error::broken_pipe || ec == asio::error::eof)) {
        continue;  // stale keep-alive connection
      }
      if (ec == bhttp::error::body_limit) {
        throw ClientError(ClientError::Kind::protocol,
                          "reply from " + key + " is larger than " +
                              std::to_string(impl_->options.max_response_bytes) + " bytes");
      }
      throw ClientError(ClientError::Kind::connect,
                        "exchange with " + key + " failed: " + ec.message());
    }
    auto& res = parser.get();
    ClientResponse out;
    out.status = static_cast<int>(res.result_int());
    for (const auto& f : res)
      out.headers.push_back({std::string(f.name_string()), std::string(f.value())});
    out.body = std::move(res.body());
    if (res.keep_alive()) impl_->give_back(key, std::move(conn));
    return out;
  }
  throw ClientError(ClientError::Kind::connect, "exchange with " + key + " failed");
}

}  // namespace schemagate::http
