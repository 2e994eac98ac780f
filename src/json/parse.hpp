#pragma once

#include <boost/json/value.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace schemagate::json {

// The deepest nesting parse() will ever accept, whatever ParseLimits says: the underlying parser
// recurses once per level, and this keeps it well inside an 8 MiB thread stack (even under
// AddressSanitizer, whose frames are several times larger).
inline constexpr std::size_t kMaxParseDepth = 4096;

// Every limit is explicit so that a hostile document costs a bounded amount of memory and time.
struct ParseLimits {
  std::size_t max_depth = 64;                 // nesting of arrays and objects; <= kMaxParseDepth
  std::size_t max_string_bytes = 1 << 20;     // one string or key, after unescaping
  std::size_t max_document_bytes = 16 << 20;  // the whole text
  bool reject_duplicate_keys = true;          // I-JSON (RFC 7493) forbids them
};

// A parse failure that says what is wrong and where, as a person reading the text would count:
// 1-based line and column (columns count Unicode code points), plus the byte offset.
class ParseError : public std::runtime_error {
 public:
  ParseError(std::string reason, std::size_t line, std::size_t column, std::size_t offset);
  const std::string& reason() const { return reason_; }
  std::size_t line() const { return line_; }
  std::size_t column() const { return column_; }
  std::size_t offset() const { return offset_; }

 private:
  std::string reason_;
  std::size_t line_, column_, offset_;
};

// Strict RFC 8259 parsing into boost::json::value. Integers that fit stay int64/uint64; every
// other number is the correctly rounded IEEE double of its text (Boost.JSON 1.81's own double
// conversion can be off by one ulp, which would break canonical forms and signatures).
boost::json::value parse(std::string_view text, const ParseLimits& limits = {});

}  // namespace schemagate::json
