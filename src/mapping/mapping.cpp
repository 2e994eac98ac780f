#include "mapping/mapping.hpp"

#include "json/jcs.hpp"
#include "json/pointer.hpp"
#include "jsonschema/schema.hpp"

#include <boost/json/serialize.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <set>

namespace schemagate::mapping {

namespace bj = boost::json;
using Kind = Step::Kind;

namespace {

constexpr const char* kFunctions[] = {"concat",    "split",     "lookup",
                                      "to_number", "to_string", "date"};
constexpr const char* kDateFormats[] = {"date",    "date-time", "us-date",
                                        "eu-date", "unix-s",    "unix-ms"};

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::rename:
      return "rename";
    case Kind::add:
      return "add";
    case Kind::remove:
      return "remove";
    case Kind::convert:
      return "convert";
    case Kind::derive:
      return "derive";
    case Kind::in:
      return "in";
  }
  return "?";
}

// --- parsing -------------------------------------------------------------------------------

struct Reader {
  std::vector<Problem>& problems;

  void problem(const std::string& at, std::string message) {
    problems.push_back({at, std::move(message)});
  }

  bool pointer(const bj::object& o, std::string_view name, const std::string& at, std::string& out,
               bool required = true) {
    const auto* v = o.if_contains(name);
    if (!v) {
      if (required) problem(at, std::string(name) + " is required");
      return false;
    }
    if (!v->is_string()) {
      problem(at + "/" + std::string(name), std::string(name) + " must be a JSON Pointer string");
      return false;
    }
    try {
      const auto p = json::Pointer::parse(v->get_string());
      if (p.empty()) {
        problem(at + "/" + std::string(name),
                std::string(name) + " must name a member, not the whole document");
        return false;
      }
    } catch (const json::PointerError& e) {
      problem(at + "/" + std::string(name), std::string(name) + ": " + e.what());
      return false;
    }
    out = v->get_string();
    return true;
  }

  std::vector<Step> steps(const bj::value& list, const std::string& at) {
    std::vector<Step> out;
    if (!list.is_array()) {
      problem(at, "must be an array of steps");
      return out;
    }
    for (std::size_t i = 0; i < list.get_array().size(); ++i) {
      auto s = step(list.get_array()[i], at + "/" + std::to_string(i));
      if (s) out.push_back(std::move(*s));
    }
    return out;
  }

  std::optional<Step> step(const bj::value& v, const std::string& at) {
    if (!v.is_object()) {
      problem(at, "a step must be an object with an \"op\"");
      return std::nullopt;
    }
    const auto& o = v.get_object();
    const auto* op = o.if_contains("op");
    if (!op || !op->is_string()) {
      problem(at + "/op", "op is required: rename, add, remove, convert, derive or in");
      return std::nullopt;
    }
    const std::string name(op->get_string());
    Step s;
    std::set<std::string> allowed{"op", "description"};
    const std::size_t before = problems.size();
    if (name == "rename") {
      s.kind = Kind::rename;
      allowed.insert({"from", "to"});
      pointer(o, "from", at, s.path);
      pointer(o, "to", at, s.to);
    } else if (name == "add") {
      s.kind = Kind::add;
      allowed.insert({"path", "const", "default"});
      pointer(o, "path", at, s.path);
      const auto* c = o.if_contains("const");
      const auto* d = o.if_contains("default");
      if ((c != nullptr) == (d != nullptr)) {
        problem(at,
                "add needs exactly one of \"const\" (always set) or \"default\" (set when "
                "absent)");
      } else {
        s.value = c ? *c : *d;
        s.only_if_absent = d != nullptr;
      }
    } else if (name == "remove") {
      s.kind = Kind::remove;
      allowed.insert({"path", "restore"});
      pointer(o, "path", at, s.path);
      if (const auto* r = o.if_contains("restore")) {
        s.value = *r;
        s.has_restore = true;
      }
    } else if (name == "convert") {
      s.kind = Kind::convert;
      allowed.insert({"path", "table"});
      pointer(o, "path", at, s.path);
      table(o, at, s.table);
    } else if (name == "derive") {
      s.kind = Kind::derive;
      allowed.insert({"path", "function", "from", "separator", "index", "table", "from_format",
                      "to_format", "remove_sources"});
      pointer(o, "path", at, s.path);
      derive(o, at, s);
    } else if (name == "in") {
      s.kind = Kind::in;
      allowed.insert({"path", "steps"});
      pointer(o, "path", at, s.path);
      if (const auto* inner = o.if_contains("steps")) {
        s.steps = steps(*inner, at + "/steps");
      } else {
        problem(at, "in needs \"steps\" to run inside " + s.path);
      }
    } else {
      problem(at + "/op",
              "unknown op \"" + name + "\" (rename, add, remove, convert, derive or in)");
      return std::nullopt;
    }
    for (const auto& kv : o) {
      if (!allowed.contains(std::string(kv.key()))) {
        problem(at + "/" + std::string(kv.key()),
                "\"" + std::string(kv.key()) + "\" is not a member of a " + name + " step");
      }
    }
    if (problems.size() != before) return std::nullopt;
    return s;
  }

