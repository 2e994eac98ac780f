#include "versioning/classifier.hpp"

#include "json/jcs.hpp"
#include "json/pointer.hpp"
#include "versioning/semver.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace schemagate::versioning {

namespace bj = boost::json;

namespace {

const char* effect_name(Effect e) {
  switch (e) {
    case Effect::narrows:
      return "narrows";
    case Effect::widens:
      return "widens";
    case Effect::changes:
      return "changes";
    case Effect::neutral:
      return "neutral";
  }
  return "neutral";
}

std::string escape(std::string_view token) {
  return json::escape_token(token);
}

// Keywords this classifier understands one by one; any other keyword that differs is reported
// as a change of unknown effect (breaking on both sides), never ignored.
const std::set<std::string> kHandled{"type",
                                     "enum",
                                     "const",
                                     "properties",
                                     "required",
                                     "additionalProperties",
                                     "items",
                                     "prefixItems",
                                     "minimum",
                                     "maximum",
                                     "exclusiveMinimum",
                                     "exclusiveMaximum",
                                     "minLength",
                                     "maxLength",
                                     "minItems",
                                     "maxItems",
                                     "minProperties",
                                     "maxProperties",
                                     "multipleOf",
                                     "pattern",
                                     "format",
                                     "uniqueItems",
                                     "description",
                                     "title",
                                     "default",
                                     "examples",
                                     "$ref",
                                     "$defs",
                                     "definitions",
                                     "$schema",
                                     "$id",
                                     "$comment",
                                     "deprecated",
                                     "readOnly",
                                     "writeOnly",
                                     "x-semantic",
                                     "$anchor"};

const std::set<std::string> kAnnotations{"description", "title",   "examples",   "$comment",
                                         "$schema",     "$id",     "deprecated", "readOnly",
                                         "writeOnly",   "$anchor", "$defs",      "definitions"};

class Classifier {
 public:
  Classifier(const bj::value& old_root, const bj::value& new_root, Direction dir, Policy policy,
             Report& report)
      : old_root_(old_root), new_root_(new_root), dir_(dir), policy_(policy), report_(report) {}

  void compare(const bj::value& a_in, const bj::value& b_in, const std::string& spath,
               const std::string& ipath, int depth) {
    if (depth > 64) return;
    const bj::value& a = resolve(a_in, old_root_);
    const bj::value& b = resolve(b_in, new_root_);
    if (json::canonicalize(a) == json::canonicalize(b)) return;
    if (&a != &a_in || &b != &b_in) {
      const auto key = std::make_pair(&a, &b);
      if (seen_.contains(key)) return;  // a recursive $ref already being compared
      seen_.insert(key);
    }
    if (a.is_bool() || b.is_bool()) {
      const bool a_all = a.is_bool() ? a.get_bool() : true;
      const bool b_all = b.is_bool() ? b.get_bool() : true;
      if (a.is_bool() && b.is_bool()) {
        add("schema_" + std::string(b_all ? "opened" : "closed"), spath, ipath,
            b_all ? Effect::widens : Effect::narrows,
            b_all ? "anything is now accepted here" : "nothing is accepted here any more");
      } else if (a.is_bool()) {
        add(a_all ? "constraints_added" : "schema_opened", spath, ipath,
            a_all ? Effect::narrows : Effect::widens,
            a_all ? "a schema now constrains what was unconstrained" : "values are now accepted");
      } else {
        add(b_all ? "constraints_removed" : "schema_closed", spath, ipath,
            b_all ? Effect::widens : Effect::narrows,
            b_all ? "every constraint here was removed" : "nothing is accepted here any more");
      }
      return;
    }
    if (!a.is_object() || !b.is_object()) return;
    const auto& o = a.get_object();
    const auto& n = b.get_object();
    types(o, n, spath, ipath);
    enums(o, n, spath, ipath);
    bounds(o, n, spath, ipath);
    properties(o, n, spath, ipath, depth);
    arrays(o, n, spath, ipath, depth);
    annotations(o, n, spath, ipath);
    others(o, n, spath, ipath);
  }

