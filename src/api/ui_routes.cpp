#include "api/ui_routes.hpp"

#include "util/hash.hpp"

namespace schemagate::api {

namespace {

std::string content_type(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

http::Response serve(const http::Request& req, std::string_view name) {
  for (const auto& f : ui_files()) {
    if (f.name != name) continue;
    auto r = http::conditional(req, util::etag_of_bytes(f.text), [&] {
      return http::Response::text(200, std::string(f.text), content_type(name));
    });
    r.set_header("Cache-Control", "no-cache");  // revalidated by ETag: a new build shows at once
    r.set_header("X-Content-Type-Options", "nosniff");
    r.set_header("Content-Security-Policy",
                 "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                 "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'");
    return r;
  }
  throw http::Error(404, "NotFound", "no console file " + std::string(name));
}

}  // namespace

void add_ui_routes(http::Router& router) {
  router.add("GET", "/ui", [](http::Request&) {
    http::Response r;
    r.status = 308;
    r.set_header("Location", "/ui/");
    return r;
  });
  router.add("GET", "/ui/", [](http::Request& req) { return serve(req, "index.html"); });
  router.add("GET", "/ui/{file}", [](http::Request& req) { return serve(req, req.param("file")); });
  router.add("GET", "/openapi.json", [](http::Request& req) {
    const auto& doc = openapi_files().front();
    return http::conditional(req, util::etag_of_bytes(doc.text), [&] {
      return http::Response::text(200, std::string(doc.text), "application/json");
    });
  });
}

}  // namespace schemagate::api
