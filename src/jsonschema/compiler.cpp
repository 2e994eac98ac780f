// Schema -> program. Two passes: index every document reached (resources, anchors, base URIs,
// dialects, vocabularies), then compile subschemas on demand into nodes, memoized by location
// so that $ref cycles become graph edges.

#include "json/pointer.hpp"
#include "jsonschema/metaschemas.hpp"
#include "jsonschema/program.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace schemagate::jsonschema {

namespace bj = boost::json;
using namespace detail;

namespace {

struct Vocab {
  bool applicator = true;
  bool unevaluated = true;
  bool validation = true;
  bool format_assertion = false;
};

constexpr std::string_view kDraft7 = "http://json-schema.org/draft-07/schema";
constexpr std::string_view kDraft2019 = "https://json-schema.org/draft/2019-09/schema";
constexpr std::string_view kDraft2020 = "https://json-schema.org/draft/2020-12/schema";

std::string_view dialect_name(Dialect d) {
  switch (d) {
    case Dialect::draft7:
      return "draft-07";
    case Dialect::draft2019_09:
      return "2019-09";
    default:
      return "2020-12";
  }
}

}  // namespace

SchemaRegistry::SchemaRegistry() {
  for (const auto& doc : embedded_metaschemas()) {
    bj::value v = bj::parse(doc.text);
    if (doc.name == "vocabularies") {
      for (auto& kv : v.as_object())
        add(std::string(kv.key()), kv.value());
    } else {
      add(std::string(v.at("$id").as_string()), v);
    }
  }
}

void SchemaRegistry::add(std::string uri, bj::value document) {
  if (!uri.empty() && uri.back() == '#') uri.pop_back();
  documents_[std::move(uri)] = std::move(document);
}

const bj::value* SchemaRegistry::find(std::string_view uri) const {
  if (!uri.empty() && uri.back() == '#') uri.remove_suffix(1);
  const auto it = documents_.find(uri);
  return it == documents_.end() ? nullptr : &it->second;
}

namespace detail {

class Compiler {
 public:
  explicit Compiler(const CompileOptions& options)
      : options_(options), registry_(options.registry ? *options.registry : default_registry()) {
    program_ = std::make_shared<CompiledSchema>();
    program_->assert_format = options.assert_format;
    program_->max_depth = options.max_evaluation_depth;
  }

  std::shared_ptr<CompiledSchema> run(const bj::value& root) {
    std::string base = options_.base_uri.empty() ? "schemagate:/schema.json" : options_.base_uri;
    const std::uint32_t doc = add_document(&root, base);
    index_document(doc, base, options_.default_dialect, default_vocab(options_.default_dialect));
    program_->root = compile_node(doc, "");
    program_->dialect = infos_.at(key(doc, "")).dialect;
    compile_dynamic_targets();
    link_aliases();
    return program_;
  }

 private:
  struct LocationInfo {
    std::string base;
    std::uint32_t resource;
    Dialect dialect;
    Vocab vocab;
  };
  struct ResourceInfo {
    std::uint32_t doc;
    std::string pointer;
    std::unordered_map<std::string, std::string> dynamic_anchor_pointers;
  };
  struct Target {
    std::uint32_t doc;
    std::string pointer;
  };

  static const SchemaRegistry& default_registry() {
    static const SchemaRegistry registry;
    return registry;
  }

  static Vocab default_vocab(Dialect) { return Vocab{}; }

  static std::string key(std::uint32_t doc, std::string_view pointer) {
    return std::to_string(doc) + ":" + std::string(pointer);
  }

  std::uint32_t add_document(const bj::value* v, std::string uri) {
    docs_.push_back(v);
    doc_uris_.push_back(std::move(uri));
    return static_cast<std::uint32_t>(docs_.size() - 1);
  }

  [[noreturn]] void fail(std::uint32_t doc, std::string_view pointer, const std::string& what) {
    throw SchemaError("schema error at " + doc_uris_[doc] + "#" + std::string(pointer) + ": " +
                      what);
  }

  // Both passes recurse per level of nesting; a hostile schema must not exhaust the stack.
  class DepthGuard {
   public:
    DepthGuard(Compiler& c, std::uint32_t doc, std::string_view pointer) : c_(c) {
      if (++c_.depth_ > c_.options_.max_schema_depth) {
        --c_.depth_;
        c_.fail(doc, pointer,
                "schema nested deeper than " + std::to_string(c_.options_.max_schema_depth) +
                    " levels (limit)");
      }
    }
    ~DepthGuard() { --c_.depth_; }

   private:
    Compiler& c_;
  };

  // ---- dialects and vocabularies -------------------------------------------------------

