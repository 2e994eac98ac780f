#pragma once

#include <string>
#include <string_view>

// The two lexical pieces of JSON output that must match ECMAScript's JSON.stringify byte for
// byte: RFC 8785 canonicalization (json/jcs) and every response body (http) write through them.
namespace schemagate::util {

// Number.prototype.toString for a finite double: the shortest digits that round-trip, fixed
// notation for 1e-7 <= |x| < 1e21, exponent notation otherwise ("0.029", "1e+21", "5e-7").
// The caller handles NaN and infinities, which JSON cannot carry.
void append_json_number(std::string& out, double x);

// A quoted string: '"' and '\\' escaped, control characters as \b \f \n \r \t or \u00XX,
// everything else (UTF-8 included) as it is.
void append_json_string(std::string& out, std::string_view s);

}  // namespace schemagate::util
