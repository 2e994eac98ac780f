#pragma once

#include "util/json_text.hpp"

#include <boost/json/value.hpp>

#include <stdexcept>
#include <string>

namespace schemagate::json {

// NaN or Infinity, which JSON cannot carry (thrown by the writer both forms share).
using CanonicalizationError = util::NonFiniteNumber;

// RFC 8785 JSON Canonicalization Scheme: members sorted by their UTF-16 code units, no
// whitespace, strings escaped as ECMAScript's JSON.stringify does, numbers as format_number.
std::string canonicalize(const boost::json::value& v);
void canonicalize_to(std::string& out, const boost::json::value& v);

// ECMAScript Number.prototype.toString for a finite double (shortest round-trip digits, fixed
// notation for 1e-7 < |x| < 1e21, exponent notation otherwise). Throws CanonicalizationError on
// NaN or infinity, which JSON cannot carry.
std::string format_number(double x);
void format_number_to(std::string& out, double x);

}  // namespace schemagate::json