  std::pair<Dialect, Vocab> dialect_of(std::string_view schema_uri, std::uint32_t doc,
                                       std::string_view pointer, int depth = 0) {
    std::string uri(schema_uri);
    if (!uri.empty() && uri.back() == '#') uri.pop_back();
    if (uri == kDraft7) return {Dialect::draft7, Vocab{}};
    if (uri == kDraft2019) return {Dialect::draft2019_09, Vocab{}};
    if (uri == kDraft2020) return {Dialect::draft2020_12, Vocab{}};
    if (uri == "http://json-schema.org/draft-04/schema" ||
        uri == "http://json-schema.org/draft-06/schema" ||
        uri == "http://json-schema.org/draft-03/schema") {
      fail(doc, pointer, "$schema " + uri + " is not supported (use draft-07, 2019-09 or 2020-12)");
    }
    const bj::value* meta = registry_.find(uri);
    if (!meta || !meta->is_object() || depth > 8) {
      fail(doc, pointer, "unknown $schema \"" + uri + "\": register its metaschema first");
    }
    const auto& obj = meta->get_object();
    Dialect d = options_.default_dialect;
    if (const auto* s = obj.if_contains("$schema"); s && s->is_string() && *s != uri.c_str()) {
      d = dialect_of(s->get_string(), doc, pointer, depth + 1).first;
    }
    Vocab vocab;
    if (const auto* vocabs = obj.if_contains("$vocabulary"); vocabs && vocabs->is_object()) {
      vocab.applicator = vocab.unevaluated = vocab.validation = false;
      for (const auto& kv : vocabs->get_object()) {
        const std::string_view v = kv.key();
        const bool required = kv.value().is_bool() && kv.value().get_bool();
        if (v.ends_with("/vocab/applicator")) {
          vocab.applicator = true;
          if (d == Dialect::draft2019_09) vocab.unevaluated = true;
        } else if (v.ends_with("/vocab/unevaluated")) {
          vocab.unevaluated = true;
        } else if (v.ends_with("/vocab/validation")) {
          vocab.validation = true;
        } else if (v.ends_with("/vocab/format-assertion")) {
          vocab.format_assertion = true;
        } else if (v.ends_with("/vocab/core") || v.ends_with("/vocab/meta-data") ||
                   v.ends_with("/vocab/content") || v.ends_with("/vocab/format") ||
                   v.ends_with("/vocab/format-annotation")) {
        } else if (required) {
          fail(doc, pointer,
               "metaschema " + uri + " requires vocabulary " + std::string(v) +
                   ", which this validator does not know");
        }
      }
    }
    return {d, vocab};
  }

  // ---- indexing --------------------------------------------------------------------------

  void index_document(std::uint32_t doc, const std::string& base, Dialect dialect, Vocab vocab) {
    const std::uint32_t resource = new_resource(base, doc, "", dialect);
    index(doc, *docs_[doc], "", base, resource, dialect, vocab, true);
  }

  std::uint32_t new_resource(const std::string& uri, std::uint32_t doc, std::string pointer,
                             Dialect dialect) {
    if (const auto it = resources_by_uri_.find(uri); it != resources_by_uri_.end()) {
      return it->second;
    }
    Resource r;
    r.uri = uri;
    r.dialect = dialect;
    program_->resources.push_back(std::move(r));
    resource_infos_.push_back(ResourceInfo{doc, std::move(pointer), {}});
    const auto idx = static_cast<std::uint32_t>(program_->resources.size() - 1);
    resources_by_uri_[uri] = idx;
    return idx;
  }

  void index(std::uint32_t doc, const bj::value& v, const std::string& pointer, std::string base,
             std::uint32_t resource, Dialect dialect, Vocab vocab, bool document_root) {
    const DepthGuard guard(*this, doc, pointer);
    if (!v.is_object()) {
      infos_.emplace(key(doc, pointer), LocationInfo{base, resource, dialect, vocab});
      return;
    }
    const auto& obj = v.get_object();
    const auto* id = obj.if_contains("$id");
    const bool ref_hides_siblings = dialect == Dialect::draft7 && obj.contains("$ref");
    const bool starts_resource = document_root || (id && id->is_string() && !ref_hides_siblings &&
                                                   !id->get_string().starts_with("#"));
    if (const auto* s = obj.if_contains("$schema"); s && s->is_string() && starts_resource) {
      std::tie(dialect, vocab) = dialect_of(s->get_string(), doc, pointer);
      if (document_root) program_->resources[resource].dialect = dialect;
    }
    if (id && id->is_string() && !ref_hides_siblings) {
      const std::string_view text = id->get_string();
      if (dialect == Dialect::draft7 && text.starts_with("#")) {
        anchors_[base + text.data()] = Target{doc, pointer};
      } else {
        const auto [uri, fragment] = split_fragment(resolve_uri(base, text));
        if (dialect == Dialect::draft7 && !fragment.empty()) {
          anchors_[uri + "#" + fragment] = Target{doc, pointer};
        }
        base = uri;
        if (document_root) {
          resources_by_uri_[uri] = resource;
          program_->resources[resource].uri = uri;
        } else {
          resource = new_resource(uri, doc, pointer, dialect);
        }
      }
    }
    if (dialect != Dialect::draft7) {
      if (const auto* a = obj.if_contains("$anchor"); a && a->is_string()) {
        anchors_[base + "#" + std::string(a->get_string())] = Target{doc, pointer};
      }
      if (dialect == Dialect::draft2020_12) {
        if (const auto* a = obj.if_contains("$dynamicAnchor"); a && a->is_string()) {
          const std::string name(a->get_string());
          anchors_[base + "#" + name] = Target{doc, pointer};
          resource_infos_[resource].dynamic_anchor_pointers[name] = pointer;
        }
      }
      if (dialect == Dialect::draft2019_09) {
        if (const auto* a = obj.if_contains("$recursiveAnchor");
            a && a->is_bool() && a->get_bool() && resource_infos_[resource].pointer == pointer) {
          program_->resources[resource].recursive_anchor = true;
        }
      }
    }
    infos_.emplace(key(doc, pointer), LocationInfo{base, resource, dialect, vocab});

    auto sub = [&](std::string_view kw, const bj::value& child, std::string_view token = {},
                   bool has_token = false) {
      // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict for
      // `"/" + std::string` (GCC bug 105329).
      std::string p = pointer;
      p += '/';
      p += json::escape_token(kw);
      if (has_token) {
        p += '/';
        p += json::escape_token(token);
      }
      index(doc, child, p, base, resource, dialect, vocab, false);
    };
    for (const auto& kv : obj) {
      const std::string_view k = kv.key();
      const bj::value& val = kv.value();
      if (k == "additionalProperties" || k == "propertyNames" || k == "not" || k == "if" ||
          k == "then" || k == "else" || k == "contains" || k == "additionalItems" ||
          k == "unevaluatedItems" || k == "unevaluatedProperties" ||
          (k == "items" && !val.is_array())) {
        sub(k, val);
      } else if (k == "allOf" || k == "anyOf" || k == "oneOf" || k == "prefixItems" ||
                 (k == "items" && val.is_array())) {
        if (!val.is_array()) continue;
        for (std::size_t i = 0; i < val.get_array().size(); ++i) {
          sub(k, val.get_array()[i], std::to_string(i), true);
        }
      } else if (k == "properties" || k == "patternProperties" || k == "$defs" ||
                 k == "definitions" || k == "dependentSchemas" || k == "dependencies") {
        if (!val.is_object()) continue;
        for (const auto& child : val.get_object()) {
          if (k == "dependencies" && child.value().is_array()) continue;
          sub(k, child.value(), child.key(), true);
        }
      }
    }
  }