  void table(const bj::object& o, const std::string& at, bj::object& out) {
    const auto* t = o.if_contains("table");
    if (!t || !t->is_object() || t->get_object().empty()) {
      problem(at + "/table", "table must be a non-empty object from old values to new ones");
      return;
    }
    out = t->get_object();
  }

  void derive(const bj::object& o, const std::string& at, Step& s) {
    const auto* f = o.if_contains("function");
    if (!f || !f->is_string() ||
        std::none_of(std::begin(kFunctions), std::end(kFunctions),
                     [&](const char* n) { return f->get_string() == n; })) {
      problem(at + "/function",
              "function must be one of concat, split, lookup, to_number, to_string, date");
      return;
    }
    s.function = f->get_string();
    const auto* from = o.if_contains("from");
    if (from && from->is_string()) {
      s.from.push_back(std::string(from->get_string()));
    } else if (from && from->is_array()) {
      for (const auto& p : from->get_array()) {
        if (p.is_string()) s.from.push_back(std::string(p.get_string()));
      }
    }
    if (s.from.empty() || (s.function != "concat" && s.from.size() != 1)) {
      problem(at + "/from", s.function == "concat"
                                ? "from must list the source paths to concatenate"
                                : "from must name the one source path of " + s.function);
      return;
    }
    for (std::size_t i = 0; i < s.from.size(); ++i) {
      try {
        if (json::Pointer::parse(s.from[i]).empty()) throw json::PointerError("empty");
      } catch (const json::PointerError&) {
        problem(at + "/from", "\"" + s.from[i] + "\" is not a JSON Pointer to a member");
      }
    }
    if (const auto* sep = o.if_contains("separator")) {
      if (!sep->is_string())
        problem(at + "/separator", "separator must be a string");
      else
        s.separator = sep->get_string();
    }
    if (s.function == "split") {
      if (s.separator.empty()) problem(at + "/separator", "split needs a non-empty separator");
      const auto* idx = o.if_contains("index");
      if (!idx || !idx->is_int64() || idx->get_int64() < 0) {
        problem(at + "/index", "split needs the index (0, 1, ...) of the piece to keep");
      } else {
        s.index = static_cast<std::size_t>(idx->get_int64());
      }
    }
    if (s.function == "lookup") table(o, at, s.table);
    if (s.function == "date") {
      for (auto [name, target] :
           {std::pair{"from_format", &s.from_format}, std::pair{"to_format", &s.to_format}}) {
        const auto* v = o.if_contains(name);
        if (!v || !v->is_string() ||
            std::none_of(std::begin(kDateFormats), std::end(kDateFormats),
                         [&](const char* n) { return v->get_string() == n; })) {
          problem(at + "/" + name, std::string(name) +
                                       " must be one of date, date-time, us-date, eu-date, "
                                       "unix-s, unix-ms");
        } else {
          *target = v->get_string();
        }
      }
    }
    if (const auto* r = o.if_contains("remove_sources")) {
      if (!r->is_bool())
        problem(at + "/remove_sources", "remove_sources must be true or false");
      else
        s.remove_sources = r->get_bool();
    }
  }
};

// --- applying ------------------------------------------------------------------------------

bj::value* find(bj::value& root, const std::string& path) {
  return json::resolve(root, json::Pointer::parse(path));
}

