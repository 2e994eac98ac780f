#include "json/parse.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>

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

// Builds the value bottom-up on an explicit stack of open containers.
class Builder {
 public:
  explicit Builder(const ParseLimits& limits) : limits_(limits) {}

  // Sizes basic_parser enforces itself; ours are checked in the callbacks with better messages.
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);

  std::optional<std::string> failure;  // our own reason, when a handler stops the parse

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }

  bool on_array_begin(bj::error_code&) {
    stack_.push_back(Frame{bj::value(bj::array_kind), {}});
    return true;
  }
  bool on_array_end(std::size_t, bj::error_code& ec) { return close(ec); }
  bool on_object_begin(bj::error_code&) {
    stack_.push_back(Frame{bj::value(bj::object_kind), {}});
    return true;
  }
  bool on_object_end(std::size_t, bj::error_code& ec) { return close(ec); }

  bool on_string_part(bj::string_view s, std::size_t, bj::error_code& ec) {
    return append_text(s, ec);
  }
  bool on_string(bj::string_view s, std::size_t, bj::error_code& ec) {
    if (text_.empty()) {  // delivered whole: no copy through text_
      if (!within_string_limit(s.size(), ec)) return false;
      return emit(bj::value(s), ec);
    }
    if (!append_text(s, ec)) return false;
    bj::value v(text_);
    text_.clear();
    return emit(std::move(v), ec);
  }
  bool on_key_part(bj::string_view s, std::size_t, bj::error_code& ec) {
    return append_text(s, ec);
  }
  bool on_key(bj::string_view s, std::size_t, bj::error_code& ec) {
    Frame& top = stack_.back();
    if (text_.empty()) {
      if (!within_string_limit(s.size(), ec)) return false;
      top.key.assign(s.data(), s.size());
    } else {
      if (!append_text(s, ec)) return false;
      top.key = std::move(text_);
      text_.clear();
    }
    if (limits_.reject_duplicate_keys && top.container.get_object().contains(top.key)) {
      return fail("duplicate key \"" + top.key + "\"", ec);
    }
    return true;
  }

  bool on_number_part(bj::string_view s, bj::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, bj::string_view, bj::error_code& ec) {
    number_.clear();
    return emit(bj::value(i), ec);
  }
  bool on_uint64(std::uint64_t u, bj::string_view, bj::error_code& ec) {
    number_.clear();
    return emit(bj::value(u), ec);
  }
  bool on_double(double, bj::string_view s, bj::error_code& ec) {
    number_.append(s.data(), s.size());
    double d = 0;
    const auto res = std::from_chars(number_.data(), number_.data() + number_.size(), d);
    if (res.ec == std::errc::result_out_of_range) {
      // from_chars reports overflow and underflow alike; strtod tells them apart, and an
      // underflow is the nearest representable value (0 or a subnormal), as in JSON.parse.
      d = std::strtod(number_.c_str(), nullptr);
      if (std::isinf(d)) return fail("number " + number_ + " is too large for a double", ec);
    } else if (res.ec != std::errc{}) {
      return fail("invalid number " + number_, ec);
    }
    number_.clear();
    return emit(bj::value(d), ec);
  }
  bool on_bool(bool b, bj::error_code& ec) { return emit(bj::value(b), ec); }
  bool on_null(bj::error_code& ec) { return emit(bj::value(nullptr), ec); }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }

  bj::value take() { return std::move(result_); }

 private:
  struct Frame {
    bj::value container;
    std::string key;  // pending key while inside an object
  };

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

  bool append_text(bj::string_view s, bj::error_code& ec) {
    if (!within_string_limit(text_.size() + s.size(), ec)) return false;
    text_.append(s.data(), s.size());
    return true;
  }

  bool emit(bj::value v, bj::error_code& ec) {
    if (stack_.empty()) {
      result_ = std::move(v);
      return true;
    }
    Frame& top = stack_.back();
    if (top.container.is_array()) {
      top.container.get_array().push_back(std::move(v));
    } else {
      top.container.get_object().insert_or_assign(top.key, std::move(v));
    }
    (void)ec;
    return true;
  }

  bool close(bj::error_code& ec) {
    bj::value done = std::move(stack_.back().container);
    stack_.pop_back();
    return emit(std::move(done), ec);
  }

  const ParseLimits& limits_;
  std::vector<Frame> stack_;
  std::string text_;
  std::string number_;
  bj::value result_;
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

boost::json::value parse(std::string_view text, const ParseLimits& limits) {
  if (text.size() > limits.max_document_bytes) {
    throw ParseError("document of " + std::to_string(text.size()) +
                         " bytes is larger than the limit of " +
                         std::to_string(limits.max_document_bytes),
                     1, 1, 0);
  }
  bj::parse_options opts;
  opts.max_depth = std::min(limits.max_depth, kMaxParseDepth);
  bj::basic_parser<Builder> parser(opts, limits);
  bj::error_code ec;
  const std::size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
  if (!ec && consumed < text.size()) ec = bj::error::extra_data;
  if (ec) {
    const std::size_t offset = consumed;
    std::size_t line = 0, column = 0;
    position_of(text, offset, line, column);
    std::string reason =
        parser.handler().failure ? *parser.handler().failure : describe(ec, text, offset, limits);
    throw ParseError(std::move(reason), line, column, offset);
  }
  return parser.handler().take();
}

}  // namespace schemagate::json