  // The info of a location that indexing may not have reached (inside an unknown keyword):
  // that of its nearest indexed ancestor.
  const LocationInfo& info_at(std::uint32_t doc, const std::string& pointer) {
    if (const auto it = infos_.find(key(doc, pointer)); it != infos_.end()) return it->second;
    std::string parent = pointer;
    while (!parent.empty()) {
      parent.resize(parent.rfind('/'));
      if (const auto it = infos_.find(key(doc, parent)); it != infos_.end()) {
        const LocationInfo copy = it->second;
        const bj::value* v = value_at(doc, pointer);
        if (!v) fail(doc, pointer, "no subschema at this location");
        index(doc, *v, pointer, copy.base, copy.resource, copy.dialect, copy.vocab, false);
        return infos_.at(key(doc, pointer));
      }
    }
    fail(doc, pointer, "location was never indexed");
  }

  const bj::value* value_at(std::uint32_t doc, const std::string& pointer) {
    return json::resolve(*docs_[doc], json::Pointer::parse(pointer));
  }

  // ---- references ------------------------------------------------------------------------

  Target resolve_reference(std::uint32_t doc, const std::string& pointer, const LocationInfo& info,
                           std::string_view ref) {
    std::string absolute;
    try {
      absolute = resolve_uri(info.base, ref);
    } catch (const SchemaError& e) {
      fail(doc, pointer, e.what());
    }
    auto [uri, fragment] = split_fragment(absolute);
    auto it = resources_by_uri_.find(uri);
    if (it == resources_by_uri_.end()) {
      const bj::value* remote = registry_.find(uri);
      if (!remote) {
        fail(doc, pointer,
             "cannot resolve $ref \"" + std::string(ref) + "\": no schema is registered as " + uri);
      }
      const std::uint32_t remote_doc = add_document(remote, uri);
      index_document(remote_doc, uri, info.dialect, info.vocab);
      it = resources_by_uri_.find(uri);
    }
    const auto& res = resource_infos_[it->second];
    if (fragment.empty()) return Target{res.doc, res.pointer};
    if (fragment.front() == '/') {
      json::Pointer ptr;
      try {
        ptr = json::Pointer::parse_fragment("#" + fragment);
      } catch (const json::PointerError& e) {
        fail(doc, pointer, "$ref \"" + std::string(ref) + "\": " + e.what());
      }
      std::string target = res.pointer + ptr.to_string();
      if (!value_at(res.doc, target)) {
        fail(
            doc, pointer,
            "cannot resolve $ref \"" + std::string(ref) + "\": nothing at " + uri + "#" + fragment);
      }
      return Target{res.doc, target};
    }
    if (const auto a = anchors_.find(uri + "#" + fragment); a != anchors_.end()) return a->second;
    fail(doc, pointer,
         "cannot resolve $ref \"" + std::string(ref) + "\": no anchor \"" + fragment + "\" in " +
             uri);
  }

  // ---- compilation -----------------------------------------------------------------------

