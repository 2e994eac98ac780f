// Runs a compiled program. Two instantiations: a flag run that stops at the first failure and
// keeps no paths, and a collecting run that records every failure with its locations.

#include "json/jcs.hpp"
#include "json/pointer.hpp"
#include "jsonschema/program.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cmath>

namespace schemagate::jsonschema {

namespace bj = boost::json;
using namespace detail;

namespace detail {
std::shared_ptr<const CompiledSchema> compile_program(const bj::value& schema,
                                                      const CompileOptions& options);
}

namespace {

// What the subschemas applied at one instance location evaluated, for unevaluated*.
struct Evaluated {
  bool all_properties = false;
  std::vector<std::string_view> properties;
  bool all_items = false;
  std::size_t prefix_items = 0;
  std::vector<std::size_t> items;

  void merge(const Evaluated& o) {
    all_properties = all_properties || o.all_properties;
    properties.insert(properties.end(), o.properties.begin(), o.properties.end());
    all_items = all_items || o.all_items;
    prefix_items = std::max(prefix_items, o.prefix_items);
    items.insert(items.end(), o.items.begin(), o.items.end());
  }
  bool has_property(std::string_view name) const {
    return all_properties ||
           std::find(properties.begin(), properties.end(), name) != properties.end();
  }
  bool has_item(std::size_t i) const {
    return all_items || i < prefix_items || std::find(items.begin(), items.end(), i) != items.end();
  }
};

struct DepthExceeded {};

std::string type_name(const bj::value& v) {
  switch (v.kind()) {
    case bj::kind::null:
      return "null";
    case bj::kind::bool_:
      return "boolean";
    case bj::kind::string:
      return "string";
    case bj::kind::array:
      return "array";
    case bj::kind::object:
      return "object";
    case bj::kind::double_: {
      const double d = v.get_double();
      return std::isfinite(d) && std::floor(d) == d ? "integer" : "number";
    }
    default:
      return "integer";
  }
}

bool is_integer(const bj::value& v) {
  if (v.is_int64() || v.is_uint64()) return true;
  if (!v.is_double()) return false;
  const double d = v.get_double();
  return std::isfinite(d) && std::floor(d) == d;
}

std::string number_text(double d) {
  try {
    return json::format_number(d);
  } catch (...) {
    return std::to_string(d);
  }
}

std::string short_json(const bj::value& v) {
  std::string s = bj::serialize(v);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

// Numeric comparisons that stay exact for integers beyond 2^53.
int compare(const bj::value& v, double limit) {
  if (v.is_double() || std::fabs(limit) >= 9.2e18 || std::floor(limit) != limit) {
    const double x = v.to_number<double>();
    return x < limit ? -1 : (x > limit ? 1 : 0);
  }
  const auto l = static_cast<std::int64_t>(limit);
  if (v.is_uint64()) {
    const auto u = v.get_uint64();
    return l < 0 || u > static_cast<std::uint64_t>(l) ? 1
           : u == static_cast<std::uint64_t>(l)       ? 0
                                                      : -1;
  }
  const auto i = v.get_int64();
  return i < l ? -1 : (i > l ? 1 : 0);
}

bool multiple_of(const bj::value& v, double m) {
  if ((v.is_int64() || v.is_uint64()) && std::floor(m) == m && m < 9.2e18) {
    const auto mi = static_cast<std::uint64_t>(m);
    const std::uint64_t x = v.is_uint64() ? v.get_uint64()
                            : v.get_int64() < 0
                                ? static_cast<std::uint64_t>(-(v.get_int64() + 1)) + 1
                                : static_cast<std::uint64_t>(v.get_int64());
    return x % mi == 0;
  }
  const double x = v.to_number<double>();
  const double q = x / m;
  if (!std::isfinite(q)) return std::fmod(x, m) == 0;  // the quotient overflowed a double
  if (std::floor(q) == q) return true;
  // Tolerate the rounding of decimal fractions such as 0.0075 / 0.0001.
  const double r = std::round(q);
  return std::fabs(q - r) < 1e-9 * std::max(1.0, std::fabs(q));
}

std::string type_list(std::uint32_t mask) {
  static const char* names[] = {"null",   "boolean", "object", "array",
                                "number", "string",  "integer"};
  std::string out;
  for (int i = 0; i < 7; ++i) {
    if (mask & (1u << i)) {
      if (!out.empty()) out += " or ";
      out += names[i];
    }
  }
  return out;
}

template <bool Collect>
class Run {
 public:
  Run(const CompiledSchema& p, std::vector<OutputUnit>* errors,
      std::vector<AnnotationUnit>* annotations)
      : p_(p), errors_(errors), annotations_(annotations) {}

  bool node(std::uint32_t index, const bj::value& inst, Evaluated* ann) {
    if (++depth_ > p_.max_depth) throw DepthExceeded{};
    const Node& n = p_.nodes[index];
    const bool entered = scope_.empty() || scope_.back() != n.resource;
    if (entered) scope_.push_back(n.resource);
    Evaluated local;
    Evaluated* here = n.collects_annotations ? &local : ann;
    const std::size_t annotation_mark = Collect ? annotations_->size() : 0;
    bool ok = true;
    for (const Instr& in : n.instrs) {
      if (!instr(in, inst, here)) {
        ok = false;
        if constexpr (!Collect) break;
      }
    }
    if constexpr (Collect) {
      if (!ok) {
        annotations_->resize(annotation_mark);  // a failed subschema yields no annotations
      } else {
        for (const auto& a : n.annotations) {
          const Site& s = p_.sites[a.site];
          annotations_->push_back(
              AnnotationUnit{kw_path_ + "/" + s.keyword, s.absolute, inst_path_, a.value});
        }
      }
    }
    if (ok && n.collects_annotations && ann) ann->merge(local);
    if (entered) scope_.pop_back();
    --depth_;
    return ok;
  }

 private:
  // Path bookkeeping, only in collecting runs.
  struct Step {
    Run& run;
    std::size_t kw_len, inst_len;
    Step(Run& r, std::string_view kw_segment, std::string_view inst_segment = {},
         bool has_inst = false)
        : run(r), kw_len(r.kw_path_.size()), inst_len(r.inst_path_.size()) {
      if constexpr (Collect) {
        r.kw_path_ += kw_segment;
        if (has_inst) {
          r.inst_path_ += '/';
          r.inst_path_ += json::escape_token(inst_segment);
        }
      }
    }
    ~Step() {
      if constexpr (Collect) {
        run.kw_path_.resize(kw_len);
        run.inst_path_.resize(inst_len);
      }
    }
  };

  std::string segment(const Instr& in) const {
    if constexpr (!Collect) return {};
    return "/" + p_.sites[in.site].keyword;
  }

  template <typename MakeMessage>
  bool error(const Instr& in, MakeMessage&& make_message) {
    if constexpr (Collect) {
      const Site& s = p_.sites[in.site];
      std::string kw = kw_path_;
      if (!s.keyword.empty()) kw += "/" + s.keyword;
      errors_->push_back(OutputUnit{std::move(kw), s.absolute, inst_path_, make_message()});
    }
    return false;
  }

  // A child at the same instance location, reached through `kw_segment`.
  bool in_place(std::uint32_t child, std::string_view kw_segment, const bj::value& inst,
                Evaluated* ann) {
    Step step(*this, kw_segment);
    return node(child, inst, ann);
  }

  bool is_false_schema(std::uint32_t n) const {
    const auto& instrs = p_.nodes[n].instrs;
    return instrs.size() == 1 && instrs[0].op == Op::fail;
  }

  bool instr(const Instr& in, const bj::value& inst, Evaluated* ann) {
    switch (in.op) {
      case Op::fail:
        return error(in, [] { return std::string("no value is allowed here (false schema)"); });

      case Op::type: {
        std::uint32_t bit;
        switch (inst.kind()) {
          case bj::kind::null:
            bit = kNull;
            break;
          case bj::kind::bool_:
            bit = kBoolean;
            break;
          case bj::kind::object:
            bit = kObject;
            break;
          case bj::kind::array:
            bit = kArray;
            break;
          case bj::kind::string:
            bit = kString;
            break;
          default:
            bit = kNumber | (is_integer(inst) ? std::uint32_t{kInteger} : 0u);
        }
        if (in.aux & bit) return true;
        return error(in,
                     [&] { return "expected " + type_list(in.aux) + ", got " + type_name(inst); });
      }
      case Op::const_value:
        if (json_equal(inst, in.value)) return true;
        return error(in, [&] { return "must be equal to " + short_json(in.value); });
      case Op::enum_values:
        for (const auto& v : in.value.get_array()) {
          if (json_equal(inst, v)) return true;
        }
        return error(in, [&] { return "must be one of " + short_json(in.value); });

      case Op::multiple_of:
        if (!inst.is_number() || multiple_of(inst, in.number)) return true;
        return error(in, [&] { return "must be a multiple of " + number_text(in.number); });
      case Op::maximum:
        if (!inst.is_number() || compare(inst, in.number) <= 0) return true;
        return error(in, [&] {
          return "must be <= " + number_text(in.number) + ", got " + short_json(inst);
        });
      case Op::exclusive_maximum:
        if (!inst.is_number() || compare(inst, in.number) < 0) return true;
        return error(in, [&] {
          return "must be < " + number_text(in.number) + ", got " + short_json(inst);
        });
      case Op::minimum:
        if (!inst.is_number() || compare(inst, in.number) >= 0) return true;
        return error(in, [&] {
          return "must be >= " + number_text(in.number) + ", got " + short_json(inst);
        });
      case Op::exclusive_minimum:
        if (!inst.is_number() || compare(inst, in.number) > 0) return true;
        return error(in, [&] {
          return "must be > " + number_text(in.number) + ", got " + short_json(inst);
        });

      case Op::max_length:
        if (!inst.is_string() || utf8_length(inst.get_string()) <= in.max) return true;
        return error(in, [&] {
          return "must be at most " + std::to_string(in.max) + " characters long, got " +
                 std::to_string(utf8_length(inst.get_string()));
        });
      case Op::min_length:
        if (!inst.is_string() || utf8_length(inst.get_string()) >= in.max) return true;
        return error(in, [&] {
          return "must be at least " + std::to_string(in.max) + " characters long, got " +
                 std::to_string(utf8_length(inst.get_string()));
        });
      case Op::pattern: {
        if (!inst.is_string()) return true;
        const auto& s = inst.get_string();
        if (RE2::PartialMatch(re2::StringPiece(s.data(), s.size()), *p_.regexes[in.aux])) {
          return true;
        }
        return error(in, [&] { return "does not match the pattern " + p_.regex_sources[in.aux]; });
      }
      case Op::format:
        if (check_format(static_cast<Format>(in.aux), inst)) return true;
        return error(in, [&] { return "is not a valid " + p_.sites[in.site].keyword; });

      case Op::max_items:
        if (!inst.is_array() || inst.get_array().size() <= in.max) return true;
        return error(in, [&] {
          return "must have at most " + std::to_string(in.max) + " items, got " +
                 std::to_string(inst.get_array().size());
        });
      case Op::min_items:
        if (!inst.is_array() || inst.get_array().size() >= in.max) return true;
        return error(in, [&] {
          return "must have at least " + std::to_string(in.max) + " items, got " +
                 std::to_string(inst.get_array().size());
        });
      case Op::unique_items: {
        if (!inst.is_array()) return true;
        const auto& a = inst.get_array();
        for (std::size_t i = 0; i < a.size(); ++i) {
          for (std::size_t j = i + 1; j < a.size(); ++j) {
            if (json_equal(a[i], a[j])) {
              return error(in, [&] {
                return "items at " + std::to_string(i) + " and " + std::to_string(j) +
                       " are equal; they must be unique";
              });
            }
          }
        }
        return true;
      }
      case Op::max_properties:
        if (!inst.is_object() || inst.get_object().size() <= in.max) return true;
        return error(in, [&] {
          return "must have at most " + std::to_string(in.max) + " properties, got " +
                 std::to_string(inst.get_object().size());
        });
      case Op::min_properties:
        if (!inst.is_object() || inst.get_object().size() >= in.max) return true;
        return error(in, [&] {
          return "must have at least " + std::to_string(in.max) + " properties, got " +
                 std::to_string(inst.get_object().size());
        });
      case Op::required: {
        if (!inst.is_object()) return true;
        bool ok = true;
        for (const auto& name : in.strings) {
          if (!inst.get_object().contains(name)) {
            ok = error(in, [&] { return "missing required property \"" + name + "\""; });
            if constexpr (!Collect) return false;
          }
        }
        return ok;
      }
      case Op::dependent_required: {
        if (!inst.is_object()) return true;
        const auto& obj = inst.get_object();
        bool ok = true;
        for (const auto& [prop, needs] : in.dependencies) {
          if (!obj.contains(prop)) continue;
          for (const auto& need : needs) {
            if (!obj.contains(need)) {
              ok = error(in, [&] {
                return "property \"" + prop + "\" requires property \"" + need + "\"";
              });
              if constexpr (!Collect) return false;
            }
          }
        }
        return ok;
      }

      case Op::ref:
        return in_place(in.node, segment(in), inst, ann);
      case Op::dynamic_ref: {
        const DynamicRef& dr = p_.dynamic_refs[in.aux];
        std::uint32_t target = dr.target;
        if (dr.dynamic) {
          for (const std::uint32_t r : scope_) {
            const auto& anchors = p_.resources[r].dynamic_anchors;
            if (const auto it = anchors.find(dr.anchor); it != anchors.end()) {
              target = it->second;
              break;
            }
          }
        }
        return in_place(target, segment(in), inst, ann);
      }
      case Op::recursive_ref: {
        std::uint32_t target = in.node;
        if (p_.resources[p_.nodes[target].resource].recursive_anchor) {
          for (const std::uint32_t r : scope_) {
            if (p_.resources[r].recursive_anchor && p_.resources[r].root_node != kNone) {
              target = p_.resources[r].root_node;
              break;
            }
          }
        }
        return in_place(target, segment(in), inst, ann);
      }

      case Op::all_of: {
        bool ok = true;
        for (std::size_t i = 0; i < in.nodes.size(); ++i) {
          if (!in_place(in.nodes[i], Collect ? segment(in) + "/" + std::to_string(i) : "", inst,
                        ann)) {
            ok = false;
            if constexpr (!Collect) return false;
          }
        }
        return ok;
      }
      case Op::any_of: {
        bool any = false;
        const std::size_t mark = Collect ? errors_->size() : 0;
        for (std::size_t i = 0; i < in.nodes.size(); ++i) {
          Evaluated branch;
          if (in_place(in.nodes[i], Collect ? segment(in) + "/" + std::to_string(i) : "", inst,
                       ann ? &branch : nullptr)) {
            any = true;
            if (ann)
              ann->merge(branch);
            else
              break;  // nobody needs the other branches' annotations
          }
        }
        if (any) {
          if constexpr (Collect) errors_->resize(mark);
          return true;
        }
        return error(in, [&] {
          return "does not match any of the " + std::to_string(in.nodes.size()) + " alternatives";
        });
      }
      case Op::one_of: {
        std::vector<std::size_t> matched;
        const std::size_t mark = Collect ? errors_->size() : 0;
        Evaluated chosen;
        for (std::size_t i = 0; i < in.nodes.size(); ++i) {
          Evaluated branch;
          if (in_place(in.nodes[i], Collect ? segment(in) + "/" + std::to_string(i) : "", inst,
                       ann ? &branch : nullptr)) {
            matched.push_back(i);
            if (matched.size() == 1)
              chosen = std::move(branch);
            else if constexpr (!Collect)
              break;
          }
        }
        if (matched.size() == 1) {
          if constexpr (Collect) errors_->resize(mark);
          if (ann) ann->merge(chosen);
          return true;
        }
        if (matched.size() > 1) {
          if constexpr (Collect) errors_->resize(mark);
          return error(in, [&] {
            return "matches alternatives " + std::to_string(matched[0]) + " and " +
                   std::to_string(matched[1]) + "; exactly one must match";
          });
        }
        return error(in, [&] {
          return "does not match any of the " + std::to_string(in.nodes.size()) +
                 " alternatives; exactly one must match";
        });
      }
      case Op::not_: {
        const std::size_t mark = Collect ? errors_->size() : 0;
        const bool matched = in_place(in.node, segment(in), inst, nullptr);
        if constexpr (Collect) errors_->resize(mark);
        if (!matched) return true;
        return error(in, [] { return std::string("must not match the schema in \"not\""); });
      }
      case Op::if_then_else: {
        const std::size_t mark = Collect ? errors_->size() : 0;
        Evaluated cond;
        const bool holds = in_place(in.nodes[0], segment(in), inst, ann ? &cond : nullptr);
        if constexpr (Collect) errors_->resize(mark);
        if (holds && ann) ann->merge(cond);
        const std::uint32_t next = holds ? in.nodes[1] : in.nodes[2];
        if (next == kNone) return true;
        return in_place(next, Collect ? std::string(holds ? "/then" : "/else") : "", inst, ann);
      }
      case Op::dependent_schemas: {
        if (!inst.is_object()) return true;
        bool ok = true;
        for (const auto& [prop, n] : in.named) {
          if (!inst.get_object().contains(prop)) continue;
          if (!in_place(n, Collect ? segment(in) + "/" + json::escape_token(prop) : "", inst,
                        ann)) {
            ok = false;
            if constexpr (!Collect) return false;
          }
        }
        return ok;
      }

      case Op::prefix_items: {
        if (!inst.is_array()) return true;
        const auto& a = inst.get_array();
        const std::size_t n = std::min(a.size(), in.nodes.size());
        bool ok = true;
        for (std::size_t i = 0; i < n; ++i) {
          const std::string idx = std::to_string(i);
          Step step(*this, Collect ? segment(in) + "/" + idx : "", idx, true);
          if (!node(in.nodes[i], a[i], nullptr)) {
            ok = false;
            if constexpr (!Collect) return false;
          }
        }
        if (ok && ann) ann->prefix_items = std::max(ann->prefix_items, n);
        return ok;
      }
      case Op::items: {
        if (!inst.is_array()) return true;
        const auto& a = inst.get_array();
        bool ok = true;
        for (std::size_t i = in.aux; i < a.size(); ++i) {
          if (!item(in, i, a[i], in.node)) {
            ok = false;
            if constexpr (!Collect) return false;
          }
        }
        if (ok && ann) ann->all_items = true;
        return ok;
      }
      case Op::contains: {
        if (!inst.is_array()) return true;
        const auto& a = inst.get_array();
        std::uint64_t count = 0;
        const std::size_t mark = Collect ? errors_->size() : 0;
        std::vector<std::size_t> hits;
        for (std::size_t i = 0; i < a.size(); ++i) {
          const std::string idx = Collect ? std::to_string(i) : std::string();
          Step step(*this, segment(in), idx, true);
          if (node(in.node, a[i], nullptr)) {
            ++count;
            if (ann) hits.push_back(i);
            if (!Collect && !ann && count >= in.min && in.max == UINT64_MAX) break;
          }
        }
        if constexpr (Collect) errors_->resize(mark);
        if (count < in.min) {
          return error(in, [&] {
            return "must contain at least " + std::to_string(in.min) + " matching item" +
                   (in.min == 1 ? "" : "s") + ", found " + std::to_string(count);
          });
        }
        if (count > in.max) {
          return error(in, [&] {
            return "must contain at most " + std::to_string(in.max) + " matching items, found " +
                   std::to_string(count);
          });
        }
        if (ann) ann->items.insert(ann->items.end(), hits.begin(), hits.end());
        return true;
      }

      case Op::properties: {
        if (!inst.is_object()) return true;
        const auto& obj = inst.get_object();
        bool ok = true;
        for (const auto& [name, n] : in.named) {
          const auto it = obj.find(name);
          if (it == obj.end()) continue;
          if (ann) ann->properties.push_back(it->key());
          if (!property(in, it->key(), it->value(), n)) {
            ok = false;
            if constexpr (!Collect) return false;
          }
        }
        return ok;
      }
      case Op::pattern_properties: {
        if (!inst.is_object()) return true;
        bool ok = true;
        for (const auto& kv : inst.get_object()) {
          const auto key = kv.key();
          for (const auto& [re, n] : in.patterned) {
            if (!RE2::PartialMatch(re2::StringPiece(key.data(), key.size()), *p_.regexes[re])) {
              continue;
            }
            if (ann) ann->properties.push_back(key);
            if (!property(in, key, kv.value(), n, p_.regex_sources[re])) {
              ok = false;
              if constexpr (!Collect) return false;
            }
          }
        }
        return ok;
      }
      case Op::additional_properties: {
        if (!inst.is_object()) return true;
        bool ok = true;
        for (const auto& kv : inst.get_object()) {
          const auto key = kv.key();
          if (std::find(in.strings.begin(), in.strings.end(), key) != in.strings.end()) continue;
          bool by_pattern = false;
          for (const auto& pr : in.patterned) {
            if (RE2::PartialMatch(re2::StringPiece(key.data(), key.size()),
                                  *p_.regexes[pr.first])) {
              by_pattern = true;
              break;
            }
          }
          if (by_pattern) continue;
          if (!extra_property(in, key, kv.value(), "additionalProperties")) {
            ok = false;
            if constexpr (!Collect) return false;
          }
        }
        if (ok && ann) ann->all_properties = true;
        return ok;
      }
      case Op::property_names: {
        if (!inst.is_object()) return true;
        bool ok = true;
        for (const auto& kv : inst.get_object()) {
          const bj::value name(kv.key());
          Step step(*this, segment(in), kv.key(), true);
          if (!node(in.node, name, nullptr)) {
            ok = false;
            if constexpr (!Collect) return false;
          }
        }
        return ok;
      }
      case Op::unevaluated_items: {
        if (!inst.is_array()) return true;
        const auto& a = inst.get_array();
        bool ok = true;
        for (std::size_t i = 0; i < a.size(); ++i) {
          if (ann && ann->has_item(i)) continue;
          if (!item(in, i, a[i], in.node)) {
            ok = false;
            if constexpr (!Collect) return false;
          }
        }
        if (ok && ann) ann->all_items = true;
        return ok;
      }
      case Op::unevaluated_properties: {
        if (!inst.is_object()) return true;
        bool ok = true;
        for (const auto& kv : inst.get_object()) {
          if (ann && ann->has_property(kv.key())) continue;
          if (!extra_property(in, kv.key(), kv.value(), "unevaluatedProperties")) {
            ok = false;
            if constexpr (!Collect) return false;
          }
        }
        if (ok && ann) ann->all_properties = true;
        return ok;
      }
    }
    return true;
  }

  bool item(const Instr& in, std::size_t i, const bj::value& v, std::uint32_t n) {
    const std::string idx = Collect ? std::to_string(i) : std::string();
    Step step(*this, segment(in), idx, true);
    return node(n, v, nullptr);
  }

  bool property(const Instr& in, std::string_view name, const bj::value& v, std::uint32_t n,
                std::string_view via = {}) {
    Step step(*this,
              Collect ? segment(in) + "/" + json::escape_token(via.empty() ? name : via) : "", name,
              true);
    return node(n, v, nullptr);
  }

  // additionalProperties / unevaluatedProperties: a false schema gets one clear message.
  bool extra_property(const Instr& in, std::string_view name, const bj::value& v,
                      const char* keyword) {
    if (is_false_schema(in.node)) {
      Step step(*this, "", name, true);
      return error(in, [&] {
        return "property \"" + std::string(name) + "\" is not allowed (" + keyword + ")";
      });
    }
    Step step(*this, segment(in), name, true);
    return node(in.node, v, nullptr);
  }

  const CompiledSchema& p_;
  std::vector<OutputUnit>* errors_;
  std::vector<AnnotationUnit>* annotations_;
  std::vector<std::uint32_t> scope_;
  std::size_t depth_ = 0;
  std::string kw_path_, inst_path_;
};

}  // namespace

Schema Schema::compile(const bj::value& schema, const CompileOptions& options) {
  return Schema(detail::compile_program(schema, options));
}

Dialect Schema::dialect() const {
  return program_->dialect;
}

bool Schema::validate(const bj::value& instance) const {
  try {
    Run<false> run(*program_, nullptr, nullptr);
    return run.node(program_->root, instance, nullptr);
  } catch (const DepthExceeded&) {
    return false;
  }
}

ValidationResult Schema::evaluate(const bj::value& instance, OutputFormat format) const {
  ValidationResult result;
  if (format == OutputFormat::flag) {
    result.valid = validate(instance);
    return result;
  }
  try {
    Run<true> run(*program_, &result.errors, &result.annotations);
    result.valid = run.node(program_->root, instance, nullptr);
  } catch (const DepthExceeded&) {
    result.valid = false;
    result.errors.push_back(
        OutputUnit{"", "", "",
                   "evaluation nested deeper than " + std::to_string(program_->max_depth) +
                       " subschemas (a $ref cycle that never moves into the instance?)"});
  }
  if (result.valid)
    result.errors.clear();
  else
    result.annotations.clear();
  return result;
}

bj::value ValidationResult::to_json(OutputFormat format) const {
  bj::object out{{"valid", valid}};
  if (format == OutputFormat::basic && !valid) {
    bj::array errs;
    for (const auto& e : errors) {
      errs.push_back(bj::object{{"keywordLocation", e.keyword_location},
                                {"absoluteKeywordLocation", e.absolute_keyword_location},
                                {"instanceLocation", e.instance_location},
                                {"error", e.error}});
    }
    out["errors"] = std::move(errs);
  }
  if (format == OutputFormat::basic && valid && !annotations.empty()) {
    bj::array list;
    for (const auto& a : annotations) {
      list.push_back(bj::object{{"keywordLocation", a.keyword_location},
                                {"absoluteKeywordLocation", a.absolute_keyword_location},
                                {"instanceLocation", a.instance_location},
                                {"annotation", a.annotation}});
    }
    out["annotations"] = std::move(list);
  }
  return out;
}

}  // namespace schemagate::jsonschema
