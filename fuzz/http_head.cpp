// The HTTP request head as the server reads it: Beast's request parser with the server's header
// limit, then the router over a table of the server's own route shapes (path parameters are
// percent-decoded there).
#include "http/router.hpp"

#include <boost/beast/http.hpp>

#include <cstdint>

namespace {

schemagate::http::Router& routes() {
  static schemagate::http::Router router = [] {
    schemagate::http::Router r;
    const auto ok = [](schemagate::http::Request&) { return schemagate::http::Response{}; };
    for (const char* p : {"/agents", "/agents/{id}", "/agents/search", "/agents/{id}/invoke",
                          "/agents/{id}/operations/{op}/invoke", "/a2a/{agent}/tasks/{task}",
                          "/mappings/{contract}/{from}/{to}", "/ui/{file}", "/files/{rest...}"}) {
      r.add("GET", p, ok);
      r.add("POST", p, ok);
    }
    return r;
  }();
  return router;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace bhttp = boost::beast::http;
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(16 << 10);
  parser.body_limit(1 << 16);
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (ec || !parser.is_header_done()) return 0;
  const auto& head = parser.get();
  schemagate::http::Request req;
  req.method = std::string(head.method_string());
  req.target = std::string(head.target());
  req.path = req.target.substr(0, req.target.find('?'));
  for (const auto& field : head)
    req.headers.push_back({std::string(field.name_string()), std::string(field.value())});
  try {
    (void)routes().route(req);
  } catch (const schemagate::http::Error&) {
  }
  (void)req.header("Content-Type");
  return 0;
}