  std::uint32_t site(const LocationInfo& info, std::uint32_t doc, const std::string& pointer,
                     std::string keyword) {
    const auto& res = resource_infos_[info.resource];
    std::string relative = res.doc == doc && pointer.starts_with(res.pointer)
                               ? pointer.substr(res.pointer.size())
                               : pointer;
    std::string absolute = program_->resources[info.resource].uri + "#" + relative;
    if (!keyword.empty()) absolute += "/" + keyword;
    program_->sites.push_back(Site{std::move(keyword), std::move(absolute)});
    return static_cast<std::uint32_t>(program_->sites.size() - 1);
  }

  std::uint32_t compile_node(std::uint32_t doc, const std::string& pointer) {
    const std::string k = key(doc, pointer);
    if (const auto it = memo_.find(k); it != memo_.end()) return it->second;
    if (program_->nodes.size() >= options_.max_schema_nodes) {
      fail(doc, pointer,
           "more than " + std::to_string(options_.max_schema_nodes) + " subschemas (limit)");
    }
    const DepthGuard guard(*this, doc, pointer);
    const auto idx = static_cast<std::uint32_t>(program_->nodes.size());
    program_->nodes.emplace_back();
    memo_[k] = idx;
    const LocationInfo info = info_at(doc, pointer);
    used_resources_.insert(info.resource);
    program_->nodes[idx].resource = info.resource;
    const bj::value* v = value_at(doc, pointer);
    std::vector<InstrSpec> instrs;
    std::vector<Annotation> annotations;
    bool collects = false;
    if (v->is_bool()) {
      if (!v->get_bool()) instrs.push_back(spec(Op::fail, site(info, doc, pointer, "")));
    } else if (v->is_object()) {
      compile_keywords(doc, pointer, info, v->get_object(), instrs, collects, annotations);
    } else {
      fail(doc, pointer, "a schema must be an object or a boolean, not " + kind_name(*v));
    }
    std::vector<Instr> runtime;
    runtime.reserve(instrs.size());
    auto& node = program_->nodes[idx];
    for (auto& in : instrs) {
      if (in.op == Op::type) {  // hoisted into the node
        node.type_mask = in.aux;
        node.type_site = in.site;
        continue;
      }
      Instr slim = in;
      if (uses_data(in.op)) {
        program_->data.push_back(std::move(in.extra));
        slim.data = static_cast<std::uint32_t>(program_->data.size() - 1);
      }
      runtime.push_back(slim);
    }
    node.leaf = !collects && runtime.empty();
    node.instrs = std::move(runtime);
    program_->nodes[idx].collects_annotations = collects;
    program_->nodes[idx].annotations = std::move(annotations);
    return idx;
  }

  static bool uses_data(Op op) {
    switch (op) {
      case Op::const_value:
      case Op::enum_values:
      case Op::required:
      case Op::dependent_required:
      case Op::dependent_schemas:
      case Op::all_of:
      case Op::any_of:
      case Op::one_of:
      case Op::if_then_else:
      case Op::prefix_items:
      case Op::pattern_properties:
      case Op::additional_properties:
        return true;
      default:
        return false;
    }
  }

  static InstrSpec spec(Op op, std::uint32_t site) {
    InstrSpec in;
    in.op = op;
    in.site = site;
    return in;
  }

  static std::string kind_name(const bj::value& v) {
    switch (v.kind()) {
      case bj::kind::null:
        return "null";
      case bj::kind::bool_:
        return "a boolean";
      case bj::kind::string:
        return "a string";
      case bj::kind::array:
        return "an array";
      case bj::kind::object:
        return "an object";
      default:
        return "a number";
    }
  }

  double number_of(std::uint32_t doc, const std::string& pointer, std::string_view kw,
                   const bj::value& v) {
    if (!v.is_number()) fail(doc, pointer, std::string(kw) + " must be a number");
    return v.to_number<double>();
  }

  std::uint64_t count_of(std::uint32_t doc, const std::string& pointer, std::string_view kw,
                         const bj::value& v) {
    if (v.is_uint64()) return v.get_uint64();
    if (v.is_int64() && v.get_int64() >= 0) return static_cast<std::uint64_t>(v.get_int64());
    if (v.is_double() && v.get_double() >= 0 && std::floor(v.get_double()) == v.get_double()) {
      return v.get_double() >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max()
                                      : static_cast<std::uint64_t>(v.get_double());
    }
    fail(doc, pointer, std::string(kw) + " must be a non-negative integer");
  }

  std::uint32_t add_regex(std::uint32_t doc, const std::string& pointer, std::string_view source) {
    std::string translated;
    try {
      translated = translate_ecma_regex(source);
    } catch (const SchemaError& e) {
      fail(doc, pointer, e.what());
    }
    RE2::Options opts;
    opts.set_log_errors(false);
    opts.set_encoding(RE2::Options::EncodingUTF8);
    auto re = std::make_unique<RE2>(translated, opts);
    if (!re->ok()) {
      fail(doc, pointer, "invalid pattern \"" + std::string(source) + "\": " + re->error());
    }
    program_->regexes.push_back(std::move(re));
    program_->fast_patterns.push_back(options_.fast_patterns ? FastPattern::compile(source)
                                                             : std::nullopt);
    program_->regex_sources.emplace_back(source);
    return static_cast<std::uint32_t>(program_->regexes.size() - 1);
  }