// Sets `path`, creating the objects on the way.
void put(bj::value& root, const std::string& path, bj::value v, const std::string& where) {
  const auto tokens = json::Pointer::parse(path).tokens();
  bj::value* at = &root;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!at->is_object()) {
      throw ApplyError(where, "cannot set " + path + ": " + (i ? tokens[i - 1] : "the document") +
                                  " is not an object");
    }
    auto& o = at->get_object();
    if (i + 1 == tokens.size()) {
      o[tokens[i]] = std::move(v);
      return;
    }
    auto it = o.find(tokens[i]);
    if (it == o.end()) it = o.emplace(tokens[i], bj::object{}).first;
    at = &it->value();
  }
}

std::optional<bj::value> take(bj::value& root, const std::string& path) {
  const auto ptr = json::Pointer::parse(path);
  const auto& tokens = ptr.tokens();
  bj::value* parent = json::resolve(
      root, json::Pointer(std::vector<std::string>(tokens.begin(), tokens.end() - 1)));
  if (!parent || !parent->is_object()) return std::nullopt;
  auto& o = parent->get_object();
  const auto it = o.find(tokens.back());
  if (it == o.end()) return std::nullopt;
  bj::value v = std::move(it->value());
  o.erase(it);
  return v;
}

// The table key a value is looked up under: a string as itself, anything else as its JSON.
std::string table_key(const bj::value& v) {
  return v.is_string() ? std::string(v.get_string()) : json::canonicalize(v);
}

std::string text_of(const bj::value& v) {
  if (v.is_string()) return std::string(v.get_string());
  return json::canonicalize(v);
}

// Days since 1970-01-01 of a civil date (proleptic Gregorian), and back.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

// A moment as milliseconds since 1970 (UTC), read in `format`.
std::optional<std::int64_t> read_date(const bj::value& v, const std::string& format) {
  if (format == "unix-s" || format == "unix-ms") {
    if (!v.is_number()) return std::nullopt;
    const double n = v.to_number<double>();
    return static_cast<std::int64_t>(std::llround(format == "unix-s" ? n * 1000 : n));
  }
  if (!v.is_string()) return std::nullopt;
  const std::string s(v.get_string());
  int a = 0, b = 0, c = 0, hh = 0, mm = 0, ss = 0;
  char tail[8] = {};
  int n = 0;
  if (format == "date") {
    if (std::sscanf(s.c_str(), "%4d-%2d-%2d%n", &a, &b, &c, &n) != 3 || n != 10 || s.size() != 10) {
      return std::nullopt;
    }
  } else if (format == "date-time") {
    if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%7s", &a, &b, &c, &hh, &mm, &ss, tail) < 6) {
      return std::nullopt;
    }
    if (std::string_view(tail) != "Z" && std::string_view(tail) != "" &&
        std::string_view(tail) != "+00:00") {
      return std::nullopt;  // offsets other than UTC are not converted silently
    }
  } else {
    int first = 0, second = 0;
    if (std::sscanf(s.c_str(), "%2d/%2d/%4d%n", &first, &second, &a, &n) != 3 ||
        n != static_cast<int>(s.size())) {
      return std::nullopt;
    }
    b = format == "us-date" ? first : second;
    c = format == "us-date" ? second : first;
  }
  if (b < 1 || b > 12 || c < 1 || c > 31 || hh > 23 || mm > 59 || ss > 60) return std::nullopt;
  return (days_from_civil(a, static_cast<unsigned>(b), static_cast<unsigned>(c)) * 86400 +
          hh * 3600 + mm * 60 + ss) *
         1000;
}

bj::value write_date(std::int64_t ms, const std::string& format) {
  if (format == "unix-ms") return ms;
  if (format == "unix-s") return ms / 1000;
  std::int64_t days = ms / 86'400'000;
  std::int64_t rest = ms % 86'400'000;
  if (rest < 0) {
    rest += 86'400'000;
    --days;
  }
  std::int64_t y = 0;
  unsigned m = 0, d = 0;
  civil_from_days(days, y, m, d);
  char buf[40];
  if (format == "date") {
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u", static_cast<long long>(y), m, d);
  } else if (format == "date-time") {
    const auto secs = rest / 1000;
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                  static_cast<long long>(y), m, d, static_cast<long long>(secs / 3600),
                  static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%02u/%02u/%04lld", format == "us-date" ? m : d,
                  format == "us-date" ? d : m, static_cast<long long>(y));
  }
  return bj::string(buf);
}

void run(const std::vector<Step>& steps, bj::value& doc, const std::string& where);

