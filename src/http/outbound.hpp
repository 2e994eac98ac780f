#pragma once

// Internal to the http room (client.cpp and server.cpp, which include Beast anyway): how an
// outgoing request is addressed and built, shared by the blocking and the asynchronous client.

#include "http/client.hpp"

#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>

namespace schemagate::http::outbound {

namespace bhttp = boost::beast::http;

struct Target {
  std::string host, port, path, key;
};

inline Target parse_target(std::string_view url) {
  const auto parsed = boost::urls::parse_uri(url);
  if (!parsed) throw ClientError(ClientError::Kind::unsupported, "invalid URL " + std::string(url));
  if (parsed->scheme() != "http") {
    throw ClientError(ClientError::Kind::unsupported,
                      "only http:// URLs are supported, not " + std::string(parsed->scheme()));
  }
  Target t{std::string(parsed->host()),
           parsed->has_port() ? std::string(parsed->port()) : "80",
           std::string(parsed->encoded_target()),
           {}};
  if (t.path.empty()) t.path = "/";
  t.key = t.host + ":" + t.port;
  return t;
}

inline bhttp::request<bhttp::string_body> make_request(std::string_view method, const Target& t,
                                                       std::string body,
                                                       const std::vector<Header>& headers) {
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), t.path, 11};
  req.set(bhttp::field::host, t.host);
  req.set(bhttp::field::user_agent, "schemagate");
  for (const auto& h : headers)
    req.set(h.name, h.value);
  req.body() = std::move(body);
  req.prepare_payload();
  req.keep_alive(true);
  return req;
}

// "HTTP/1.1 200 OK\r\n"
inline std::string status_line(int status) {
  const auto reason = bhttp::obsolete_reason(static_cast<bhttp::status>(status));
  std::string line = "HTTP/1.1 " + std::to_string(status) + " ";
  line.append(reason.data(), reason.size());
  line += "\r\n";
  return line;
}

// "Name: value\r\n", with any CR or LF in the value turned into a space: a header value never
// ends the header early, whatever a handler put in it.
inline void append_header(std::string& out, std::string_view name, std::string_view value) {
  out.append(name.data(), name.size());
  out += ": ";
  for (const char c : value)
    out += (c == '\r' || c == '\n') ? ' ' : c;
  out += "\r\n";
}

}  // namespace schemagate::http::outbound
