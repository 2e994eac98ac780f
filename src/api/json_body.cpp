#include "api/json_body.hpp"

#include <algorithm>
#include <cctype>

namespace schemagate::api {

namespace {

std::string media_type(std::string_view content_type) {
  const auto semi = content_type.find(';');
  auto t = content_type.substr(0, semi);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back())))
    t.remove_suffix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front())))
    t.remove_prefix(1);
  std::string out(t);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

boost::json::value read_json_body(const http::Request& request, const json::ParseLimits& limits) {
  const auto ct = request.header("Content-Type");
  const std::string type = ct ? media_type(*ct) : std::string();
  const bool is_json =
      type == "application/json" || (type.starts_with("application/") && type.ends_with("+json"));
  if (!is_json) {
    throw http::Error(
        415, "UnsupportedMediaType",
        ct ? "Content-Type " + std::string(*ct) + " is not supported; send application/json"
           : "missing Content-Type; send application/json");
  }
  try {
    return json::parse(request.body, limits);
  } catch (const json::ParseError& e) {
    throw http::Error(400, "InvalidInput",
                      std::string("request body is not valid JSON: ") + e.what(),
                      boost::json::object{{"line", e.line()},
                                          {"column", e.column()},
                                          {"offset", e.offset()},
                                          {"reason", e.reason()}});
  }
}

}  // namespace schemagate::api
