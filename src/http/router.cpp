#include "http/router.hpp"

#include <stdexcept>

#include <algorithm>
#include <set>

namespace schemagate::http {

namespace {

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (true) {
    const auto slash = path.find('/');
    parts.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string percent_decode(std::string_view s, bool plus_as_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      const int hi = i + 1 < s.size() ? hex_value(s[i + 1]) : -1;
      const int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        throw Error(400, "InvalidInput",
                    "malformed percent escape at position " + std::to_string(i) + " of \"" +
                        std::string(s) + "\"");
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (plus_as_space && s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

void Router::add(std::string method, std::string pattern, Handler handler) {
  Route r{std::move(method), pattern, {}, std::move(handler), {}};
  const auto parts = split_path(pattern);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto p = parts[i];
    if (p.size() >= 2 && p.front() == '{' && p.back() == '}') {
      std::string name(p.substr(1, p.size() - 2));
      if (name.ends_with("...")) {
        if (i + 1 != parts.size()) {
          throw std::logic_error("route " + pattern + ": {name...} must be the last segment");
        }
        name.resize(name.size() - 3);
        r.segments.push_back({Segment::Kind::rest, std::move(name)});
      } else {
        r.segments.push_back({Segment::Kind::param, std::move(name)});
      }
    } else {
      r.segments.push_back({Segment::Kind::literal, std::string(p)});
    }
  }
  for (const auto& existing : routes_) {
    if (existing.method == r.method && existing.pattern == r.pattern) {
      throw std::logic_error("route " + r.method + " " + r.pattern + " registered twice");
    }
  }
  routes_.push_back(std::move(r));
}

bool Router::match(const Route& r, const std::vector<std::string_view>& parts,
                   std::map<std::string, std::string, std::less<>>* params) {
  std::size_t i = 0;
  for (; i < r.segments.size(); ++i) {
    const auto& seg = r.segments[i];
    if (seg.kind == Segment::Kind::rest) {
      if (params) {
        std::string rest;
        for (std::size_t j = i; j < parts.size(); ++j) {
          if (j > i) rest += '/';
          rest += percent_decode(parts[j]);
        }
        (*params)[seg.text] = std::move(rest);
      }
      return true;
    }
    if (i >= parts.size()) return false;
    if (seg.kind == Segment::Kind::literal) {
      if (seg.text != parts[i]) return false;
    } else {
      if (parts[i].empty()) return false;
      if (params) (*params)[seg.text] = percent_decode(parts[i]);
    }
  }
  return i == parts.size();
}

bool Router::more_specific(const Route& a, const Route& b) {
  const std::size_t n = std::min(a.segments.size(), b.segments.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a.segments[i].kind != b.segments[i].kind) {
      return a.segments[i].kind < b.segments[i].kind;  // literal < param < rest
    }
  }
  return a.segments.size() > b.segments.size();
}

void Router::add_fast_path(const std::string& method, const std::string& pattern,
                           FastPath fast_path) {
  for (auto& r : routes_) {
    if (r.method == method && r.pattern == pattern) {
      r.fast_path = std::move(fast_path);
      return;
    }
  }
  throw std::logic_error("no route " + method + " " + pattern + " to attach a fast path to");
}

Router::Match Router::route(Request& request) const {
  const auto parts = split_path(request.path);
  const Route* best = nullptr;
  const std::string_view method =
      request.method == "HEAD" ? std::string_view("GET") : std::string_view(request.method);
  for (const auto& r : routes_) {
    if (r.method != method || !match(r, parts, nullptr)) continue;
    if (!best || more_specific(r, *best)) best = &r;
  }
  if (!best) {
    // Only now: which methods the path would take (for 405 and its Allow header).
    std::set<std::string> allowed;
    for (const auto& r : routes_) {
      if (match(r, parts, nullptr)) allowed.insert(r.method);
    }
    if (allowed.empty()) {
      throw Error(404, "NotFound", "no route for " + request.path);
    }
    std::string allow;
    for (const auto& m : allowed) {
      if (!allow.empty()) allow += ", ";
      allow += m;
    }
    Error e(405, "MethodNotAllowed",
            request.method + " is not allowed on " + request.path + " (allowed: " + allow + ")");
    e.extra_headers.push_back({"Allow", allow});
    throw e;
  }
  request.path_params.clear();
  match(*best, parts, &request.path_params);
  return Match{&best->handler, best->fast_path ? &best->fast_path : nullptr, &best->pattern};
}

}  // namespace schemagate::http