  static std::uint32_t type_bit(std::string_view t) {
    if (t == "null") return kNull;
    if (t == "boolean") return kBoolean;
    if (t == "object") return kObject;
    if (t == "array") return kArray;
    if (t == "number") return kNumber;
    if (t == "string") return kString;
    if (t == "integer") return kInteger;
    return 0;
  }

  void compile_keywords(std::uint32_t doc, const std::string& pointer, const LocationInfo& info,
                        const bj::object& obj, std::vector<InstrSpec>& out, bool& collects,
                        std::vector<Annotation>& annotations) {
    const Dialect d = info.dialect;
    const Vocab& vocab = info.vocab;
    auto child = [&](std::string_view kw) {
      return compile_node(doc, pointer + "/" + json::escape_token(kw));
    };
    auto child_at = [&](std::string_view kw, std::string_view token) {
      return compile_node(doc,
                          pointer + "/" + json::escape_token(kw) + "/" + json::escape_token(token));
    };
    auto make = [&](Op op, std::string_view kw) {
      return spec(op, site(info, doc, pointer, json::escape_token(kw)));
    };
    auto schema_array = [&](std::string_view kw, const bj::value& v) {
      if (!v.is_array() || v.get_array().empty()) {
        fail(doc, pointer, std::string(kw) + " must be a non-empty array of schemas");
      }
      std::vector<std::uint32_t> nodes;
      for (std::size_t i = 0; i < v.get_array().size(); ++i) {
        nodes.push_back(child_at(kw, std::to_string(i)));
      }
      return nodes;
    };

    // draft-07: $ref replaces the whole schema.
    if (const auto* ref = obj.if_contains("$ref")) {
      if (!ref->is_string()) fail(doc, pointer, "$ref must be a string");
      InstrSpec in = make(Op::ref, "$ref");
      const Target t = resolve_reference(doc, pointer, info, ref->get_string());
      in.node = compile_node(t.doc, t.pointer);
      out.push_back(std::move(in));
      if (d == Dialect::draft7) return;
    }
    if (d == Dialect::draft2020_12) {
      if (const auto* ref = obj.if_contains("$dynamicRef")) {
        if (!ref->is_string()) fail(doc, pointer, "$dynamicRef must be a string");
        const Target t = resolve_reference(doc, pointer, info, ref->get_string());
        DynamicRef dr;
        dr.target = compile_node(t.doc, t.pointer);
        const auto fragment = split_fragment(ref->get_string()).second;
        if (!fragment.empty() && fragment.front() != '/') {
          dr.anchor = fragment;
          const bj::value* tv = value_at(t.doc, t.pointer);
          const auto* anchor =
              tv && tv->is_object() ? tv->get_object().if_contains("$dynamicAnchor") : nullptr;
          dr.dynamic = anchor && anchor->is_string() && anchor->get_string() == fragment.c_str();
        }
        program_->dynamic_refs.push_back(std::move(dr));
        program_->uses_dynamic_scope = true;
        InstrSpec in = make(Op::dynamic_ref, "$dynamicRef");
        in.aux = static_cast<std::uint32_t>(program_->dynamic_refs.size() - 1);
        out.push_back(std::move(in));
      }
    }
    if (d == Dialect::draft2019_09) {
      if (const auto* ref = obj.if_contains("$recursiveRef")) {
        if (!ref->is_string()) fail(doc, pointer, "$recursiveRef must be a string");
        const Target t = resolve_reference(doc, pointer, info, ref->get_string());
        program_->uses_dynamic_scope = true;
        InstrSpec in = make(Op::recursive_ref, "$recursiveRef");
        in.node = compile_node(t.doc, t.pointer);
        out.push_back(std::move(in));
      }
    }

    if (vocab.validation) {
      if (const auto* t = obj.if_contains("type")) {
        InstrSpec in = make(Op::type, "type");
        auto add = [&](const bj::value& name) {
          const std::uint32_t bit = name.is_string() ? type_bit(name.get_string()) : 0;
          if (!bit) fail(doc, pointer, "unknown type " + bj::serialize(name));
          in.aux |= bit;
        };
        if (t->is_array()) {
          for (const auto& n : t->get_array())
            add(n);
        } else {
          add(*t);
        }
        out.push_back(std::move(in));
      }
      if (const auto* c = obj.if_contains("const")) {
        InstrSpec in = make(Op::const_value, "const");
        in.extra.value = *c;
        out.push_back(std::move(in));
      }
      if (const auto* e = obj.if_contains("enum")) {
        if (!e->is_array()) fail(doc, pointer, "enum must be an array");
        InstrSpec in = make(Op::enum_values, "enum");
        in.extra.value = *e;
        out.push_back(std::move(in));
      }
      struct NumericKeyword {
        const char* name;
        Op op;
      };
      for (const auto& nk :
           {NumericKeyword{"multipleOf", Op::multiple_of}, NumericKeyword{"maximum", Op::maximum},
            NumericKeyword{"exclusiveMaximum", Op::exclusive_maximum},
            NumericKeyword{"minimum", Op::minimum},
            NumericKeyword{"exclusiveMinimum", Op::exclusive_minimum}}) {
        if (const auto* v = obj.if_contains(nk.name)) {
          InstrSpec in = make(nk.op, nk.name);
          in.number = number_of(doc, pointer, nk.name, *v);
          if (nk.op == Op::multiple_of && !(in.number > 0)) {
            fail(doc, pointer, "multipleOf must be greater than 0");
          }
          out.push_back(std::move(in));
        }
      }
      struct CountKeyword {
        const char* name;
        Op op;
      };
      for (const auto& ck :
           {CountKeyword{"maxLength", Op::max_length}, CountKeyword{"minLength", Op::min_length},
            CountKeyword{"maxItems", Op::max_items}, CountKeyword{"minItems", Op::min_items},
            CountKeyword{"maxProperties", Op::max_properties},
            CountKeyword{"minProperties", Op::min_properties}}) {
        if (const auto* v = obj.if_contains(ck.name)) {
          InstrSpec in = make(ck.op, ck.name);
          in.max = count_of(doc, pointer, ck.name, *v);
          out.push_back(std::move(in));
        }
      }
      if (const auto* p = obj.if_contains("pattern")) {
        if (!p->is_string()) fail(doc, pointer, "pattern must be a string");
        InstrSpec in = make(Op::pattern, "pattern");
        in.aux = add_regex(doc, pointer + "/pattern", p->get_string());
        out.push_back(std::move(in));
      }
      if (const auto* u = obj.if_contains("uniqueItems")) {
        if (!u->is_bool()) fail(doc, pointer, "uniqueItems must be a boolean");
        if (u->get_bool()) out.push_back(make(Op::unique_items, "uniqueItems"));
      }
      if (const auto* r = obj.if_contains("required")) {
        if (!r->is_array()) fail(doc, pointer, "required must be an array of strings");
        InstrSpec in = make(Op::required, "required");
        for (const auto& name : r->get_array()) {
          if (!name.is_string()) fail(doc, pointer, "required must be an array of strings");
          in.extra.strings.emplace_back(name.get_string());
        }
        if (!in.extra.strings.empty()) out.push_back(std::move(in));
      }
      // "dependencies" is draft-07's; later dialects split it in two but still honour it.
      for (const char* dep_kw : {"dependencies", "dependentRequired"}) {
        if (d == Dialect::draft7 && std::string_view(dep_kw) == "dependentRequired") continue;
        if (const auto* deps = obj.if_contains(dep_kw); deps && deps->is_object()) {
          InstrSpec in = make(Op::dependent_required, dep_kw);
          for (const auto& kv : deps->get_object()) {
            if (!kv.value().is_array()) continue;  // a schema dependency (draft-07)
            std::vector<std::string> names;
            for (const auto& n : kv.value().get_array()) {
              if (!n.is_string())
                fail(doc, pointer, std::string(dep_kw) + " lists must hold strings");
              names.emplace_back(n.get_string());
            }
            in.extra.dependencies.emplace_back(std::string(kv.key()), std::move(names));
          }
          if (!in.extra.dependencies.empty()) out.push_back(std::move(in));
        }
      }
    }

    if (const auto* f = obj.if_contains("format");
        f && f->is_string() && (options_.assert_format || vocab.format_assertion)) {
      InstrSpec in = make(Op::format, "format");
      in.aux = static_cast<std::uint32_t>(format_from_name(f->get_string()));
      if (in.aux != static_cast<std::uint32_t>(Format::unknown)) out.push_back(std::move(in));
    }

    if (vocab.applicator) {
      for (const char* kw : {"allOf", "anyOf", "oneOf"}) {
        if (const auto* v = obj.if_contains(kw)) {
          InstrSpec in =
              make(kw[0] == 'a' ? (kw[1] == 'l' ? Op::all_of : Op::any_of) : Op::one_of, kw);
          in.extra.nodes = schema_array(kw, *v);
          out.push_back(std::move(in));
        }
      }
      if (obj.contains("not")) {
        InstrSpec in = make(Op::not_, "not");
        in.node = child("not");
        out.push_back(std::move(in));
      }
      if (obj.contains("if")) {
        InstrSpec in = make(Op::if_then_else, "if");
        in.extra.nodes = {child("if"), obj.contains("then") ? child("then") : kNone,
                          obj.contains("else") ? child("else") : kNone};
        out.push_back(std::move(in));
      }
      for (const char* dep_schemas : {"dependencies", "dependentSchemas"}) {
        if (d == Dialect::draft7 && std::string_view(dep_schemas) == "dependentSchemas") continue;
        if (const auto* deps = obj.if_contains(dep_schemas); deps && deps->is_object()) {
          InstrSpec in = make(Op::dependent_schemas, dep_schemas);
          for (const auto& kv : deps->get_object()) {
            if (kv.value().is_array()) continue;
            in.extra.named.emplace_back(std::string(kv.key()), child_at(dep_schemas, kv.key()));
          }
          if (!in.extra.named.empty()) out.push_back(std::move(in));
        }
      }
      // Arrays.
      std::size_t prefix = 0;
      const bool items_is_array = obj.contains("items") && obj.at("items").is_array();
      const char* prefix_kw = d == Dialect::draft2020_12 ? "prefixItems" : "items";
      if (const auto* p = obj.if_contains(prefix_kw);
          p && (d == Dialect::draft2020_12 || items_is_array)) {
        InstrSpec in = make(Op::prefix_items, prefix_kw);
        in.extra.nodes = schema_array(prefix_kw, *p);
        prefix = in.extra.nodes.size();
        out.push_back(std::move(in));
      }
      const char* rest_kw = d == Dialect::draft2020_12 ? "items"
                            : items_is_array           ? "additionalItems"
                                                       : "items";
      if (obj.contains(rest_kw) && !(d == Dialect::draft2020_12 && items_is_array)) {
        InstrSpec in = make(Op::items, rest_kw);
        in.node = child(rest_kw);
        in.aux = static_cast<std::uint32_t>(prefix);
        out.push_back(std::move(in));
      }
      if (obj.contains("contains")) {
        InstrSpec in = make(Op::contains, "contains");
        in.node = child("contains");
        in.min = 1;
        if (d != Dialect::draft7 && vocab.validation) {
          if (const auto* v = obj.if_contains("minContains")) {
            in.min = count_of(doc, pointer, "minContains", *v);
          }
          if (const auto* v = obj.if_contains("maxContains")) {
            in.max = count_of(doc, pointer, "maxContains", *v);
          }
        }
        out.push_back(std::move(in));
      }
      // Objects.
      std::uint32_t table = kNone;
      if (const auto* p = obj.if_contains("properties")) {
        if (!p->is_object()) fail(doc, pointer, "properties must be an object");
        PropertyTable t;
        for (const auto& kv : p->get_object()) {
          t.add(std::string(kv.key()), child_at("properties", kv.key()));
        }
        program_->property_tables.push_back(std::move(t));
        table = static_cast<std::uint32_t>(program_->property_tables.size() - 1);
        InstrSpec in = make(Op::properties, "properties");
        in.aux = table;
        // `required` names that are all properties are checked in the same pass over the keys.
        auto req = std::find_if(out.begin(), out.end(),
                                [](const InstrSpec& i) { return i.op == Op::required; });
        if (req != out.end() &&
            program_->property_tables[table].fold_required(req->extra.strings, req->site)) {
          out.erase(req);
        }
        out.push_back(std::move(in));
      }
      std::vector<std::uint32_t> pattern_regexes;
      if (const auto* p = obj.if_contains("patternProperties")) {
        if (!p->is_object()) fail(doc, pointer, "patternProperties must be an object");
        InstrSpec in = make(Op::pattern_properties, "patternProperties");
        for (const auto& kv : p->get_object()) {
          const auto re = add_regex(doc, pointer + "/patternProperties", kv.key());
          in.extra.patterned.emplace_back(re, child_at("patternProperties", kv.key()));
          pattern_regexes.push_back(re);
        }
        if (!in.extra.patterned.empty()) out.push_back(std::move(in));
      }
      if (obj.contains("additionalProperties")) {
        InstrSpec in = make(Op::additional_properties, "additionalProperties");
        in.node = child("additionalProperties");
        in.aux = table;
        for (const auto re : pattern_regexes)
          in.extra.patterned.emplace_back(re, kNone);
        if (table != kNone && pattern_regexes.empty()) {
          // The common closed object: one pass over the keys serves both keywords.
          auto props = std::find_if(out.begin(), out.end(),
                                    [](const InstrSpec& i) { return i.op == Op::properties; });
          props->op = Op::properties_then_additional;
          props->node = in.node;
          props->site2 = in.site;
        } else {
          out.push_back(std::move(in));
        }
      }
      if (obj.contains("propertyNames")) {
        InstrSpec in = make(Op::property_names, "propertyNames");
        in.node = child("propertyNames");
        out.push_back(std::move(in));
      }
    }
    for (const char* kw :
         {"title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples"}) {
      if (const auto* v = obj.if_contains(kw)) {
        annotations.push_back(Annotation{site(info, doc, pointer, kw), *v});
      }
    }
    if (vocab.unevaluated && d != Dialect::draft7) {
      if (obj.contains("unevaluatedItems")) {
        InstrSpec in = make(Op::unevaluated_items, "unevaluatedItems");
        in.node = child("unevaluatedItems");
        out.push_back(std::move(in));
        collects = true;
      }
      if (obj.contains("unevaluatedProperties")) {
        InstrSpec in = make(Op::unevaluated_properties, "unevaluatedProperties");
        in.node = child("unevaluatedProperties");
        out.push_back(std::move(in));
        collects = true;
      }
    }
  }

