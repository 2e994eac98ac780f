#pragma once

#include "http/message.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace schemagate::http {

using Handler = std::function<Response(Request&)>;

// Delivers a response later, from any thread. Only the first call counts.
using Responder = std::function<void(Response)>;
// A non-blocking way to answer a route, tried first on the I/O thread. It returns false when it
// declines (the route's Handler then runs as usual, on the handler pool); when it returns true it
// must call the Responder exactly once, now or later. It must never block.
using FastPath = std::function<bool(Request&, const Responder&)>;

// Routes are patterns of '/'-separated segments: literals, "{name}" (one segment, bound as a
// path parameter, percent-decoded) or a final "{name...}" (the rest of the path). When several
// patterns match, the one with a literal at the first differing segment wins, so
// "/agents/search" beats "/agents/{id}".
class Router {
 public:
  void add(std::string method, std::string pattern, Handler handler);
  // Attaches a fast path to a route added before; throws std::logic_error when there is none.
  void add_fast_path(const std::string& method, const std::string& pattern, FastPath fast_path);

  struct Match {
    const Handler* handler = nullptr;
    const FastPath* fast_path = nullptr;   // null when the route has none
    const std::string* pattern = nullptr;  // for metrics labels: bounded cardinality
  };

  // Fills request.path_params. Throws Error 404 (no pattern matches the path) or 405 (patterns
  // match but none for this method, with an Allow header).
  Match route(Request& request) const;

  // Every (method, pattern) served, in the order added: what the OpenAPI document must cover.
  std::vector<std::pair<std::string, std::string>> routes() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& r : routes_)
      out.emplace_back(r.method, r.pattern);
    return out;
  }

 private:
  struct Segment {
    enum class Kind { literal, param, rest };
    Kind kind;
    std::string text;  // literal text or parameter name
  };
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<Segment> segments;
    Handler handler;
    FastPath fast_path;
  };
  static bool match(const Route& r, const std::vector<std::string_view>& parts,
                    std::map<std::string, std::string, std::less<>>* params);
  static bool more_specific(const Route& a, const Route& b);

  std::vector<Route> routes_;
};

// Decodes %XX escapes; '+' is left alone (it means space only in form bodies and queries).
// Throws Error 400 on a malformed escape.
std::string percent_decode(std::string_view s, bool plus_as_space = false);

}  // namespace schemagate::http
