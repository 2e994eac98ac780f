#include "support/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <thread>

namespace schemagate::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

struct HttpClient::Impl {
  std::string host;
  unsigned short port;
  bool tls;
  asio::io_context ioc;
  asio::ssl::context ssl_ctx{asio::ssl::context::tls_client};
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
  beast::flat_buffer buffer;

  void connect() {
    tcp::resolver resolver(ioc);
    const auto results = resolver.resolve(host, std::to_string(port));
    buffer.clear();
    if (tls) {
      ssl_ctx.set_verify_mode(asio::ssl::verify_none);
      secure.emplace(ioc, ssl_ctx);
      beast::get_lowest_layer(*secure).connect(results);
      secure->handshake(asio::ssl::stream_base::client);
    } else {
      plain.emplace(ioc);
      plain->connect(results);
    }
  }

  template <class Stream>
  HttpResponse exchange(Stream& s, bhttp::request<bhttp::string_body>& req) {
    bhttp::write(s, req);
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(std::uint64_t{1} << 30);
    bhttp::read(s, buffer, parser);
    auto& res = parser.get();
    HttpResponse out;
    out.status = static_cast<int>(res.result_int());
    for (const auto& f : res) {
      std::string name(f.name_string());
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      out.headers[name] = std::string(f.value());
    }
    out.body = res.body();
    if (!res.keep_alive()) {
      plain.reset();
      secure.reset();
    }
    return out;
  }
};

HttpClient::HttpClient(std::string host, unsigned short port, bool tls) : impl_(new Impl) {
  impl_->host = std::move(host);
  impl_->port = port;
  impl_->tls = tls;
}

HttpClient::~HttpClient() = default;

HttpResponse HttpClient::request(const std::string& method, const std::string& target,
                                 const std::string& body,
                                 const std::map<std::string, std::string>& headers) {
  if (!connected()) impl_->connect();
  bhttp::request<bhttp::string_body> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  req.set(bhttp::field::host, impl_->host + ":" + std::to_string(impl_->port));
  for (const auto& [k, v] : headers)
    req.set(k, v);
  req.body() = body;
  req.prepare_payload();
  if (impl_->tls) return impl_->exchange(*impl_->secure, req);
  return impl_->exchange(*impl_->plain, req);
}

unsigned short HttpClient::local_port() const {
  if (impl_->plain) return impl_->plain->socket().local_endpoint().port();
  if (impl_->secure)
    return beast::get_lowest_layer(*impl_->secure).socket().local_endpoint().port();
  return 0;
}

bool HttpClient::connected() const {
  return impl_->plain.has_value() || impl_->secure.has_value();
}

std::string raw_exchange(unsigned short port, const std::string& first, const std::string& second,
                         std::chrono::milliseconds pause, std::chrono::milliseconds timeout) {
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  stream.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  asio::write(stream.socket(), asio::buffer(first));
  if (!second.empty()) {
    std::this_thread::sleep_for(pause);
    asio::write(stream.socket(), asio::buffer(second));
  }
  std::string out;
  char buf[4096];
  stream.expires_after(timeout);
  for (;;) {
    boost::system::error_code ec;
    const std::size_t n = stream.read_some(asio::buffer(buf), ec);
    out.append(buf, n);
    if (ec) break;
  }
  return out;
}

}  // namespace schemagate::testing
