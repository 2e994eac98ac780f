#include "api/registry_routes.hpp"

#include "util/clock.hpp"

#include "api/auth.hpp"
#include "api/json_body.hpp"
#include "registry/registry_service.hpp"

#include <charconv>
#include <chrono>
#include <ctime>

namespace schemagate::api {

namespace bj = boost::json;
using registry::RegistryError;

namespace {

http::Error to_http(const RegistryError& e) {
  using K = RegistryError::Kind;
  const auto details = e.details().is_null() ? std::nullopt : std::optional<bj::value>(e.details());
  switch (e.kind()) {
    case K::invalid_input:
      return http::Error(400, "InvalidInput", e.what(), details);
    case K::invalid_card:
      return http::Error(422, "SchemaError", e.what(), details);
    case K::not_found:
      return http::Error(404, "NotFound", e.what(), details);
    case K::conflict:
      return http::Error(409, "Conflict", e.what(), details);
    case K::unreachable:
      return http::Error(502, "AgentUnreachable", e.what(), details);
  }
  return http::Error(500, "Internal", e.what());
}

template <typename F>
auto call(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const RegistryError& e) {
    throw to_http(e);
  }
}

std::string etag(const registry::RegistryService::Entry& e) {
  return "\"" + std::to_string(e.revision) + "-" + std::to_string(e.updated_at_ms) + "\"";
}

bj::object summary(const registry::AgentCard& c) {
  bj::object o{{"id", c.id}, {"name", c.name}, {"description", c.description}};
  auto list = [](const std::vector<std::string>& v) {
    bj::array a;
    for (const auto& s : v)
      a.push_back(bj::value(s));
    return a;
  };
  if (!c.capabilities.empty()) o["capabilities"] = list(c.capabilities);
  if (!c.tags.empty()) o["tags"] = list(c.tags);
  if (!c.supported_languages.empty()) o["supported_languages"] = list(c.supported_languages);
  if (!c.provider.empty()) o["provider"] = c.provider;
  return o;
}

std::vector<std::string> string_or_list(const bj::value* v, const char* name) {
  std::vector<std::string> out;
  if (!v || v->is_null()) return out;
  if (v->is_string()) {
    out.emplace_back(v->get_string());
  } else if (v->is_array()) {
    for (const auto& x : v->get_array()) {
      if (!x.is_string())
        throw http::Error(400, "InvalidInput",
                          std::string("filters.") + name + " must hold strings");
      out.emplace_back(x.get_string());
    }
  } else {
    throw http::Error(400, "InvalidInput",
                      std::string("filters.") + name + " must be a string or an array of strings");
  }
  return out;
}

std::string string_of(const bj::object& o, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (const auto* v = o.if_contains(n)) {
      if (!v->is_string())
        throw http::Error(400, "InvalidInput", std::string("filters.") + n + " must be a string");
      return std::string(v->get_string());
    }
  }
  return {};
}

std::size_t count_param(const bj::object& o, const char* name, std::size_t fallback,
                        std::size_t max) {
  const auto* v = o.if_contains(name);
  if (!v || v->is_null()) return fallback;
  if (!v->is_int64() && !v->is_uint64())
    throw http::Error(400, "InvalidInput", std::string(name) + " must be an integer");
  const auto n = v->to_number<std::int64_t>();
  if (n < 0 || static_cast<std::size_t>(n) > max) {
    throw http::Error(400, "InvalidInput",
                      std::string(name) + " must be between 0 and " + std::to_string(max));
  }
  return static_cast<std::size_t>(n);
}

registry::Filters query_filters(const http::Request& req) {
  registry::Filters f;
  for (const auto& [k, v] : req.query) {
    if (k == "capability")
      f.capabilities.push_back(v);
    else if (k == "tag")
      f.tags.push_back(v);
    else if (k == "language")
      f.language = v;
    else if (k == "provider")
      f.provider = v;
    else if (k == "authentication")
      f.authentication = v;
  }
  return f;
}

}  // namespace

