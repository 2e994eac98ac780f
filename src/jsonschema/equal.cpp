#include "jsonschema/program.hpp"
#include "util/text.hpp"

namespace schemagate::jsonschema::detail {

namespace bj = boost::json;

namespace {
bool is_number(const bj::value& v) {
  return v.is_int64() || v.is_uint64() || v.is_double();
}

bool numbers_equal(const bj::value& a, const bj::value& b) {
  if (a.is_double() || b.is_double()) return a.to_number<double>() == b.to_number<double>();
  if (a.is_int64() && b.is_int64()) return a.get_int64() == b.get_int64();
  if (a.is_uint64() && b.is_uint64()) return a.get_uint64() == b.get_uint64();
  const auto& s = a.is_int64() ? a : b;  // one signed, one unsigned
  const auto& u = a.is_int64() ? b : a;
  return s.get_int64() >= 0 && static_cast<std::uint64_t>(s.get_int64()) == u.get_uint64();
}
}  // namespace

// JSON Schema equality: numbers by value (1 == 1.0), objects regardless of member order.
bool json_equal(const bj::value& a, const bj::value& b) {
  if (is_number(a) && is_number(b)) return numbers_equal(a, b);
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case bj::kind::null:
      return true;
    case bj::kind::bool_:
      return a.get_bool() == b.get_bool();
    case bj::kind::string:
      return a.get_string() == b.get_string();
    case bj::kind::array: {
      const auto& x = a.get_array();
      const auto& y = b.get_array();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!json_equal(x[i], y[i])) return false;
      }
      return true;
    }
    case bj::kind::object: {
      const auto& x = a.get_object();
      const auto& y = b.get_object();
      if (x.size() != y.size()) return false;
      for (const auto& kv : x) {
        const auto* other = y.if_contains(kv.key());
        if (!other || !json_equal(kv.value(), *other)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

std::size_t utf8_length(std::string_view s) {
  return util::char_count(s);
}

}  // namespace schemagate::jsonschema::detail