 private:
  const bj::value& resolve(const bj::value& v, const bj::value& root) {
    const bj::value* at = &v;
    for (int hops = 0; hops < 16 && at->is_object(); ++hops) {
      const auto* ref = at->get_object().if_contains("$ref");
      if (!ref || !ref->is_string() || !ref->get_string().starts_with("#")) break;
      try {
        const bj::value* target =
            json::resolve(root, json::Pointer::parse_fragment(ref->get_string()));
        if (!target) break;
        at = target;
      } catch (const std::exception&) {
        break;
      }
    }
    return *at;
  }

  bool breaking(Effect e, std::string_view kind) const {
    const bool strict = policy_ == Policy::strict;
    if (e == Effect::changes) return true;
    if (dir_ == Direction::input) {
      if (kind == "default_changed") return strict;
      if (kind == "property_removed") return strict || removed_closed_;
      if (kind == "property_added_optional") return false;  // additive evolution (§3.4)
      return e == Effect::narrows;
    }
    if (kind == "property_made_optional") return true;  // a reader cannot invent the value
    if (kind == "property_removed") return strict || removed_required_;
    if (kind == "property_added_optional" || kind == "property_added_required") {
      return strict && e == Effect::widens;  // only when the old model was closed
    }
    if (kind == "default_changed") return false;
    return e == Effect::widens && strict;
  }

  void add(std::string kind, const std::string& spath, const std::string& ipath, Effect effect,
           std::string message) {
    Change c;
    c.breaking = breaking(effect, kind);
    c.kind = std::move(kind);
    c.schema_path = spath;
    c.instance_path = ipath.empty() ? "/" : ipath;
    c.direction = dir_;
    c.effect = effect;
    c.message = (ipath.empty() ? std::string("the document") : ipath) + ": " + message;
    report_.changes.push_back(std::move(c));
  }

  static std::set<std::string> type_set(const bj::object& o) {
    std::set<std::string> out;
    const auto* t = o.if_contains("type");
    if (!t) return out;
    if (t->is_string()) out.insert(std::string(t->get_string()));
    if (t->is_array()) {
      for (const auto& x : t->get_array()) {
        if (x.is_string()) out.insert(std::string(x.get_string()));
      }
    }
    return out;
  }

  // a ⊆ b with "integer" inside "number".
  static bool types_within(const std::set<std::string>& a, const std::set<std::string>& b) {
    return std::all_of(a.begin(), a.end(), [&](const std::string& t) {
      return b.contains(t) || (t == "integer" && b.contains("number"));
    });
  }

  static std::string join(const std::set<std::string>& s) {
    std::string out;
    for (const auto& x : s)
      out += (out.empty() ? "" : ", ") + x;
    return out.empty() ? "any" : out;
  }

  void types(const bj::object& o, const bj::object& n, const std::string& spath,
             const std::string& ipath) {
    const auto a = type_set(o), b = type_set(n);
    if (a == b) return;
    const std::string what = "type " + join(a) + " -> " + join(b);
    if (a.empty()) {
      add("type_narrowed", spath + "/type", ipath, Effect::narrows, what);
    } else if (b.empty()) {
      add("type_widened", spath + "/type", ipath, Effect::widens, what);
    } else if (types_within(b, a)) {
      add("type_narrowed", spath + "/type", ipath, Effect::narrows, what);
    } else if (types_within(a, b)) {
      add("type_widened", spath + "/type", ipath, Effect::widens, what);
    } else {
      add("type_changed", spath + "/type", ipath, Effect::changes, what);
    }
  }