  // For flag runs: nodes that only forward to one other node are skipped over.
  void link_aliases() {
    if (program_->uses_dynamic_scope) return;  // passing through a node may enter a resource
    auto& nodes = program_->nodes;
    auto forward = [&](std::uint32_t n) -> std::uint32_t {
      const Node& node = nodes[n];
      if (node.collects_annotations || node.type_mask != 0 || node.instrs.size() != 1) {
        return kNone;
      }
      const Instr& in = node.instrs[0];
      if (in.op == Op::ref) return in.node;
      if (in.op == Op::all_of && program_->data[in.data].nodes.size() == 1) {
        return program_->data[in.data].nodes[0];
      }
      return kNone;
    };
    for (std::uint32_t n = 0; n < nodes.size(); ++n) {
      std::uint32_t target = n;
      for (int hops = 0; hops < 64; ++hops) {
        const std::uint32_t next = forward(target);
        if (next == kNone) break;
        target = next;
        if (target == n) break;  // a cycle: leave it to the depth limit
      }
      if (target != n && forward(target) == kNone) nodes[n].alias = target;
    }
  }

  // $dynamicRef and $recursiveRef may land on any dynamic anchor or recursive root of a
  // resource in the dynamic scope: compile those for every resource that has a node.
  void compile_dynamic_targets() {
    std::size_t seen = 0;
    while (seen != used_resources_.size()) {
      seen = used_resources_.size();
      const std::vector<std::uint32_t> snapshot(used_resources_.begin(), used_resources_.end());
      for (const std::uint32_t r : snapshot) {
        const auto info = resource_infos_[r];
        for (const auto& [name, ptr] : info.dynamic_anchor_pointers) {
          program_->resources[r].dynamic_anchors[name] = compile_node(info.doc, ptr);
        }
        if (program_->resources[r].recursive_anchor && program_->resources[r].root_node == kNone) {
          program_->resources[r].root_node = compile_node(info.doc, info.pointer);
        }
      }
    }
  }

