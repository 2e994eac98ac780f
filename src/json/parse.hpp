#pragma once

#include <boost/container/pmr/memory_resource.hpp>
#include <boost/json/memory_resource.hpp>
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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
// Every allocation of the result comes from `storage` (an arena such as
// boost::json::monotonic_resource makes a parse that is thrown away soon much cheaper).
boost::json::value parse(std::string_view text, const ParseLimits& limits = {},
                         boost::json::storage_ptr storage = {});

// Memory handed out by bumping a pointer, taken back all at once by rewind(), which keeps the
// blocks for the next round (Boost.JSON's monotonic_resource frees them on release() and grows
// its next block each time, without bound).
class Arena final : public boost::container::pmr::memory_resource {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() override;
  // Every allocation is forgotten; blocks beyond `keep_bytes` in all are returned to the heap.
  void rewind(std::size_t keep_bytes = std::size_t{4} << 20);

 private:
  void* do_allocate(std::size_t bytes, std::size_t align) override;
  void do_deallocate(void*, std::size_t, std::size_t) override {}
  bool do_is_equal(const boost::container::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  struct Block {
    std::unique_ptr<unsigned char[]> bytes;
    std::size_t size;
  };
  std::vector<Block> blocks_;
  std::size_t current_ = 0;  // the block being filled
  std::size_t used_ = 0;     // bytes used in it
};

}  // namespace schemagate::json

// Values in an Arena are dropped without walking them: its deallocate does nothing.
template <>
struct boost::json::is_deallocate_trivial<schemagate::json::Arena> {
  static constexpr bool value = true;
};

namespace schemagate::json {

// One document at a time, parsed into an arena that each parse rewinds and reuses: for values
// that are read once and dropped (an instance to validate, a request body), parsing then costs
// no allocation once the arena has grown to the largest document.
class ScratchDocument {
 public:
  ScratchDocument() = default;
  ScratchDocument(const ScratchDocument&) = delete;
  ScratchDocument& operator=(const ScratchDocument&) = delete;

  // The previous document, and every reference into it, is gone once this is called.
  const boost::json::value& parse(std::string_view text, const ParseLimits& limits = {});

 private:
  Arena arena_;
  std::optional<boost::json::value> document_;
};

}  // namespace schemagate::json
