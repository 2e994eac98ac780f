#include "http/message.hpp"

#include "util/json_text.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>

namespace schemagate::http {

namespace {
bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::optional<std::string_view> find_header(const std::vector<Header>& headers,
                                            std::string_view name) {
  for (const auto& h : headers) {
    if (iequals(h.name, name)) return std::string_view(h.value);
  }
  return std::nullopt;
}
}  // namespace

std::optional<std::string_view> Request::header(std::string_view name) const {
  return find_header(headers, name);
}

std::optional<std::string_view> Request::query_param(std::string_view name) const {
  for (const auto& [k, v] : query) {
    if (k == name) return std::string_view(v);
  }
  return std::nullopt;
}

const std::string& Request::param(std::string_view name) const {
  const auto it = path_params.find(name);
  if (it == path_params.end()) {
    throw std::logic_error("route has no path parameter '" + std::string(name) + "'");
  }
  return it->second;
}

Response& Response::set_header(std::string name, std::string value) {
  for (auto& h : headers) {
    if (iequals(h.name, name)) {
      h.value = std::move(value);
      return *this;
    }
  }
  headers.push_back({std::move(name), std::move(value)});
  return *this;
}

std::optional<std::string_view> Response::header(std::string_view name) const {
  return find_header(headers, name);
}

Response Response::json(int status, const boost::json::value& body) {
  Response r;
  r.status = status;
  // JSON.stringify's form: members in order, numbers as ECMAScript prints them ("0.029", not
  // Boost's "2.9E-2"), integers exact.
  util::append_json(r.body, body, util::JsonForm::as_is);
  r.set_header("Content-Type", "application/json");
  return r;
}

Response Response::text(int status, std::string body, std::string content_type) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  r.set_header("Content-Type", std::move(content_type));
  return r;
}

Response conditional(const Request& request, const std::string& etag,
                     const std::function<Response()>& fresh) {
  Response r;
  if (const auto inm = request.header("If-None-Match"); inm && *inm == etag) {
    r.status = 304;
  } else {
    r = fresh();
  }
  r.set_header("ETag", etag);
  return r;
}

Response error_response(const Error& e) {
  boost::json::object err{{"code", e.code()}, {"message", e.what()}};
  if (e.details()) err["details"] = *e.details();
  Response r = Response::json(e.status(), boost::json::object{{"error", std::move(err)}});
  for (const auto& h : e.extra_headers)
    r.set_header(h.name, h.value);
  return r;
}

}  // namespace schemagate::http