  static std::optional<std::set<std::string>> enum_set(const bj::object& o) {
    if (const auto* c = o.if_contains("const"))
      return std::set<std::string>{json::canonicalize(*c)};
    const auto* e = o.if_contains("enum");
    if (!e || !e->is_array()) return std::nullopt;
    std::set<std::string> out;
    for (const auto& x : e->get_array())
      out.insert(json::canonicalize(x));
    return out;
  }

  void enums(const bj::object& o, const bj::object& n, const std::string& spath,
             const std::string& ipath) {
    const auto a = enum_set(o), b = enum_set(n);
    if (a == b) return;
    const std::string at =
        spath + (n.contains("const") || o.contains("const") ? "/const" : "/enum");
    if (!a) {
      add("enum_added", at, ipath, Effect::narrows, "values are now limited to a list");
      return;
    }
    if (!b) {
      add("enum_removed", at, ipath, Effect::widens, "values are no longer limited to a list");
      return;
    }
    std::string gone, added;
    for (const auto& x : *a) {
      if (!b->contains(x)) gone += (gone.empty() ? "" : ", ") + x;
    }
    for (const auto& x : *b) {
      if (!a->contains(x)) added += (added.empty() ? "" : ", ") + x;
    }
    if (added.empty()) {
      add("enum_narrowed", at, ipath, Effect::narrows, "no longer allowed: " + gone);
    } else if (gone.empty()) {
      add("enum_extended", at, ipath, Effect::widens, "newly allowed: " + added);
    } else {
      add("enum_changed", at, ipath, Effect::changes,
          "no longer allowed: " + gone + "; newly allowed: " + added);
    }
  }

  void bounds(const bj::object& o, const bj::object& n, const std::string& spath,
              const std::string& ipath) {
    // true: a larger value accepts less (a lower bound).
    static const std::pair<const char*, bool> kNumeric[] = {
        {"minimum", true},           {"exclusiveMinimum", true}, {"minLength", true},
        {"minItems", true},          {"minProperties", true},    {"maximum", false},
        {"exclusiveMaximum", false}, {"maxLength", false},       {"maxItems", false},
        {"maxProperties", false}};
    for (const auto& [name, lower] : kNumeric) {
      const auto* a = o.if_contains(name);
      const auto* b = n.if_contains(name);
      const bool an = a && a->is_number(), bn = b && b->is_number();
      if (!an && !bn) continue;
      const std::string at = spath + "/" + name;
      if (!an) {
        add("constraint_tightened", at, ipath, Effect::narrows,
            std::string(name) + " " + json::canonicalize(*b) + " added");
      } else if (!bn) {
        add("constraint_relaxed", at, ipath, Effect::widens,
            std::string(name) + " " + json::canonicalize(*a) + " removed");
      } else {
        const double x = a->to_number<double>(), y = b->to_number<double>();
        if (x == y) continue;
        const bool tighter = lower ? y > x : y < x;
        add(tighter ? "constraint_tightened" : "constraint_relaxed", at, ipath,
            tighter ? Effect::narrows : Effect::widens,
            std::string(name) + " " + json::canonicalize(*a) + " -> " + json::canonicalize(*b));
      }
    }
    for (const char* name : {"pattern", "format", "multipleOf", "uniqueItems"}) {
      const auto* a = o.if_contains(name);
      const auto* b = n.if_contains(name);
      if (!a && !b) continue;
      if (a && b && json::canonicalize(*a) == json::canonicalize(*b)) continue;
      const std::string at = spath + "/" + name;
      if (std::string_view(name) == "uniqueItems") {
        const bool was = a && a->is_bool() && a->get_bool();
        const bool now = b && b->is_bool() && b->get_bool();
        if (was != now) {
          add(now ? "constraint_tightened" : "constraint_relaxed", at, ipath,
              now ? Effect::narrows : Effect::widens,
              now ? "items must now be unique" : "items need not be unique any more");
        }
      } else if (!a) {
        add("constraint_tightened", at, ipath, Effect::narrows,
            std::string(name) + " " + json::canonicalize(*b) + " added");
      } else if (!b) {
        add("constraint_relaxed", at, ipath, Effect::widens,
            std::string(name) + " " + json::canonicalize(*a) + " removed");
      } else if (std::string_view(name) == "multipleOf" && a->is_number() && b->is_number()) {
        const double x = a->to_number<double>(), y = b->to_number<double>();
        const auto divides = [](double big, double small) {
          const double q = big / small;
          return std::fabs(q - std::round(q)) < 1e-9;
        };
        const Effect e = divides(y, x)   ? Effect::narrows
                         : divides(x, y) ? Effect::widens
                                         : Effect::changes;
        add(e == Effect::narrows  ? "constraint_tightened"
            : e == Effect::widens ? "constraint_relaxed"
                                  : "constraint_changed",
            at, ipath, e, "multipleOf " + json::canonicalize(*a) + " -> " + json::canonicalize(*b));
      } else {
        add("constraint_changed", at, ipath, Effect::changes,
            std::string(name) + " " + json::canonicalize(*a) + " -> " + json::canonicalize(*b));
      }
    }
  }