void run_derive(const Step& s, bj::value& doc, const std::string& where) {
  std::vector<const bj::value*> sources;
  for (const auto& f : s.from) {
    const bj::value* v = find(doc, f);
    if (!v) return;  // an absent source leaves the target unset
    sources.push_back(v);
  }
  const std::string at = where + s.from.front();
  bj::value out;
  if (s.function == "concat") {
    std::string joined;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      if (i) joined += s.separator;
      joined += text_of(*sources[i]);
    }
    out = bj::string(joined);
  } else if (s.function == "split") {
    const std::string text = text_of(*sources[0]);
    std::size_t start = 0;
    for (std::size_t i = 0; i < s.index; ++i) {
      const auto pos = text.find(s.separator, start);
      if (pos == std::string::npos) {
        start = std::string::npos;
        break;
      }
      start = pos + s.separator.size();
    }
    if (start == std::string::npos) {
      out = bj::string();
    } else {
      const auto end = text.find(s.separator, start);
      out = bj::string(text.substr(start, end == std::string::npos ? end : end - start));
    }
  } else if (s.function == "lookup") {
    const auto it = s.table.find(table_key(*sources[0]));
    if (it == s.table.end()) {
      throw ApplyError(at, "the lookup table of " + s.path + " has no entry for " +
                               json::canonicalize(*sources[0]));
    }
    out = it->value();
  } else if (s.function == "to_number") {
    if (sources[0]->is_number()) {
      out = *sources[0];
    } else {
      const std::string text = text_of(*sources[0]);
      double d = 0;
      const auto res = std::from_chars(text.data(), text.data() + text.size(), d);
      if (!sources[0]->is_string() || res.ec != std::errc{} ||
          res.ptr != text.data() + text.size() || !std::isfinite(d)) {
        throw ApplyError(at, json::canonicalize(*sources[0]) + " is not a number");
      }
      if (d == std::floor(d) && std::fabs(d) < 9.007199254740992e15) {
        out = static_cast<std::int64_t>(d);
      } else {
        out = d;
      }
    }
  } else if (s.function == "to_string") {
    out = bj::string(text_of(*sources[0]));
  } else if (s.function == "date") {
    const auto ms = read_date(*sources[0], s.from_format);
    if (!ms) {
      throw ApplyError(at,
                       json::canonicalize(*sources[0]) + " is not a " + s.from_format + " value");
    }
    out = write_date(*ms, s.to_format);
  }
  if (s.remove_sources) {
    for (const auto& f : s.from)
      take(doc, f);
  }
  put(doc, s.path, std::move(out), where + s.path);
}

void run_step(const Step& s, bj::value& doc, const std::string& where) {
  switch (s.kind) {
    case Kind::rename:
      if (auto v = take(doc, s.path)) put(doc, s.to, std::move(*v), where + s.to);
      return;
    case Kind::add:
      if (!s.only_if_absent || !find(doc, s.path)) put(doc, s.path, s.value, where + s.path);
      return;
    case Kind::remove:
      take(doc, s.path);
      return;
    case Kind::convert: {
      bj::value* v = find(doc, s.path);
      if (!v) return;
      const auto it = s.table.find(table_key(*v));
      if (it == s.table.end()) {
        throw ApplyError(where + s.path, "the conversion table of " + s.path +
                                             " has no entry for " + json::canonicalize(*v));
      }
      *v = it->value();
      return;
    }
    case Kind::derive:
      run_derive(s, doc, where);
      return;
    case Kind::in: {
      bj::value* v = find(doc, s.path);
      if (!v) return;
      if (v->is_array()) {
        auto& items = v->get_array();
        for (std::size_t i = 0; i < items.size(); ++i) {
          run(s.steps, items[i], where + s.path + "/" + std::to_string(i));
        }
      } else if (v->is_object()) {
        run(s.steps, *v, where + s.path);
      }
      return;
    }
  }
}

void run(const std::vector<Step>& steps, bj::value& doc, const std::string& where) {
  for (const auto& s : steps) {
    if (!doc.is_object()) {
      throw ApplyError(where, "a mapping applies to objects; found " +
                                  std::string(doc.is_array() ? "an array" : "a scalar"));
    }
    run_step(s, doc, where);
  }
}

// --- inverting -----------------------------------------------------------------------------

