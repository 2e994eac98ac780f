#include "json/parse.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>
#include <boost/json/value_stack.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <vector>

namespace schemagate::json {

namespace bj = boost::json;

ParseError::ParseError(std::string reason, std::size_t line, std::size_t column, std::size_t offset)
    : std::runtime_error(reason + " at line " + std::to_string(line) + ", column " +
                         std::to_string(column)),
      reason_(std::move(reason)),
      line_(line),
      column_(column),
      offset_(offset) {}

namespace {

// Builds the value with Boost.JSON's value_stack (each container is made once, at its size, when
// it closes). Keys are kept aside meanwhile so that an object's duplicates are found when it
// closes; a second pass, told the duplicated name, stops at the key itself for the position.
struct Key {
  std::size_t offset, size;  // in key_text
};
struct OpenObject {
  std::size_t first_key;      // index in keys
  bool seen_located = false;  // the second pass has met the duplicated name in this object
};
// The builder's working space, kept by each thread from one parse to the next so that a parse
// allocates nothing of its own once warm.
struct Scratch {
  std::string key_text;             // the keys of the open objects, one after another
  std::vector<Key> keys;            // the open objects' keys, innermost object's last
  std::vector<OpenObject> objects;  // the open objects, innermost last
  std::vector<std::string_view> names;
  std::string number;
  void clear() {
    key_text.clear();
    keys.clear();
    objects.clear();
    number.clear();
  }
};
thread_local Scratch scratch;

class Builder {
 public:
  Builder(const ParseLimits& limits, bj::storage_ptr sp, unsigned char* temp, std::size_t size,
          const std::string* locate_duplicate)
      : limits_(limits), values_(bj::storage_ptr(), temp, size), locate_(locate_duplicate) {
    values_.reset(std::move(sp));
    scratch.clear();
  }

  // Sizes basic_parser enforces itself; ours are checked in the callbacks with better messages.
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);

  std::optional<std::string> failure;    // our own reason, when a handler stops the parse
  std::optional<std::string> duplicate;  // the name, when the failure is a duplicate key

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }

  bool on_array_begin(bj::error_code&) { return true; }
  bool on_array_end(std::size_t n, bj::error_code&) {
    values_.push_array(n);
    return true;
  }
  bool on_object_begin(bj::error_code&) {
    objects_.push_back(OpenObject{keys_.size(), false});
    return true;
  }
  bool on_object_end(std::size_t n, bj::error_code& ec) {
    const std::size_t first = objects_.back().first_key;
    objects_.pop_back();
    if (limits_.reject_duplicate_keys && !locate_ && n > 1) {
      if (const auto* name = repeated_key(first)) {
        duplicate = std::string(*name);
        return fail("duplicate key \"" + *duplicate + "\"", ec);
      }
    }
    key_text_.resize(first < keys_.size() ? keys_[first].offset : key_text_.size());
    keys_.resize(first);
    values_.push_object(n);
    return true;
  }

  bool on_string_part(bj::string_view s, std::size_t size, bj::error_code& ec) {
    if (!within_string_limit(size, ec)) return false;
    values_.push_chars(s);
    return true;
  }
  bool on_string(bj::string_view s, std::size_t size, bj::error_code& ec) {
    if (!within_string_limit(size, ec)) return false;
    values_.push_string(s);
    return true;
  }
  bool on_key_part(bj::string_view s, std::size_t size, bj::error_code& ec) {
    if (!within_string_limit(size, ec)) return false;
    values_.push_chars(s);
    if (!limits_.reject_duplicate_keys) return true;  // nothing to check: keys need no keeping
    key_text_.append(s.data(), s.size());
    partial_key_ += s.size();
    return true;
  }
  bool on_key(bj::string_view s, std::size_t size, bj::error_code& ec) {
    if (!within_string_limit(size, ec)) return false;
    values_.push_key(s);
    if (!limits_.reject_duplicate_keys) return true;
    const std::size_t offset = key_text_.size() - partial_key_;
    key_text_.append(s.data(), s.size());
    partial_key_ = 0;
    keys_.push_back(Key{offset, size});
    if (locate_ && key_at(keys_.size() - 1) == *locate_) {
      OpenObject& o = objects_.back();
      if (o.seen_located) {
        duplicate = *locate_;
        return fail("duplicate key \"" + *locate_ + "\"", ec);
      }
      o.seen_located = true;
    }
    return true;
  }

