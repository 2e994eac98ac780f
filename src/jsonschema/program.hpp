#pragma once

// The compiled form of a schema: a graph of nodes, each a flat list of instructions. What only
// error messages need (keyword paths, absolute locations) lives in `sites`, outside the
// instructions the hot loop reads.

#include "jsonschema/schema.hpp"

#include <re2/re2.h>
#include <boost/json/value.hpp>

#include <bitset>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace schemagate::jsonschema::detail {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

enum class Op : std::uint8_t {
  fail,  // the `false` schema
  type,
  const_value,
  enum_values,
  multiple_of,
  maximum,
  exclusive_maximum,
  minimum,
  exclusive_minimum,
  max_length,
  min_length,
  pattern,
  format,
  max_items,
  min_items,
  unique_items,
  max_properties,
  min_properties,
  required,
  dependent_required,
  ref,
  dynamic_ref,
  recursive_ref,
  all_of,
  any_of,
  one_of,
  not_,
  if_then_else,
  dependent_schemas,
  prefix_items,
  items,  // from index `aux` on (aux = number of prefix items)
  contains,
  properties,
  properties_then_additional,  // properties + additionalProperties in one pass over the keys
  pattern_properties,
  additional_properties,
  property_names,
  unevaluated_items,
  unevaluated_properties,
};

// Type bits for Op::type.
enum TypeBit : std::uint32_t {
  kNull = 1,
  kBoolean = 2,
  kObject = 4,
  kArray = 8,
  kNumber = 16,
  kString = 32,
  kInteger = 64,
};

enum class Format : std::uint8_t {
  unknown,
  date_time,
  date,
  time,
  duration,
  email,
  idn_email,
  hostname,
  idn_hostname,
  ipv4,
  ipv6,
  uri,
  uri_reference,
  iri,
  iri_reference,
  uuid,
  json_pointer,
  relative_json_pointer,
  regex,
  uri_template,
};

// What an instruction needs beyond its scalars, kept apart so that the instructions the hot
// loop walks stay small.
struct InstrData {
  std::vector<std::uint32_t> nodes;  // allOf/anyOf/oneOf/prefixItems; if/then/else
  std::vector<std::pair<std::string, std::uint32_t>> named;        // dependentSchemas
  std::vector<std::pair<std::uint32_t, std::uint32_t>> patterned;  // (regex, node)
  std::vector<std::string> strings;                                // required
  std::vector<std::pair<std::string, std::vector<std::string>>> dependencies;
  boost::json::value value;  // const, enum (an array)
};

struct Instr {
  Op op;
  std::uint32_t site = 0;      // index into CompiledSchema::sites
  std::uint32_t node = kNone;  // the single subschema, when there is one
  std::uint32_t aux = 0;       // type mask, format, regex index, table index, prefix count
  std::uint32_t data = kNone;  // index into CompiledSchema::data
  std::uint32_t site2 = 0;     // a second keyword's site (additionalProperties, when fused)
  double number = 0;           // numeric limit
  std::uint64_t min = 0;       // count limits (minContains)
  std::uint64_t max = std::numeric_limits<std::uint64_t>::max();  // (maxContains)
};

// An instruction as the compiler assembles it.
struct InstrSpec : Instr {
  InstrData extra;
};

// The names of a `properties` keyword, for lookups by instance key: a short list is scanned
// (cheaper than hashing a short key), a long one goes through a hash map.
// A fast hash for short keys (8 bytes at a time).
inline std::uint64_t key_hash(std::string_view s) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  std::uint64_t tail = 0;
  if (s.size() >= 8) {
    std::memcpy(&tail, s.data() + s.size() - 8, 8);  // the last 8 bytes, overlapping is fine
  } else {
    for (; i < s.size(); ++i)
      tail = (tail << 8) | static_cast<unsigned char>(s[i]);
  }
  h = (h ^ tail) * 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 29);
}

class PropertyTable {
 public:
  void add(std::string name, std::uint32_t node);
  // The index of the entry with this name, or kNone.
  std::uint32_t find(std::string_view name) const;
  std::uint32_t node_at(std::uint32_t entry) const { return entries_[entry].second; }
  const std::string& name_at(std::uint32_t entry) const { return entries_[entry].first; }
  std::size_t size() const { return entries_.size(); }

  // `required` folded into the same pass: each required name gets a bit. False when a name is
  // not among the properties or there are more than 64.
  bool fold_required(const std::vector<std::string>& names, std::uint32_t site);
  std::uint64_t required_bit(std::uint32_t entry) const { return probes_[entry].required_bit; }
  std::uint64_t required_mask() const { return required_mask_; }
  std::uint32_t required_site() const { return required_site_; }

 private:
  // Length and hash of each name: a key is hashed once, and only an equal hash is compared.
  struct Probe {
    std::size_t size;
    std::uint64_t hash;
    std::uint64_t required_bit = 0;
  };