std::optional<bj::object> inverted_table(const bj::object& table, std::string& why) {
  bj::object out;
  for (const auto& kv : table) {
    const auto& v = kv.value();
    if (!(v.is_string() || v.is_number() || v.is_bool())) {
      why = "its table maps to a value that is not a string, number or boolean";
      return std::nullopt;
    }
    const std::string key = table_key(v);
    if (out.contains(key)) {
      why = "its table maps two values to " + json::canonicalize(v);
      return std::nullopt;
    }
    out[key] = bj::string(kv.key());
  }
  return out;
}

bool invert_steps(const std::vector<Step>& steps, std::vector<Step>& out, std::string& why,
                  const std::string& where);

bool invert_step(const Step& s, std::vector<Step>& out, std::string& why,
                 const std::string& where) {
  Step r;
  switch (s.kind) {
    case Kind::rename:
      r.kind = Kind::rename;
      r.path = s.to;
      r.to = s.path;
      out.push_back(std::move(r));
      return true;
    case Kind::add:
      r.kind = Kind::remove;
      r.path = s.path;
      r.value = s.value;
      r.has_restore = true;
      out.push_back(std::move(r));
      return true;
    case Kind::remove:
      if (!s.has_restore) {
        why = where + ": remove " + s.path + " drops data and names no \"restore\" value";
        return false;
      }
      r.kind = Kind::add;
      r.path = s.path;
      r.value = s.value;
      r.only_if_absent = true;
      out.push_back(std::move(r));
      return true;
    case Kind::convert: {
      std::string reason;
      auto table = inverted_table(s.table, reason);
      if (!table) {
        why = where + ": convert " + s.path + " cannot be undone: " + reason;
        return false;
      }
      r = s;
      r.table = std::move(*table);
      out.push_back(std::move(r));
      return true;
    }
    case Kind::derive: {
      if (!s.remove_sources) {
        // The sources are still there: undoing is dropping what was derived.
        r.kind = Kind::remove;
        r.path = s.path;
        out.push_back(std::move(r));
        return true;
      }
      if (s.function == "concat") {
        if (s.separator.empty()) {
          why = where + ": concat into " + s.path + " has no separator to split on";
          return false;
        }
        for (std::size_t i = 0; i < s.from.size(); ++i) {
          Step split;
          split.kind = Kind::derive;
          split.function = "split";
          split.path = s.from[i];
          split.from = {s.path};
          split.separator = s.separator;
          split.index = i;
          out.push_back(std::move(split));
        }
        Step drop;
        drop.kind = Kind::remove;
        drop.path = s.path;
        out.push_back(std::move(drop));
        return true;
      }
      if (s.function == "split") {
        why = where + ": split into " + s.path + " keeps one piece and removes its source";
        return false;
      }
      r = s;
      r.path = s.from.front();
      r.from = {s.path};
      if (s.function == "lookup") {
        std::string reason;
        auto table = inverted_table(s.table, reason);
        if (!table) {
          why = where + ": lookup into " + s.path + " cannot be undone: " + reason;
          return false;
        }
        r.table = std::move(*table);
      } else if (s.function == "to_number") {
        r.function = "to_string";
      } else if (s.function == "to_string") {
        r.function = "to_number";
      } else if (s.function == "date") {
        std::swap(r.from_format, r.to_format);
      }
      out.push_back(std::move(r));
      return true;
    }
    case Kind::in: {
      r.kind = Kind::in;
      r.path = s.path;
      if (!invert_steps(s.steps, r.steps, why, where + "/steps")) return false;
      out.push_back(std::move(r));
      return true;
    }
  }
  return false;
}

bool invert_steps(const std::vector<Step>& steps, std::vector<Step>& out, std::string& why,
                  const std::string& where) {
  for (std::size_t i = steps.size(); i-- > 0;) {
    if (!invert_step(steps[i], out, why, where + "/" + std::to_string(i))) return false;
  }
  return true;
}

}  // namespace

