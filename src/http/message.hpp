#pragma once

#include "util/trace.hpp"

#include <boost/json/value.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Plain request/response types: handlers see these, never Beast, so that only server.cpp pays
// for Beast's headers.
namespace schemagate::http {

struct Header {
  std::string name;
  std::string value;
};

struct Request {
  std::string method;  // upper case, as sent
  std::string target;  // path and query, as sent
  std::string path;    // the path as sent, without the query (params are decoded)
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  std::vector<Header> headers;
  std::string body;
  std::map<std::string, std::string, std::less<>> path_params;  // filled by the router
  std::string remote_address;
  // W3C Trace Context from `traceparent` (or a new trace), with this server's span.
  util::TraceContext trace;
  // What a route's fast path that declined hands over to the route's handler (the caller it
  // already authenticated, say), so that nothing is done twice.
  std::shared_ptr<void> handover;

  // Case-insensitive lookup of the first header with this name.
  std::optional<std::string_view> header(std::string_view name) const;
  std::optional<std::string_view> query_param(std::string_view name) const;
  const std::string& param(std::string_view name) const;  // a path parameter; throws if absent
};

// A response body produced while it is sent (server-sent events). The server writes each piece
// as an HTTP/1.1 chunk as soon as next() hands it over and ends the response when next() returns
// false. next() may block: it runs on a handler thread.
class BodyStream {
 public:
  virtual ~BodyStream() = default;
  virtual bool next(std::string& piece) = 0;
};

struct Response {
  int status = 200;
  std::vector<Header> headers;
  std::string body;
  std::shared_ptr<BodyStream> stream;  // when set, the body comes from here instead

  Response& set_header(std::string name, std::string value);
  std::optional<std::string_view> header(std::string_view name) const;

  static Response json(int status, const boost::json::value& body);
  static Response text(int status, std::string body, std::string content_type = "text/plain");
};

// Thrown by handlers and by the server itself; rendered as {"error":{"code","message","details"?}}
// with the given HTTP status. `code` is one of the external contract's names (InvalidInput,
// NotFound, ...).
class Error : public std::runtime_error {
 public:
  Error(int status, std::string code, std::string message,
        std::optional<boost::json::value> details = std::nullopt)
      : std::runtime_error(std::move(message)),
        status_(status),
        code_(std::move(code)),
        details_(std::move(details)) {}
  int status() const { return status_; }
  const std::string& code() const { return code_; }
  const std::optional<boost::json::value>& details() const { return details_; }
  std::vector<Header> extra_headers;  // e.g. Allow on 405, Retry-After on 429

 private:
  int status_;
  std::string code_;
  std::optional<boost::json::value> details_;
};

Response error_response(const Error& e);

// RFC 9110 §13.1.2: 304 Not Modified when the request's If-None-Match names `etag`, else the
// response `fresh` builds. Either way it carries the ETag.
Response conditional(const Request& request, const std::string& etag,
                     const std::function<Response()>& fresh);

}  // namespace schemagate::http
