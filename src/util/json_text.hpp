#pragma once

#include <boost/json/value.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

// JSON output that matches ECMAScript's JSON.stringify byte for byte. One writer serves RFC 8785
// canonicalization (json/jcs) and every response body (http).
namespace schemagate::util {

class NonFiniteNumber : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class JsonForm {
  // JSON.stringify of the value: members in their order, integers exact, NaN and infinities as
  // null.
  as_is,
  // RFC 8785: members ordered by their UTF-16 code units, every number as an IEEE double, NaN
  // and infinities refused (NonFiniteNumber).
  canonical,
};
void append_json(std::string& out, const boost::json::value& v, JsonForm form);
// JSON.stringify of the value (JsonForm::as_is): what clients read, in bodies, events and CLI
// output. Boost's serializer writes 0.86 as "8.6E-1".
std::string json_text(const boost::json::value& v);

// Number.prototype.toString for a finite double: the shortest digits that round-trip, fixed
// notation for 1e-7 <= |x| < 1e21, exponent notation otherwise ("0.029", "1e+21", "5e-7").
// The caller handles NaN and infinities, which JSON cannot carry.
void append_json_number(std::string& out, double x);

// A quoted string: '"' and '\\' escaped, control characters as \b \f \n \r \t or \u00XX,
// everything else (UTF-8 included) as it is.
void append_json_string(std::string& out, std::string_view s);

}  // namespace schemagate::util