bj::object Step::to_json() const {
  bj::object o{{"op", kind_name(kind)}};
  switch (kind) {
    case Kind::rename:
      o["from"] = path;
      o["to"] = to;
      break;
    case Kind::add:
      o["path"] = path;
      o[only_if_absent ? "default" : "const"] = value;
      break;
    case Kind::remove:
      o["path"] = path;
      if (has_restore) o["restore"] = value;
      break;
    case Kind::convert:
      o["path"] = path;
      o["table"] = table;
      break;
    case Kind::derive: {
      o["path"] = path;
      o["function"] = function;
      bj::array f;
      for (const auto& p : from)
        f.push_back(bj::string(p));
      o["from"] = std::move(f);
      if (!separator.empty()) o["separator"] = separator;
      if (function == "split") o["index"] = index;
      if (function == "lookup") o["table"] = table;
      if (function == "date") {
        o["from_format"] = from_format;
        o["to_format"] = to_format;
      }
      if (remove_sources) o["remove_sources"] = true;
      break;
    }
    case Kind::in: {
      o["path"] = path;
      bj::array inner;
      for (const auto& s : steps)
        inner.push_back(s.to_json());
      o["steps"] = std::move(inner);
      break;
    }
  }
  return o;
}

bj::object Mapping::to_json() const {
  bj::array list;
  for (const auto& s : steps)
    list.push_back(s.to_json());
  bj::object o{{"contract", contract},
               {"from", from},
               {"to", to},
               {"direction", bidirectional ? "bidirectional" : "unidirectional"},
               {"operations", std::move(list)}};
  if (!output_steps.empty()) {
    bj::array out;
    for (const auto& s : output_steps)
      out.push_back(s.to_json());
    o["output_operations"] = std::move(out);
  }
  if (!examples.empty()) o["examples"] = examples;
  if (!output_examples.empty()) o["output_examples"] = output_examples;
  return o;
}

std::variant<Mapping, std::vector<Problem>> parse_mapping(const bj::value& document) {
  std::vector<Problem> problems;
  if (!document.is_object()) return std::vector<Problem>{{"", "a mapping must be a JSON object"}};
  const auto& o = document.get_object();
  Mapping m;
  Reader r{problems};
  for (auto [name, target] :
       {std::pair{"contract", &m.contract}, std::pair{"from", &m.from}, std::pair{"to", &m.to}}) {
    const auto* v = o.if_contains(name);
    if (!v || !v->is_string() || v->get_string().empty()) {
      r.problem(std::string("/") + name, std::string(name) + " is required (a string)");
    } else {
      *target = v->get_string();
    }
  }
  if (const auto* d = o.if_contains("direction")) {
    if (!d->is_string() ||
        (d->get_string() != "bidirectional" && d->get_string() != "unidirectional")) {
      r.problem("/direction", "direction must be \"bidirectional\" or \"unidirectional\"");
    } else {
      m.bidirectional = d->get_string() == "bidirectional";
    }
  }
  if (const auto* ops = o.if_contains("operations")) {
    m.steps = r.steps(*ops, "/operations");
  } else {
    r.problem("/operations", "operations is required (an array of steps; [] maps as is)");
  }
  if (const auto* ops = o.if_contains("output_operations")) {
    m.output_steps = r.steps(*ops, "/output_operations");
  }
  for (auto [name, target] :
       {std::pair{"examples", &m.examples}, std::pair{"output_examples", &m.output_examples}}) {
    if (const auto* ex = o.if_contains(name)) {
      if (!ex->is_array()) {
        r.problem(std::string("/") + name, std::string(name) + " must be an array of documents");
      } else {
        *target = ex->get_array();
      }
    }
  }
  for (const auto& kv : o) {
    static const std::set<std::string> known{
        "contract", "from",      "to",          "direction",         "operations",
        "examples", "signature", "description", "output_operations", "output_examples"};
    if (!known.contains(std::string(kv.key()))) {
      r.problem("/" + std::string(kv.key()),
                "\"" + std::string(kv.key()) + "\" is not a member of a mapping document");
    }
  }
  if (problems.empty() && m.bidirectional) {
    if (auto inv = invert(m); std::holds_alternative<std::string>(inv)) {
      r.problem("/direction", "the mapping cannot be bidirectional: " + std::get<std::string>(inv));
    }
  }
  if (!problems.empty()) return problems;
  return m;
}

bj::value apply(const Mapping& mapping, const bj::value& source) {
  bj::value doc = source;
  run(mapping.steps, doc, "");
  return doc;
}

bj::value apply_output(const Mapping& mapping, const bj::value& source) {
  bj::value doc = source;
  if (!mapping.output_steps.empty()) run(mapping.output_steps, doc, "");
  return doc;
}