  void rebuild_slots();
  bool build_direct();
  // A few bytes and the length, mixed by `seed`: enough to tell a small table's names apart.
  static std::uint64_t quick_hash(std::string_view s, std::uint64_t seed) {
    if (s.empty()) return 0;
    const auto b = [&](std::size_t i) {
      return static_cast<std::uint64_t>(static_cast<unsigned char>(s[i]));
    };
    const std::uint64_t x = s.size() | (b(0) << 8) | (b(s.size() - 1) << 16) |
                            (b(s.size() / 2) << 24) | (b(s.size() / 4) << 32);
    return (x * seed) >> 40;
  }

  std::vector<std::pair<std::string, std::uint32_t>> entries_;
  // Direct mode: quick_hash(name, seed_) & direct_mask_ is collision-free over the names, so a
  // lookup is one probe and one comparison.
  std::vector<std::uint32_t> direct_;  // entry + 1, 0 = empty
  std::uint64_t seed_ = 0, direct_mask_ = 0;
  std::vector<Probe> probes_;
  std::vector<std::uint32_t> slots_;  // open addressing: entry + 1, 0 = empty; size 2^k
  std::uint64_t mask_ = 0;
  std::uint64_t required_mask_ = 0;
  std::uint32_t required_site_ = 0;
};

// Linear-time matcher for the patterns most schemas use: optional anchors around a sequence of
// single-character classes with quantifiers (dates, codes, identifiers). No groups, no
// alternation. Subjects with non-ASCII bytes are left to RE2.
class FastPattern {
 public:
  static std::optional<FastPattern> compile(std::string_view ecma);
  // nullopt: the subject is not ASCII.
  std::optional<bool> search(std::string_view s) const;

 private:
  struct Atom {
    std::bitset<128> set;
    std::uint32_t min = 1, max = 1;
  };
  bool greedy_match(std::string_view s) const;
  bool dp_search(std::string_view s) const;

  std::vector<Atom> atoms_;
  bool anchored_start_ = false, anchored_end_ = false;
  bool greedy_ok_ = false;  // anchored at the start and no atom can steal from the next
};

struct Annotation {
  std::uint32_t site;
  boost::json::value value;
};

struct Node {
  // The node's `type` keyword, checked before (and without dispatching) its instructions; 0 when
  // the node has none.
  std::uint32_t type_mask = 0;
  std::uint32_t type_site = 0;
  // A flag run can decide a leaf ({}, {"type": ...}, annotations) from type_mask alone.
  bool leaf = false;
  // Flag runs jump straight here: this node only forwards to another ({"$ref": ...} alone, or
  // an allOf of one schema), and no dynamic scope depends on passing through it.
  std::uint32_t alias = kNone;
  std::vector<Instr> instrs;
  std::vector<Annotation> annotations;  // read only by collecting runs
  std::uint32_t resource = 0;
  bool collects_annotations = false;  // has unevaluated* and so needs its children's annotations
};

struct Resource {
  std::string uri;  // absolute, without fragment
  Dialect dialect = Dialect::draft2020_12;
  std::uint32_t root_node = kNone;
  bool recursive_anchor = false;                                   // 2019-09
  std::unordered_map<std::string, std::uint32_t> dynamic_anchors;  // 2020-12: name -> node
};

struct DynamicRef {
  std::uint32_t target = kNone;  // the statically resolved node
  std::string anchor;            // the fragment name
  bool dynamic = false;          // the static target itself declares that $dynamicAnchor
};

struct Site {
  std::string keyword;   // relative to the node, escaped: "type", "properties"
  std::string absolute;  // absoluteKeywordLocation
};

struct CompiledSchema {
  std::vector<Node> nodes;
  std::vector<Resource> resources;
  std::vector<Site> sites;
  std::vector<std::unique_ptr<RE2>> regexes;
  std::vector<std::optional<FastPattern>> fast_patterns;  // parallel to regexes
  std::vector<std::string> regex_sources;
  std::vector<DynamicRef> dynamic_refs;
  std::vector<PropertyTable> property_tables;
  std::vector<InstrData> data;
  bool uses_dynamic_scope = false;  // $dynamicRef or $recursiveRef present
  std::uint32_t root = 0;
  Dialect dialect = Dialect::draft2020_12;
  bool assert_format = false;
  std::size_t max_depth = 512;
};

// Helpers shared by the compiler and the evaluator.
bool json_equal(const boost::json::value& a, const boost::json::value& b);
std::size_t utf8_length(std::string_view s);
bool check_format(Format f, const boost::json::value& v);
Format format_from_name(std::string_view name);
std::string_view format_name(Format f);

// Valid ECMA-262 that RE2 cannot run (lookaround, backreferences).
class UnsupportedRegex : public SchemaError {
 public:
  using SchemaError::SchemaError;
};

// ECMA-262 pattern -> RE2 syntax. Throws UnsupportedRegex for what RE2 cannot run and
// SchemaError for what is not ECMA-262 at all.
std::string translate_ecma_regex(std::string_view pattern);

// RFC 3986 reference resolution; the result has no empty trailing '#'.
std::string resolve_uri(std::string_view base, std::string_view reference);
// Splits "uri#fragment" into the two parts (fragment without '#').
std::pair<std::string, std::string> split_fragment(std::string_view uri);

}  // namespace schemagate::jsonschema::detail