  const CompileOptions& options_;
  const SchemaRegistry& registry_;
  std::shared_ptr<CompiledSchema> program_;
  std::vector<const bj::value*> docs_;
  std::vector<std::string> doc_uris_;
  std::unordered_map<std::string, LocationInfo> infos_;
  std::unordered_map<std::string, std::uint32_t> resources_by_uri_;
  std::vector<ResourceInfo> resource_infos_;
  std::unordered_map<std::string, Target> anchors_;
  std::unordered_map<std::string, std::uint32_t> memo_;
  std::unordered_set<std::uint32_t> used_resources_;
  std::size_t depth_ = 0;
};

void PropertyTable::add(std::string name, std::uint32_t node) {
  if (find(name) != kNone) return;  // JSON objects in schemas have unique keys already
  probes_.push_back(Probe{name.size(), key_hash(name)});
  entries_.emplace_back(std::move(name), node);
  rebuild_slots();
}

void PropertyTable::rebuild_slots() {
  std::size_t size = 4;
  while (size < 2 * entries_.size())
    size *= 2;
  slots_.assign(size, 0);
  mask_ = size - 1;
  for (std::uint32_t e = 0; e < entries_.size(); ++e) {
    std::uint64_t i = probes_[e].hash & mask_;
    while (slots_[i] != 0)
      i = (i + 1) & mask_;
    slots_[i] = e + 1;
  }
  if (!build_direct()) direct_.clear();
}

bool PropertyTable::build_direct() {
  if (entries_.empty() || entries_.size() > 64) return false;
  std::size_t base = 1;
  while (base < entries_.size())
    base *= 2;
  std::uint64_t seed = 0x9E3779B97F4A7C15ull;
  for (std::size_t size = base; size <= base * 8; size *= 2) {
    for (int attempt = 0; attempt < 64; ++attempt) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      const std::uint64_t odd = seed | 1;
      std::vector<std::uint32_t> table(size, 0);
      bool clash = false;
      for (std::uint32_t e = 0; e < entries_.size() && !clash; ++e) {
        auto& slot = table[quick_hash(entries_[e].first, odd) & (size - 1)];
        clash = slot != 0;
        slot = e + 1;
      }
      if (!clash) {
        direct_ = std::move(table);
        seed_ = odd;
        direct_mask_ = size - 1;
        return true;
      }
    }
  }
  return false;
}

