// Runs a compiled program. Two instantiations: a flag run that stops at the first failure and
// keeps no paths, and a collecting run that records every failure with its locations.

#include "json/jcs.hpp"
#include "json/pointer.hpp"
#include "jsonschema/program.hpp"

#include <boost/container/small_vector.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

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

// A value in a message: RFC 8785 text (numbers as ECMAScript writes them, so that 9.5 reads
// "9.5", not "9.5E0", and the console's own checks can say the same), at most 80 characters,
// never cut inside a UTF-8 sequence.
std::string short_json(const bj::value& v) {
  std::string s;
  try {
    s = json::canonicalize(v);
  } catch (const json::CanonicalizationError&) {
    s = bj::serialize(v);
  }
  if (utf8_length(s) <= 80) return s;
  std::size_t end = 0;
  for (int kept = 0; end < s.size(); ++end) {
    if ((static_cast<unsigned char>(s[end]) & 0xC0) != 0x80 && kept++ == 77) break;
  }
  return s.substr(0, end) + "...";
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

[[gnu::always_inline]] inline std::uint32_t type_bits(const bj::value& v) {
  switch (v.kind()) {
    case bj::kind::null:
      return kNull;
    case bj::kind::bool_:
      return kBoolean;
    case bj::kind::object:
      return kObject;
    case bj::kind::array:
      return kArray;
    case bj::kind::string:
      return kString;
    default:
      return kNumber | (is_integer(v) ? std::uint32_t{kInteger} : 0u);
  }
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

  // Inlined into every call site so that leaves and forwarding nodes cost no call in flag runs.
  [[gnu::always_inline]] bool node(std::uint32_t index, const bj::value& inst, Evaluated* ann) {
    if constexpr (!Collect) {
      const Node* n = &p_.nodes[index];
      if (n->alias != kNone) {
        index = n->alias;
        n = &p_.nodes[index];
      }
      if (n->type_mask != 0 && (n->type_mask & type_bits(inst)) == 0) return false;
      if (n->leaf) return true;
    }
    return enter(index, inst, ann);
  }

  bool enter(std::uint32_t index, const bj::value& inst, Evaluated* ann) {
    const Node& n = p_.nodes[index];
    if (++depth_ > p_.max_depth) throw DepthExceeded{};
    const bool entered = p_.uses_dynamic_scope && (scope_.empty() || scope_.back() != n.resource);
    if (entered) scope_.push_back(n.resource);
    std::optional<Evaluated> local;
    Evaluated* here = ann;
    if (n.collects_annotations) here = &local.emplace();
    const std::size_t annotation_mark = Collect ? annotations_->size() : 0;
    bool ok = true;
    if constexpr (Collect) {  // flag runs checked the type before entering
      if (n.type_mask != 0 && (n.type_mask & type_bits(inst)) == 0) {
        Instr type_check{};
        type_check.op = Op::type;
        type_check.site = n.type_site;
        type_check.aux = n.type_mask;
        ok = instr(type_check, inst, here);
      }
    }
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
    if (ok && local && ann) ann->merge(*local);
    if (entered) scope_.pop_back();
    --depth_;
    return ok;
  }

 private:
  // Extends the keyword and instance paths for one descent and restores them after; every
  // method is a no-op in flag runs, which keep no paths.
  class Step {
   public:
    explicit Step(Run& r) : run_(r) {
      if constexpr (Collect) {
        kw_len_ = r.kw_path_.size();
        inst_len_ = r.inst_path_.size();
      }
    }
    ~Step() {
      if constexpr (Collect) {
        run_.kw_path_.resize(kw_len_);
        run_.inst_path_.resize(inst_len_);
      }
    }
    Step(const Step&) = delete;
    Step& operator=(const Step&) = delete;

    Step& keyword(const Instr& in) {
      if constexpr (Collect) append(run_.kw_path_, run_.p_.sites[in.site].keyword);
      return *this;
    }
    Step& keyword(std::string_view escaped) {
      if constexpr (Collect) append(run_.kw_path_, escaped);
      return *this;
    }
    Step& keyword_index(std::size_t i) {
      if constexpr (Collect) append(run_.kw_path_, std::to_string(i));
      return *this;
    }
    Step& keyword_name(std::string_view name) {
      if constexpr (Collect) append(run_.kw_path_, json::escape_token(name));
      return *this;
    }
    Step& instance_index(std::size_t i) {
      if constexpr (Collect) append(run_.inst_path_, std::to_string(i));
      return *this;
    }
    Step& instance_key(std::string_view key) {
      if constexpr (Collect) append(run_.inst_path_, json::escape_token(key));
      return *this;
    }

   private:
    static void append(std::string& path, std::string_view segment) {
      path += '/';
      path += segment;
    }
    Run& run_;
    std::size_t kw_len_ = 0, inst_len_ = 0;
  };

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

  std::size_t error_mark() const {
    if constexpr (Collect) return errors_->size();
    return 0;
  }
  void drop_errors(std::size_t mark) {
    if constexpr (Collect) errors_->resize(mark);
  }

  const InstrData& data(const Instr& in) const { return p_.data[in.data]; }

  // maxItems, minItems, maxProperties, minProperties.
  bool count_limit(const Instr& in, std::uint64_t count, bool at_most, const char* noun) {
    if (at_most ? count <= in.max : count >= in.max) return true;
    return error(in, [&] {
      return std::string("must have at ") + (at_most ? "most " : "least ") +
             std::to_string(in.max) + " " + noun + ", got " + std::to_string(count);
    });
  }

  bool is_false_schema(std::uint32_t n) const {
    const auto& instrs = p_.nodes[n].instrs;
    return instrs.size() == 1 && instrs[0].op == Op::fail;
  }

  bool matches(std::uint32_t regex, std::string_view s) const {
    if (const auto& fast = p_.fast_patterns[regex]) {
      if (const auto r = fast->search(s)) return *r;
    }
    return RE2::PartialMatch(re2::StringPiece(s.data(), s.size()), *p_.regexes[regex]);
  }

  // After a pass over an object's keys: the folded `required` names that were not seen.
  bool check_required(const PropertyTable& table, std::uint64_t seen, const Instr& in) {
    const std::uint64_t missing = table.required_mask() & ~seen;
    if (missing == 0) return true;
    if constexpr (Collect) {
      Instr req = in;
      req.site = table.required_site();
      for (std::uint32_t e = 0; e < table.size(); ++e) {
        if (table.required_bit(e) & missing) {
          error(req, [&] { return "missing required property \"" + table.name_at(e) + "\""; });
        }
      }
    }
    return false;
  }

  bool instr(const Instr& in, const bj::value& inst, Evaluated* ann) {
    switch (in.op) {
      case Op::fail:
        return error(in, [] { return std::string("no value is allowed here (false schema)"); });

      case Op::type: {
        if (in.aux & type_bits(inst)) return true;
        return error(in,
                     [&] { return "expected " + type_list(in.aux) + ", got " + type_name(inst); });
      }
      case Op::const_value:
        if (json_equal(inst, data(in).value)) return true;
        return error(in, [&] { return "must be equal to " + short_json(data(in).value); });
      case Op::enum_values:
        for (const auto& v : data(in).value.get_array()) {
          if (json_equal(inst, v)) return true;
        }
        return error(in, [&] { return "must be one of " + short_json(data(in).value); });

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
        if (!inst.is_string() || inst.get_string().size() <= in.max ||
            utf8_length(inst.get_string()) <= in.max) {
          return true;
        }
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
        if (!inst.is_string() || matches(in.aux, inst.get_string())) return true;
        return error(in, [&] { return "does not match the pattern " + p_.regex_sources[in.aux]; });
      }
      case Op::format:
        if (check_format(static_cast<Format>(in.aux), inst)) return true;
        return error(in, [&] {
          return "is not a valid " + std::string(format_name(static_cast<Format>(in.aux)));
        });

      case Op::max_items:
        return !inst.is_array() || count_limit(in, inst.get_array().size(), true, "items");
      case Op::min_items:
        return !inst.is_array() || count_limit(in, inst.get_array().size(), false, "items");
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
        return !inst.is_object() || count_limit(in, inst.get_object().size(), true, "properties");
      case Op::min_properties:
        return !inst.is_object() || count_limit(in, inst.get_object().size(), false, "properties");
      case Op::required: {
        if (!inst.is_object()) return true;
        bool ok = true;
        for (const auto& name : data(in).strings) {
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
        // Not a structured binding: Clang before 16 cannot capture one in the lambda below.
        for (const auto& dependency : data(in).dependencies) {
          const auto& prop = dependency.first;
          if (!obj.contains(prop)) continue;
          for (const auto& need : dependency.second) {
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

      case Op::ref: {
        Step step(*this);
        step.keyword(in);
        return node(in.node, inst, ann);
      }
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
        Step step(*this);
        step.keyword(in);
        return node(target, inst, ann);
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
        Step step(*this);
        step.keyword(in);
        return node(target, inst, ann);
      }

      case Op::all_of: {
        bool ok = true;
        for (std::size_t i = 0; i < data(in).nodes.size(); ++i) {
          Step step(*this);
          step.keyword(in).keyword_index(i);
          if (!node(data(in).nodes[i], inst, ann)) {
            ok = false;
            if constexpr (!Collect) return false;
          }
        }
        return ok;
      }
      case Op::any_of: {
        bool any = false;
        const std::size_t mark = error_mark();
        for (std::size_t i = 0; i < data(in).nodes.size(); ++i) {
          std::optional<Evaluated> branch;
          if (ann) branch.emplace();
          Step step(*this);
          step.keyword(in).keyword_index(i);
          if (node(data(in).nodes[i], inst, branch ? &*branch : nullptr)) {
            any = true;
            if (!ann) break;  // nobody needs the other branches' annotations
            ann->merge(*branch);
          }
        }
        if (any) {
          drop_errors(mark);
          return true;
        }
        return error(in, [&] {
          return "does not match any of the " + std::to_string(data(in).nodes.size()) +
                 " alternatives";
        });
      }
      case Op::one_of: {
        std::size_t matched = 0, first = 0, second = 0;
        const std::size_t mark = error_mark();
        std::optional<Evaluated> chosen;
        for (std::size_t i = 0; i < data(in).nodes.size(); ++i) {
          std::optional<Evaluated> branch;
          if (ann) branch.emplace();
          Step step(*this);
          step.keyword(in).keyword_index(i);
          if (node(data(in).nodes[i], inst, branch ? &*branch : nullptr)) {
            if (++matched == 1) {
              first = i;
              chosen = std::move(branch);
            } else {
              second = i;
              break;
            }
          }
        }
        if (matched == 1) {
          drop_errors(mark);
          if (ann) ann->merge(*chosen);
          return true;
        }
        if (matched > 1) {
          drop_errors(mark);
          return error(in, [&] {
            return "matches alternatives " + std::to_string(first) + " and " +
                   std::to_string(second) + "; exactly one must match";
          });
        }
        return error(in, [&] {
          return "does not match any of the " + std::to_string(data(in).nodes.size()) +
                 " alternatives; exactly one must match";
        });
      }
      case Op::not_: {
        const std::size_t mark = error_mark();
        bool matched;
        {
          Step step(*this);
          step.keyword(in);
          matched = node(in.node, inst, nullptr);
        }
        drop_errors(mark);
        if (!matched) return true;
        return error(in, [] { return std::string("must not match the schema in \"not\""); });
      }
      case Op::if_then_else: {
        const std::size_t mark = error_mark();
        std::optional<Evaluated> cond;
        if (ann) cond.emplace();
        bool holds;
        {
          Step step(*this);
          step.keyword(in);
          holds = node(data(in).nodes[0], inst, cond ? &*cond : nullptr);
        }
        drop_errors(mark);
        if (holds && ann) ann->merge(*cond);
        const std::uint32_t next = holds ? data(in).nodes[1] : data(in).nodes[2];
        if (next == kNone) return true;
        Step step(*this);
        step.keyword(holds ? "then" : "else");
        return node(next, inst, ann);
      }
      case Op::dependent_schemas: {
        if (!inst.is_object()) return true;
        bool ok = true;
        for (const auto& [prop, n] : data(in).named) {
          if (!inst.get_object().contains(prop)) continue;
          Step step(*this);
          step.keyword(in).keyword_name(prop);
          if (!node(n, inst, ann)) {
            ok = false;
            if constexpr (!Collect) return false;
          }
        }
        return ok;
      }

      case Op::prefix_items: {
        if (!inst.is_array()) return true;
        const auto& a = inst.get_array();
        const std::size_t n = std::min(a.size(), data(in).nodes.size());
        bool ok = true;
        for (std::size_t i = 0; i < n; ++i) {
          Step step(*this);
          step.keyword(in).keyword_index(i).instance_index(i);
          if (!node(data(in).nodes[i], a[i], nullptr)) {
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
          Step step(*this);
          step.keyword(in).instance_index(i);
          if (!node(in.node, a[i], nullptr)) {
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
        const std::size_t mark = error_mark();
        std::vector<std::size_t> hits;
        for (std::size_t i = 0; i < a.size(); ++i) {
          Step step(*this);
          step.keyword(in).instance_index(i);
          if (node(in.node, a[i], nullptr)) {
            ++count;
            if (ann) hits.push_back(i);
            if (!Collect && !ann && count >= in.min &&
                in.max == std::numeric_limits<std::uint64_t>::max()) {
              break;
            }
          }
        }
        drop_errors(mark);
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
        const PropertyTable& table = p_.property_tables[in.aux];
        bool ok = true;
        std::uint64_t seen = 0;
        auto check = [&](std::string_view key, const bj::value& v, std::uint32_t entry) {
          seen |= table.required_bit(entry);
          if (ann) ann->properties.push_back(key);
          Step step(*this);
          step.keyword(in).keyword_name(key).instance_key(key);
          if (node(table.node_at(entry), v, nullptr)) return true;
          ok = false;
          return false;
        };
        // Walk whichever side is smaller: the instance's members or the schema's names.
        if (obj.size() <= table.size()) {
          for (const auto& kv : obj) {
            const std::uint32_t e = table.find(kv.key());
            if (e != kNone && !check(kv.key(), kv.value(), e) && !Collect) return false;
          }
        } else {
          for (std::uint32_t e = 0; e < table.size(); ++e) {
            const auto it = obj.find(table.name_at(e));
            if (it != obj.end() && !check(it->key(), it->value(), e) && !Collect) return false;
          }
        }
        return check_required(table, seen, in) && ok;
      }
      case Op::properties_then_additional: {
        if (!inst.is_object()) return true;
        const PropertyTable& table = p_.property_tables[in.aux];
        bool ok = true;
        std::uint64_t seen = 0;
        for (const auto& kv : inst.get_object()) {
          const auto key = kv.key();
          const std::uint32_t e = table.find(key);
          if (e != kNone) {
            seen |= table.required_bit(e);
            if (ann) ann->properties.push_back(key);
            Step step(*this);
            step.keyword(in).keyword_name(key).instance_key(key);
            if (node(table.node_at(e), kv.value(), nullptr)) continue;
          } else if (additional(in, key, kv.value())) {
            continue;
          }
          ok = false;
          if constexpr (!Collect) return false;
        }
        if (!check_required(table, seen, in)) ok = false;
        if (ok && ann) ann->all_properties = true;
        return ok;
      }
      case Op::pattern_properties: {
        if (!inst.is_object()) return true;
        bool ok = true;
        for (const auto& kv : inst.get_object()) {
          const auto key = kv.key();
          for (const auto& [re, n] : data(in).patterned) {
            if (!matches(re, key)) continue;
            if (ann) ann->properties.push_back(key);
            Step step(*this);
            step.keyword(in).keyword_name(p_.regex_sources[re]).instance_key(key);
            if (!node(n, kv.value(), nullptr)) {
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
          if (in.aux != kNone && p_.property_tables[in.aux].find(key) != kNone) continue;
          bool by_pattern = false;
          for (const auto& pr : data(in).patterned) {
            if (matches(pr.first, key)) {
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
          Step step(*this);
          step.keyword(in).instance_key(kv.key());
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
          Step step(*this);
          step.keyword(in).instance_index(i);
          if (!node(in.node, a[i], nullptr)) {
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

  // The additionalProperties half of a fused instruction, reported at its own site.
  bool additional(const Instr& in, std::string_view key, const bj::value& v) {
    Instr alone = in;
    alone.site = in.site2;
    return extra_property(alone, key, v, "additionalProperties");
  }

  // additionalProperties / unevaluatedProperties: a false schema gets one clear message.
  bool extra_property(const Instr& in, std::string_view name, const bj::value& v,
                      const char* keyword) {
    Step step(*this);
    step.instance_key(name);
    if (is_false_schema(in.node)) {
      return error(in, [&] {
        return "property \"" + std::string(name) + "\" is not allowed (" + keyword + ")";
      });
    }
    step.keyword(in);
    return node(in.node, v, nullptr);
  }

  const CompiledSchema& p_;
  std::vector<OutputUnit>* errors_;
  std::vector<AnnotationUnit>* annotations_;
  boost::container::small_vector<std::uint32_t, 16> scope_;
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

bj::array ValidationResult::violations() const {
  bj::array out;
  for (const auto& e : errors) {
    out.push_back(bj::object{{"instanceLocation", e.instance_location},
                             {"keywordLocation", e.keyword_location},
                             {"message", e.error}});
  }
  return out;
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