  bool on_number_part(bj::string_view s, bj::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, bj::string_view, bj::error_code&) {
    number_.clear();
    values_.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, bj::string_view, bj::error_code&) {
    number_.clear();
    values_.push_uint64(u);
    return true;
  }
  bool on_double(double, bj::string_view s, bj::error_code& ec) {
    std::string_view text(s.data(), s.size());
    if (!number_.empty()) {
      number_.append(s.data(), s.size());
      text = number_;
    }
    double d = 0;
    const auto res = std::from_chars(text.data(), text.data() + text.size(), d);
    if (res.ec == std::errc::result_out_of_range) {
      // from_chars reports overflow and underflow alike; strtod tells them apart, and an
      // underflow is the nearest representable value (0 or a subnormal), as in JSON.parse.
      const std::string copy(text);
      d = std::strtod(copy.c_str(), nullptr);
      if (std::isinf(d)) return fail("number " + copy + " is too large for a double", ec);
    } else if (res.ec != std::errc{}) {
      return fail("invalid number " + std::string(text), ec);
    }
    number_.clear();
    values_.push_double(d);
    return true;
  }
  bool on_bool(bool b, bj::error_code&) {
    values_.push_bool(b);
    return true;
  }
  bool on_null(bj::error_code&) {
    values_.push_null();
    return true;
  }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }

  bj::value take() { return values_.release(); }

 private:
  std::string_view key_at(std::size_t i) const {
    return std::string_view(key_text_).substr(keys_[i].offset, keys_[i].size);
  }

  // A name given twice among the keys from `first` on, or null. Small objects are compared
  // pairwise (cheaper than hashing), larger ones sorted.
  const std::string_view* repeated_key(std::size_t first) {
    const std::size_t n = keys_.size() - first;
    names_.clear();
    for (std::size_t i = first; i < keys_.size(); ++i)
      names_.push_back(key_at(i));
    if (n <= 16) {
      for (std::size_t i = 1; i < n; ++i) {
        for (std::size_t j = 0; j < i; ++j) {
          if (names_[i] == names_[j]) return &names_[i];
        }
      }
      return nullptr;
    }
    std::sort(names_.begin(), names_.end());
    for (std::size_t i = 1; i < n; ++i) {
      if (names_[i] == names_[i - 1]) return &names_[i];
    }
    return nullptr;
  }

  bool fail(std::string reason, bj::error_code& ec) {
    failure = std::move(reason);
    ec = bj::error::exception;
    return false;
  }

  bool within_string_limit(std::size_t size, bj::error_code& ec) {
    if (size <= limits_.max_string_bytes) return true;
    return fail(
        "string longer than the limit of " + std::to_string(limits_.max_string_bytes) + " bytes",
        ec);
  }

  const ParseLimits& limits_;
  bj::value_stack values_;
  const std::string* locate_;    // the second pass: the duplicated name to stop at
  std::size_t partial_key_ = 0;  // bytes of the key being delivered in parts
  std::string& key_text_ = scratch.key_text;
  std::vector<Key>& keys_ = scratch.keys;
  std::vector<OpenObject>& objects_ = scratch.objects;
  std::vector<std::string_view>& names_ = scratch.names;
  std::string& number_ = scratch.number;
};

std::string describe(const bj::error_code& ec, std::string_view text, std::size_t offset,
                     const ParseLimits& limits) {
  const auto e = static_cast<bj::error>(ec.value());
  auto found = [&]() -> std::string {
    if (offset >= text.size()) return "end of input";
    const unsigned char c = static_cast<unsigned char>(text[offset]);
    if (c < 0x20) {
      static const char* hex = "0123456789abcdef";
      return std::string("control character U+00") + hex[c >> 4] + hex[c & 15];
    }
    if (c >= 0x80) return "a non-ASCII byte";
    return std::string("'") + static_cast<char>(c) + "'";
  };
  if (ec.category() != bj::error_code(bj::error::syntax).category()) return ec.message();
  switch (e) {
    case bj::error::syntax:
      if (offset >= 6 && text[offset - 6] == '\\' && (text[offset - 5] | 0x20) == 'u' &&
          (text[offset - 4] | 0x20) == 'd' &&
          std::string_view("89abAB").find(text[offset - 3]) != std::string_view::npos) {
        return "unpaired UTF-16 surrogate \\" + std::string(text.substr(offset - 5, 5)) +
               " (a high surrogate must be followed by a \\u escape of a low one)";
      }
      if (offset < text.size() && static_cast<unsigned char>(text[offset]) >= 0x80) {
        return "invalid UTF-8 or unexpected non-ASCII byte";
      }
      if (offset < text.size() && std::isalpha(static_cast<unsigned char>(text[offset]))) {
        std::size_t end = offset;
        while (end < text.size() && end - offset < 32 &&
               std::isalnum(static_cast<unsigned char>(text[end]))) {
          ++end;
        }
        return "invalid literal '" + std::string(text.substr(offset, end - offset)) +
               "' (expected true, false, null, a number, a string, an array or an object)";
      }
      return "unexpected " + found();
    case bj::error::extra_data:
      return "unexpected " + found() + " after the JSON value";
    case bj::error::incomplete:
      return "unexpected end of input";
    case bj::error::exponent_overflow:
      return "exponent too large";
    case bj::error::too_deep:
      return "nesting deeper than the limit of " +
             std::to_string(std::min(limits.max_depth, kMaxParseDepth));
    case bj::error::illegal_leading_surrogate:
    case bj::error::illegal_trailing_surrogate:
      return "unpaired UTF-16 surrogate in \\u escape";
    case bj::error::expected_hex_digit:
      return "expected a hex digit in \\u escape, found " + found();
    case bj::error::expected_utf16_escape:
      return "expected a \\u escape for the low surrogate";
    default:
      return ec.message();
  }
}