  static std::set<std::string> required_set(const bj::object& o) {
    std::set<std::string> out;
    if (const auto* r = o.if_contains("required"); r && r->is_array()) {
      for (const auto& x : r->get_array()) {
        if (x.is_string()) out.insert(std::string(x.get_string()));
      }
    }
    return out;
  }

  static bool closed(const bj::object& o) {
    const auto* ap = o.if_contains("additionalProperties");
    if (ap && ap->is_bool() && !ap->get_bool()) return true;
    const auto* up = o.if_contains("unevaluatedProperties");
    return up && up->is_bool() && !up->get_bool();
  }

  void properties(const bj::object& o, const bj::object& n, const std::string& spath,
                  const std::string& ipath, int depth) {
    static const bj::object kEmpty;
    const auto* ap = o.if_contains("properties");
    const auto* bp = n.if_contains("properties");
    const auto& a = ap && ap->is_object() ? ap->get_object() : kEmpty;
    const auto& b = bp && bp->is_object() ? bp->get_object() : kEmpty;
    const auto ra = required_set(o), rb = required_set(n);
    const bool was_closed = closed(o), now_closed = closed(n);
    for (const auto& kv : a) {
      const std::string name(kv.key());
      const std::string sp = spath + "/properties/" + escape(name);
      const std::string ip = ipath + "/" + escape(name);
      if (!b.contains(name)) {
        removed_closed_ = now_closed;
        removed_required_ = ra.contains(name);
        add("property_removed", sp, ip, now_closed ? Effect::narrows : Effect::widens,
            std::string(ra.contains(name) ? "required" : "optional") + " property removed" +
                (now_closed ? " (the object is closed: sending it is now an error)" : ""));
        removed_closed_ = removed_required_ = false;
        continue;
      }
      compare(kv.value(), b.at(name), sp, ip, depth + 1);
    }
    for (const auto& kv : b) {
      const std::string name(kv.key());
      if (a.contains(name)) continue;
      const bool req = rb.contains(name);
      // On an open object the old schema said nothing about the member; on a closed one it
      // was forbidden, so senders of the new version widen what the old readers get.
      const Effect e = req ? Effect::narrows : (was_closed ? Effect::widens : Effect::neutral);
      add(req ? "property_added_required" : "property_added_optional",
          spath + "/properties/" + escape(name), ipath + "/" + escape(name),
          dir_ == Direction::output && was_closed ? Effect::widens : e,
          std::string(req ? "required" : "optional") + " property added");
    }
    for (const auto& name : rb) {
      if (!ra.contains(name) && a.contains(name)) {
        add("property_made_required", spath + "/required", ipath + "/" + escape(name),
            Effect::narrows, "the property is now required");
      } else if (!ra.contains(name) && !a.contains(name) && !b.contains(name)) {
        add("property_made_required", spath + "/required", ipath + "/" + escape(name),
            Effect::narrows, "a member without a schema is now required");
      }
    }
    for (const auto& name : ra) {
      if (!rb.contains(name) && b.contains(name)) {
        add("property_made_optional", spath + "/required", ipath + "/" + escape(name),
            Effect::widens, "the property is no longer required");
      }
    }
    const auto* aa = o.if_contains("additionalProperties");
    const auto* ba = n.if_contains("additionalProperties");
    if (was_closed != now_closed) {
      add(now_closed ? "additional_properties_closed" : "additional_properties_opened",
          spath + "/additionalProperties", ipath, now_closed ? Effect::narrows : Effect::widens,
          now_closed ? "members not listed are now rejected"
                     : "members not listed are now accepted");
    } else if (aa && ba && aa->is_object() && ba->is_object()) {
      compare(*aa, *ba, spath + "/additionalProperties", ipath + "/*", depth + 1);
    } else if ((aa && aa->is_object()) != (ba && ba->is_object()) && !was_closed) {
      const bool added = ba && ba->is_object();
      add(added ? "constraint_tightened" : "constraint_relaxed", spath + "/additionalProperties",
          ipath + "/*", added ? Effect::narrows : Effect::widens,
          added ? "members not listed are now constrained" : "members not listed are now free");
    }
  }