std::uint32_t PropertyTable::find(std::string_view name) const {
  if (!direct_.empty()) {
    const std::uint32_t slot = direct_[quick_hash(name, seed_) & direct_mask_];
    if (slot == 0) return kNone;
    const auto& entry = entries_[slot - 1].first;
    return entry.size() == name.size() && entry == name ? slot - 1 : kNone;
  }
  if (slots_.empty()) return kNone;
  const std::uint64_t h = key_hash(name);
  for (std::uint64_t i = h & mask_;; i = (i + 1) & mask_) {
    const std::uint32_t slot = slots_[i];
    if (slot == 0) return kNone;
    const Probe& p = probes_[slot - 1];
    if (p.hash == h && p.size == name.size() && entries_[slot - 1].first == name) {
      return slot - 1;
    }
  }
}

bool PropertyTable::fold_required(const std::vector<std::string>& names, std::uint32_t site) {
  std::vector<std::uint32_t> entries;
  for (const auto& n : names) {
    const auto e = find(n);
    if (e == kNone) return false;
    if (std::find(entries.begin(), entries.end(), e) == entries.end()) entries.push_back(e);
  }
  if (entries.size() > 64 || required_mask_ != 0) return false;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    probes_[entries[i]].required_bit = std::uint64_t{1} << i;
    required_mask_ |= std::uint64_t{1} << i;
  }
  required_site_ = site;
  return true;
}

std::shared_ptr<const CompiledSchema> compile_program(const bj::value& schema,
                                                      const CompileOptions& options) {
  return Compiler(options).run(schema);
}

}  // namespace detail

std::string_view to_string(Dialect d) {
  return dialect_name(d);
}

}  // namespace schemagate::jsonschema
