#include "http/client.hpp"

#include "http/outbound.hpp"

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
  explicit Impl(ClientOptions o) : options(o), idle(o.max_idle_per_host) {}
  ClientOptions options;
  outbound::IdlePool<Connection> idle;
};

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>(options)) {}

Client::~Client() = default;

using outbound::make_request;
using outbound::parse_target;
using outbound::Target;

namespace {

bool timed_out(const boost::system::error_code& ec) {
  return ec == beast::error::timeout || ec == asio::error::operation_aborted;
}

std::unique_ptr<Connection> connect(const Target& t,
                                    std::chrono::steady_clock::time_point deadline) {
  auto conn = std::make_unique<Connection>();
  boost::system::error_code ec;
  tcp::resolver resolver(conn->ioc);
  const auto endpoints = resolver.resolve(t.host, t.port, ec);
  if (ec) {
    throw ClientError(ClientError::Kind::connect, "cannot resolve " + t.host + ": " + ec.message());
  }
  conn->stream.expires_at(deadline);
  conn->stream.async_connect(endpoints,
                             [&](const boost::system::error_code& e, const auto&) { ec = e; });
  run_until(*conn, deadline);
  if (timed_out(ec)) {
    throw ClientError(ClientError::Kind::timeout, "connecting to " + t.key + " timed out");
  }
  if (ec) {
    throw ClientError(ClientError::Kind::connect,
                      "cannot connect to " + t.key + ": " + ec.message());
  }
  return conn;
}

}  // namespace

ClientResponse Client::request(std::string_view method, std::string_view url, std::string body,
                               const std::vector<Header>& headers,
                               std::chrono::milliseconds timeout) {
  const Target t = parse_target(url);
  const std::string& key = t.key;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto req = make_request(method, t, std::move(body), headers);

  // A pooled connection may have been closed by the peer: one retry on a fresh one (not on
  // another pooled one: a peer's idle timeout closes them all at once).
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto conn = attempt == 0 ? impl_->idle.take(key) : nullptr;
    const bool reused = conn != nullptr;
    if (!conn) conn = connect(t, deadline);
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
      if (timed_out(ec)) {
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
    const bool keep_alive = res.keep_alive();
    auto out = outbound::take_response(res);
    if (keep_alive) impl_->idle.give_back(key, std::move(conn));
    return out;
  }
  throw ClientError(ClientError::Kind::connect, "exchange with " + key + " failed");
}

struct ClientStream::Impl {
  std::unique_ptr<Connection> conn;
  std::string key;
  bhttp::response_parser<bhttp::buffer_body> parser;
  std::vector<Header> headers;
  int status = 0;
};

ClientStream::ClientStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClientStream::~ClientStream() = default;

int ClientStream::status() const {
  return impl_->status;
}

const std::vector<Header>& ClientStream::headers() const {
  return impl_->headers;
}

std::optional<std::string_view> ClientStream::header(std::string_view name) const {
  for (const auto& h : impl_->headers) {
    if (beast::iequals(h.name, name)) return std::string_view(h.value);
  }
  return std::nullopt;
}

bool ClientStream::read(std::string& out, std::chrono::milliseconds timeout) {
  auto& p = impl_->parser;
  if (p.is_done()) return false;
  char piece[16384];
  p.get().body().data = piece;
  p.get().body().size = sizeof(piece);
  boost::system::error_code ec;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  impl_->conn->stream.expires_at(deadline);
  // read_some returns after whatever one socket read brought: an event is passed on as soon as
  // it arrives, not when a buffer fills.
  bhttp::async_read_some(impl_->conn->stream, impl_->conn->buffer, p,
                         [&](const boost::system::error_code& e, std::size_t) { ec = e; });
  run_until(*impl_->conn, deadline);
  if (ec == bhttp::error::need_buffer) ec = {};
  if (timed_out(ec)) {
    throw ClientError(ClientError::Kind::timeout, "nothing more from " + impl_->key + " within " +
                                                      std::to_string(timeout.count()) + " ms");
  }
  if (ec) {
    throw ClientError(ClientError::Kind::connect,
                      "stream from " + impl_->key + " broke off: " + ec.message());
  }
  out.append(piece, sizeof(piece) - p.get().body().size);
  return true;
}

std::unique_ptr<ClientStream> Client::open(std::string_view method, std::string_view url,
                                           std::string body, const std::vector<Header>& headers,
                                           std::chrono::milliseconds timeout) {
  const Target t = parse_target(url);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto impl = std::make_unique<ClientStream::Impl>();
  impl->key = t.key;
  impl->conn = connect(t, deadline);  // never pooled: the stream may stay open for long
  auto req = make_request(method, t, std::move(body), headers);
  req.keep_alive(false);
  boost::system::error_code ec;
  impl->conn->stream.expires_at(deadline);
  bhttp::async_write(impl->conn->stream, req,
                     [&](const boost::system::error_code& e, std::size_t) { ec = e; });
  run_until(*impl->conn, deadline);
  impl->parser.body_limit(boost::none);  // a stream has no size; each read is bounded instead
  if (!ec) {
    bhttp::async_read_header(impl->conn->stream, impl->conn->buffer, impl->parser,
                             [&](const boost::system::error_code& e, std::size_t) { ec = e; });
    run_until(*impl->conn, deadline);
  }
  if (timed_out(ec)) {
    throw ClientError(ClientError::Kind::timeout, "no reply from " + t.key + " in time");
  }
  if (ec) {
    throw ClientError(ClientError::Kind::connect,
                      "exchange with " + t.key + " failed: " + ec.message());
  }
  const auto& res = impl->parser.get();
  impl->status = static_cast<int>(res.result_int());
  for (const auto& f : res)
    impl->headers.push_back({std::string(f.name_string()), std::string(f.value())});
  return std::unique_ptr<ClientStream>(new ClientStream(std::move(impl)));
}

}  // namespace schemagate::http