  void arrays(const bj::object& o, const bj::object& n, const std::string& spath,
              const std::string& ipath, int depth) {
    const auto* a = o.if_contains("items");
    const auto* b = n.if_contains("items");
    if (a && b) {
      compare(*a, *b, spath + "/items", ipath + "/*", depth + 1);
    } else if (a || b) {
      add(b ? "constraint_tightened" : "constraint_relaxed", spath + "/items", ipath + "/*",
          b ? Effect::narrows : Effect::widens,
          b ? "items are now constrained" : "items are no longer constrained");
    }
    const auto* pa = o.if_contains("prefixItems");
    const auto* pb = n.if_contains("prefixItems");
    if (pa && pb && pa->is_array() && pb->is_array()) {
      const auto& x = pa->get_array();
      const auto& y = pb->get_array();
      for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
        compare(x[i], y[i], spath + "/prefixItems/" + std::to_string(i),
                ipath + "/" + std::to_string(i), depth + 1);
      }
      if (x.size() != y.size()) {
        add("constraint_changed", spath + "/prefixItems", ipath, Effect::changes,
            "the tuple has " + std::to_string(y.size()) + " positions instead of " +
                std::to_string(x.size()));
      }
    } else if ((pa != nullptr) != (pb != nullptr)) {
      add("constraint_changed", spath + "/prefixItems", ipath, Effect::changes,
          pb ? "positions of the array are now constrained" : "tuple positions removed");
    }
  }

  void annotations(const bj::object& o, const bj::object& n, const std::string& spath,
                   const std::string& ipath) {
    for (const char* name : {"description", "title"}) {
      const auto* a = o.if_contains(name);
      const auto* b = n.if_contains(name);
      if ((a || b) && (!a || !b || json::canonicalize(*a) != json::canonicalize(*b))) {
        add("description_changed", spath + "/" + name, ipath, Effect::neutral,
            std::string(name) + (a && b ? " refined"
                                 : a    ? " removed"
                                        : " added"));
      }
    }
    const auto* a = o.if_contains("default");
    const auto* b = n.if_contains("default");
    if ((a || b) && (!a || !b || json::canonicalize(*a) != json::canonicalize(*b))) {
      add("default_changed", spath + "/default", ipath, Effect::neutral,
          "default " + (a ? json::canonicalize(*a) : std::string("none")) + " -> " +
              (b ? json::canonicalize(*b) : std::string("none")));
    }
  }

