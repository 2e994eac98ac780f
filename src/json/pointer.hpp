#pragma once

#include <boost/json/value.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace schemagate::json {

class PointerError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// RFC 6901 JSON Pointer, held as its unescaped reference tokens.
class Pointer {
 public:
  Pointer() = default;
  explicit Pointer(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {}

  // Parses the string form ("" or "/a/b~1c"). Throws PointerError naming the bad character
  // position for a missing leading '/' or a '~' not followed by '0' or '1'.
  static Pointer parse(std::string_view text);

  // Parses the URI fragment form of RFC 6901 §6 ("#/a%20b"), percent-decoding first.
  static Pointer parse_fragment(std::string_view fragment);

  const std::vector<std::string>& tokens() const { return tokens_; }
  bool empty() const { return tokens_.empty(); }
  std::string to_string() const;

  Pointer child(std::string_view token) const;
  Pointer child(std::size_t index) const;
  bool operator==(const Pointer&) const = default;

 private:
  std::vector<std::string> tokens_;
};

// "~" -> "~0" and "/" -> "~1", in that order of precedence.
std::string escape_token(std::string_view token);

// The value the pointer refers to, or nullptr when it does not exist. An array token must be
// "0" or a decimal without leading zeros; "-" (past the end) never resolves.
const boost::json::value* resolve(const boost::json::value& root, const Pointer& ptr);
boost::json::value* resolve(boost::json::value& root, const Pointer& ptr);

}  // namespace schemagate::json
