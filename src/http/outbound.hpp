#pragma once

// Internal to the http room (client.cpp and server.cpp, which include Beast anyway): how an
// outgoing request is addressed and built, shared by the blocking and the asynchronous client.

#include "http/client.hpp"

#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>

#include "util/trace.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

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

inline bool has_header(const std::vector<Header>& headers, std::string_view name) {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const Header& h) { return boost::beast::iequals(h.name, name); });
}

inline bhttp::request<bhttp::string_body> make_request(std::string_view method, const Target& t,
                                                       std::string body,
                                                       const std::vector<Header>& headers) {
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), t.path, 11};
  req.set(bhttp::field::host, t.host);
  req.set(bhttp::field::user_agent, "schemagate");
  for (const auto& h : headers)
    req.set(h.name, h.value);
  if (const auto* trace = util::current_trace(); trace && !has_header(headers, "traceparent")) {
    req.set("traceparent", trace->traceparent());
    if (!trace->tracestate.empty()) req.set("tracestate", trace->tracestate);
  }
  req.body() = std::move(body);
  req.prepare_payload();
  req.keep_alive(true);
  return req;
}

// A parsed reply as the client hands it out; moves the body.
inline ClientResponse take_response(bhttp::response<bhttp::string_body>& res) {
  ClientResponse out;
  out.status = static_cast<int>(res.result_int());
  for (const auto& f : res)
    out.headers.push_back({std::string(f.name_string()), std::string(f.value())});
  out.body = std::move(res.body());
  return out;
}

// Keep-alive connections waiting for their next request, per host:port; shared between threads.
template <class Connection>
class IdlePool {
 public:
  explicit IdlePool(std::size_t max_per_host) : max_per_host_(max_per_host) {}
  std::unique_ptr<Connection> take(const std::string& key) {
    std::lock_guard lock(mu_);
    auto& list = idle_[key];
    if (list.empty()) return nullptr;
    auto c = std::move(list.back());
    list.pop_back();
    return c;
  }
  void give_back(const std::string& key, std::unique_ptr<Connection> c) {
    std::lock_guard lock(mu_);
    auto& list = idle_[key];
    if (list.size() < max_per_host_) list.push_back(std::move(c));
  }
  void clear() {
    std::lock_guard lock(mu_);
    idle_.clear();
  }

 private:
  std::size_t max_per_host_;
  std::mutex mu_;
  std::map<std::string, std::vector<std::unique_ptr<Connection>>> idle_;
};

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
  const auto start = out.size();
  out.append(value.data(), value.size());
  for (auto i = start; i < out.size(); ++i) {
    if (out[i] == '\r' || out[i] == '\n') out[i] = ' ';
  }
  out += "\r\n";
}

// The trace of the request being served, carried on to the agent (unless the caller set one).
inline void append_trace(std::string& out, const std::vector<Header>& headers) {
  const auto* trace = util::current_trace();
  if (!trace || has_header(headers, "traceparent")) return;
  append_header(out, "traceparent", trace->traceparent());
  if (!trace->tracestate.empty()) append_header(out, "tracestate", trace->tracestate);
}

}  // namespace schemagate::http::outbound