  void others(const bj::object& o, const bj::object& n, const std::string& spath,
              const std::string& ipath) {
    std::set<std::string> names;
    for (const auto& kv : o)
      names.insert(std::string(kv.key()));
    for (const auto& kv : n)
      names.insert(std::string(kv.key()));
    for (const auto& name : names) {
      if (kHandled.contains(name) || name == "unevaluatedProperties") continue;
      const auto* a = o.if_contains(name);
      const auto* b = n.if_contains(name);
      if (a && b && json::canonicalize(*a) == json::canonicalize(*b)) continue;
      if (name.starts_with("x-")) continue;  // extensions are annotations
      add("keyword_changed", spath + "/" + escape(name), ipath, Effect::changes,
          name +
              (a && b ? " changed"
               : a    ? " removed"
                      : " added") +
              " (its effect is not analysed: treated as breaking)");
    }
  }

  const bj::value& old_root_;
  const bj::value& new_root_;
  Direction dir_;
  Policy policy_;
  Report& report_;
  std::set<std::pair<const bj::value*, const bj::value*>> seen_;
  bool removed_closed_ = false, removed_required_ = false;
};

}  // namespace

std::optional<Policy> parse_policy(std::string_view text) {
  if (text == "strict" || text == "STRICT") return Policy::strict;
  if (text == "lenient" || text == "LENIENT") return Policy::lenient;
  return std::nullopt;
}

const char* policy_name(Policy p) {
  return p == Policy::strict ? "STRICT" : "LENIENT";
}

bj::object Change::to_json() const {
  return bj::object{{"kind", kind},
                    {"direction", direction == Direction::input ? "input" : "output"},
                    {"schema_path", schema_path},
                    {"instance_path", instance_path},
                    {"effect", effect_name(effect)},
                    {"breaking", breaking},
                    {"message", message}};
}

bool Report::breaking() const {
  return std::any_of(changes.begin(), changes.end(), [](const Change& c) { return c.breaking; });
}

std::string Report::required_bump() const {
  if (changes.empty()) return "none";
  if (breaking()) return "major";
  const bool annotations_only = std::all_of(changes.begin(), changes.end(), [](const Change& c) {
    return c.kind == "description_changed";
  });
  return annotations_only ? "patch" : "minor";
}

bj::object Report::to_json(std::string_view from, std::string_view to, Policy policy) const {
  bj::array list;
  std::size_t n_breaking = 0;
  for (const auto& c : changes) {
    list.push_back(c.to_json());
    n_breaking += c.breaking;
  }
  return bj::object{{"from", from},
                    {"to", to},
                    {"policy", policy_name(policy)},
                    {"breaking", n_breaking > 0},
                    {"breaking_changes", n_breaking},
                    {"required_bump", required_bump()},
                    {"changes", std::move(list)}};
}

void classify(const bj::value& old_schema, const bj::value& new_schema, Direction direction,
              Policy policy, Report& report) {
  Classifier(old_schema, new_schema, direction, policy, report)
      .compare(old_schema, new_schema, "", "", 0);
}

std::string bump_problem(std::string_view previous, std::string_view next, const Report& report) {
  if (!report.breaking()) return {};
  const auto a = SemVer::parse(previous);
  const auto b = SemVer::parse(next);
  if (!a || !b) return {};
  const bool new_major =
      a->major == 0 ? (b->major > 0 || b->minor > a->minor) : b->major > a->major;
  if (new_major) return {};
  std::size_t n = 0;
  for (const auto& c : report.changes)
    n += c.breaking;
  return std::to_string(n) + " breaking change" + (n == 1 ? "" : "s") + " since " +
         std::string(previous) + " need" + (n == 1 ? "s" : "") + " a new major version (" +
         (a->major == 0 ? "0." + std::to_string(a->minor + 1) + ".0"
                        : std::to_string(a->major + 1) + ".0.0") +
         "), not " + std::string(next) + " (seed 003 §3.4)";
}

}  // namespace schemagate::versioning