void add_registry_routes(http::Router& router, registry::RegistryService& service, Auth& auth,
                         registry::CardFetcher& fetcher, const json::ParseLimits& limits) {
  auto caller_of = [&auth](const http::Request& req) { return Auth::caller(auth.identify(req)); };
  // Writes need a publisher (or admin) key and are audited.
  auto audited = [&auth](const http::Request& req, std::string_view action,
                         const std::string& target, auto&& write) {
    const auto who = auth.require(req, gateway::Role::publisher);
    const auto start = std::chrono::steady_clock::now();
    int status = 500;
    try {
      auto r = write();
      status = r.status;
      auth.access().audit(
          who.client_id, action, target, status,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
      return r;
    } catch (const http::Error& e) {
      auth.access().audit(
          who.client_id, action, target, e.status(),
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
      throw;
    }
  };
  router.add("GET", "/agents", [&service, caller_of](http::Request& req) {
    std::size_t limit = 50;
    if (const auto l = req.query_param("limit")) {
      const auto res = std::from_chars(l->data(), l->data() + l->size(), limit);
      if (res.ec != std::errc{} || limit < 1 || limit > 500) {
        throw http::Error(400, "InvalidInput", "limit must be between 1 and 500");
      }
    }
    const auto cursor = req.query_param("cursor");
    const bool full =
        req.query_param("include_metadata") == std::optional<std::string_view>("true");
    const auto page = call([&] {
      return service.list(query_filters(req), cursor ? *cursor : "", limit, caller_of(req));
    });
    bj::array agents;
    for (const auto& e : page.agents)
      agents.push_back(full ? bj::value(e.card->raw) : bj::value(summary(*e.card)));
    bj::object body{{"agents", std::move(agents)}};
    if (page.next_cursor) body["next_cursor"] = *page.next_cursor;
    return http::Response::json(200, body);
  });

  router.add("GET", "/agents/{id}", [&service, caller_of](http::Request& req) {
    const auto entry = call([&] { return service.get(req.param("id"), caller_of(req)); });
    const std::string tag = etag(entry);
    auto r =
        http::conditional(req, tag, [&] { return http::Response::json(200, entry.card->raw); });
    r.set_header("Last-Modified", util::format_http_date(entry.updated_at_ms));
    return r;
  });

  router.add("POST", "/agents", [&service, &limits, audited](http::Request& req) {
    const auto body = read_json_body(req, limits);
    const auto* id = body.is_object() ? body.get_object().if_contains("id") : nullptr;
    return audited(req, "register", id && id->is_string() ? std::string(id->get_string()) : "",
                   [&] {
                     const auto reg = call([&] { return service.create(body); });
                     auto r = http::Response::json(201, reg.entry.card->raw);
                     r.set_header("Location", "/agents/" + reg.entry.card->id);
                     r.set_header("ETag", etag(reg.entry));
                     return r;
                   });
  });

  router.add("PUT", "/agents/{id}", [&service, &limits, audited](http::Request& req) {
    return audited(req, "register", req.param("id"), [&] {
      const auto body = read_json_body(req, limits);
      const auto reg = call([&] { return service.put(req.param("id"), body); });
      auto r = http::Response::json(reg.created ? 201 : 200, reg.entry.card->raw);
      r.set_header("ETag", etag(reg.entry));
      return r;
    });
  });

  router.add("DELETE", "/agents/{id}", [&service, audited](http::Request& req) {
    return audited(req, "delete", req.param("id"), [&] {
      call([&] {
        service.remove(req.param("id"));
        return 0;
      });
      http::Response r;
      r.status = 204;
      return r;
    });
  });

  // Registration by crawling: {"url": "https://agent.example"} reads its
  // /.well-known/agent-card.json (seed 004 metadata or an A2A card).
  router.add("POST", "/agents:crawl", [&service, &fetcher, &limits, audited](http::Request& req) {
    // The caller is checked before the body is read; the audit entry names the URL once known.
    std::string url;
    return audited(req, "crawl", url, [&] {
      const auto body = read_json_body(req, limits);
      const auto* u = body.is_object() ? body.get_object().if_contains("url") : nullptr;
      if (!u || !u->is_string())
        throw http::Error(400, "InvalidInput", "the body must be {\"url\": \"https://...\"}");
      url = u->get_string();
      const auto reg = call([&] { return service.crawl(url, fetcher); });
      auto r = http::Response::json(reg.created ? 201 : 200, reg.entry.card->raw);
      r.set_header("Location", "/agents/" + reg.entry.card->id);
      return r;
    });
  });

  router.add("POST", "/agents/search", [&service, &limits, caller_of](http::Request& req) {
    const auto body = read_json_body(req, limits);
    if (!body.is_object()) throw http::Error(400, "InvalidInput", "the body must be a JSON object");
    const auto& o = body.get_object();
    registry::RegistryService::SearchRequest s;
    if (const auto* q = o.if_contains("query"); q && !q->is_null()) {
      if (!q->is_string()) throw http::Error(400, "InvalidInput", "query must be a string");
      s.query = q->get_string();
    }
    s.top = count_param(o, "top", 10, 1000);
    s.skip = count_param(o, "skip", 0, 1'000'000);
    for (const char* flag : {"ranked", "include_metadata"}) {
      if (const auto* v = o.if_contains(flag); v && !v->is_null()) {
        if (!v->is_bool())
          throw http::Error(400, "InvalidInput", std::string(flag) + " must be a boolean");
        (flag[0] == 'r' ? s.ranked : s.include_metadata) = v->get_bool();
      }
    }
    if (const auto* f = o.if_contains("filters"); f && !f->is_null()) {
      if (!f->is_object()) throw http::Error(400, "InvalidInput", "filters must be an object");
      const auto& fo = f->get_object();
      s.filters.capabilities = string_or_list(fo.if_contains("capabilities"), "capabilities");
      for (auto& c : string_or_list(fo.if_contains("capability"), "capability"))
        s.filters.capabilities.push_back(c);
      s.filters.tags = string_or_list(fo.if_contains("tags"), "tags");
      for (auto& t : string_or_list(fo.if_contains("tag"), "tag"))
        s.filters.tags.push_back(t);
      s.filters.language = string_of(fo, {"supported_language", "language"});
      s.filters.provider = string_of(fo, {"provider"});
      s.filters.authentication = string_of(fo, {"authentication"});
    }
    return http::Response::json(200, call([&] { return service.search(s, caller_of(req)); }));
  });
}

}  // namespace schemagate::api