std::variant<Mapping, std::string> invert(const Mapping& mapping) {
  Mapping r;
  r.contract = mapping.contract;
  r.from = mapping.to;
  r.to = mapping.from;
  r.bidirectional = mapping.bidirectional;
  std::string why;
  if (!invert_steps(mapping.steps, r.steps, why, "/operations")) return why;
  if (!invert_steps(mapping.output_steps, r.output_steps, why, "/output_operations")) return why;
  return r;
}

Mapping compose(const Mapping& first, const Mapping& second) {
  Mapping m;
  m.contract = first.contract;
  m.from = first.from;
  m.to = second.to;
  m.steps = first.steps;
  m.steps.insert(m.steps.end(), second.steps.begin(), second.steps.end());
  m.output_steps = first.output_steps;
  m.output_steps.insert(m.output_steps.end(), second.output_steps.begin(),
                        second.output_steps.end());
  return m;
}

std::optional<std::vector<Edge>> shortest_path(const std::vector<Edge>& edges,
                                               const std::string& from, const std::string& to) {
  if (from == to) return std::vector<Edge>{};
  std::map<std::string, std::optional<std::size_t>> via;  // node -> edge that reached it
  std::deque<std::string> queue{from};
  via[from] = std::nullopt;
  while (!queue.empty()) {
    const std::string node = queue.front();
    queue.pop_front();
    for (std::size_t i = 0; i < edges.size(); ++i) {
      if (edges[i].from != node || via.contains(edges[i].to)) continue;
      via[edges[i].to] = i;
      if (edges[i].to == to) {
        std::vector<Edge> path;
        for (std::string at = to; via[at];) {
          const Edge& e = edges[*via[at]];
          path.insert(path.begin(), e);
          at = e.from;
        }
        return path;
      }
      queue.push_back(edges[i].to);
    }
  }
  return std::nullopt;
}

namespace {

// Each example must be valid in the source version, translate, validate in the destination
// version and, both ways, come back unchanged.
void verify_side(const bj::array& examples, const std::string& name, const Mapping& mapping,
                 const Mapping* back, bool output, const jsonschema::Schema* from_schema,
                 const jsonschema::Schema* to_schema, std::vector<Problem>& problems) {
  const auto translate = [output](const Mapping& m, const bj::value& v) {
    return output ? apply_output(m, v) : apply(m, v);
  };
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const std::string at = "/" + name + "/" + std::to_string(i);
    const auto& example = examples[i];
    if (from_schema) {
      const auto check = from_schema->evaluate(example);
      if (!check.valid) {
        problems.push_back({at + check.errors.front().instance_location,
                            "the example is not a valid " + mapping.from +
                                " document: " + check.errors.front().error});
        continue;
      }
    }
    bj::value out;
    try {
      out = translate(mapping, example);
    } catch (const ApplyError& e) {
      problems.push_back({at + e.location(), e.what()});
      continue;
    }
    if (to_schema) {
      const auto check = to_schema->evaluate(out);
      if (!check.valid) {
        for (const auto& err : check.errors) {
          problems.push_back({at + err.instance_location,
                              "the translated example breaks " + mapping.to + ": " + err.error});
        }
        continue;
      }
    }
    if (back) {
      try {
        if (json::canonicalize(translate(*back, out)) != json::canonicalize(example)) {
          problems.push_back({at, "translated to " + mapping.to +
                                      " and back, the example changes: the mapping is not "
                                      "truly bidirectional"});
        }
      } catch (const ApplyError& e) {
        problems.push_back({at + e.location(), "the way back fails: " + std::string(e.what())});
      }
    }
  }
}

}  // namespace

std::vector<Problem> verify(const Mapping& mapping, const VersionSchemas& source,
                            const VersionSchemas& destination) {
  std::vector<Problem> problems;
  std::optional<Mapping> back;
  if (mapping.bidirectional) {
    if (auto inv = invert(mapping); std::holds_alternative<Mapping>(inv)) {
      back = std::move(std::get<Mapping>(inv));
    }
  }
  const Mapping* way_back = back ? &*back : nullptr;
  verify_side(mapping.examples, "examples", mapping, way_back, false, source.input,
              destination.input, problems);
  verify_side(mapping.output_examples, "output_examples", mapping, way_back, true, source.output,
              destination.output, problems);
  return problems;
}

}  // namespace schemagate::mapping
