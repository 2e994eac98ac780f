#include "json/jcs.hpp"

#include "util/json_text.hpp"

#include <cmath>

namespace schemagate::json {

namespace bj = boost::json;

void format_number_to(std::string& out, double x) {
  if (!std::isfinite(x)) throw CanonicalizationError("NaN and Infinity have no JSON form");
  util::append_json_number(out, x);
}

std::string format_number(double x) {
  std::string out;
  format_number_to(out, x);
  return out;
}

void canonicalize_to(std::string& out, const bj::value& v) {
  util::append_json(out, v, util::JsonForm::canonical);
}

std::string canonicalize(const bj::value& v) {
  std::string out;
  canonicalize_to(out, v);
  return out;
}

}  // namespace schemagate::json