void position_of(std::string_view text, std::size_t offset, std::size_t& line,
                 std::size_t& column) {
  line = 1;
  column = 1;
  const std::size_t end = offset < text.size() ? offset : text.size();
  for (std::size_t i = 0; i < end; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      column = 1;
    } else if ((c & 0xC0) != 0x80) {  // count code points, not continuation bytes
      ++column;
    }
  }
}

}  // namespace

boost::json::value parse(std::string_view text, const ParseLimits& limits,
                         boost::json::storage_ptr storage) {
  if (text.size() > limits.max_document_bytes) {
    throw ParseError("document of " + std::to_string(text.size()) +
                         " bytes is larger than the limit of " +
                         std::to_string(limits.max_document_bytes),
                     1, 1, 0);
  }
  bj::parse_options opts;
  opts.max_depth = std::min(limits.max_depth, kMaxParseDepth);
  // The value stack's scratch space: enough for most documents without touching the heap.
  unsigned char temp[4096];
  struct Outcome {
    std::optional<bj::value> value;
    std::optional<ParseError> error;
    std::optional<std::string> duplicate;
  };
  auto run = [&](const std::string* locate) {
    Outcome out;
    bj::basic_parser<Builder> parser(opts, limits, storage, temp, sizeof temp, locate);
    bj::error_code ec;
    const std::size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
    if (!ec && consumed < text.size()) ec = bj::error::extra_data;
    auto& built = parser.handler();
    if (!ec) {
      out.value.emplace(built.take());  // emplaced: a move keeps the storage
      return out;
    }
    std::size_t line = 0, column = 0;
    position_of(text, consumed, line, column);
    out.error.emplace(built.failure ? *built.failure : describe(ec, text, consumed, limits), line,
                      column, consumed);
    out.duplicate = built.duplicate;
    return out;
  };
  Outcome first = run(nullptr);
  if (first.value) return std::move(*first.value);
  if (first.duplicate) {
    // Found when its object closed: a second pass stops at the key itself, for its position.
    Outcome second = run(&*first.duplicate);
    if (second.error) throw *second.error;
  }
  throw *first.error;
}

Arena::~Arena() = default;

void Arena::rewind(std::size_t keep_bytes) {
  std::size_t kept = 0, n = 0;
  while (n < blocks_.size() && kept + blocks_[n].size <= keep_bytes)
    kept += blocks_[n++].size;
  blocks_.resize(std::max<std::size_t>(n, std::min<std::size_t>(blocks_.size(), 1)));
  current_ = 0;
  used_ = 0;
}

void* Arena::do_allocate(std::size_t bytes, std::size_t align) {
  for (;;) {
    if (current_ < blocks_.size()) {
      Block& b = blocks_[current_];
      const std::size_t at = (used_ + align - 1) & ~(align - 1);
      if (at + bytes <= b.size) {
        used_ = at + bytes;
        return b.bytes.get() + at;
      }
      if (current_ + 1 < blocks_.size()) {
        ++current_;
        used_ = 0;
        continue;
      }
    }
    // A new block, twice the last (at least 16 KiB), large enough for this allocation.
    std::size_t size = blocks_.empty() ? (std::size_t{16} << 10) : blocks_.back().size * 2;
    size = std::max(size, bytes + align);
    blocks_.push_back(Block{std::make_unique<unsigned char[]>(size), size});
    current_ = blocks_.size() - 1;
    used_ = 0;
  }
}

const boost::json::value& ScratchDocument::parse(std::string_view text, const ParseLimits& limits) {
  document_.reset();
  arena_.rewind();
  // Emplaced: a move keeps the arena as the value's storage (an assignment would copy).
  document_.emplace(json::parse(text, limits, &arena_));
  return *document_;
}

}  // namespace schemagate::json
