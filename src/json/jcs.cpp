#include "json/jcs.hpp"

#include "util/json_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <vector>

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

namespace {

// UTF-8 to UTF-16 code units, for ordering keys as RFC 8785 §3.2.3 requires. Input strings
// come from a validating parser, so the UTF-8 is well formed.
std::u16string to_utf16(std::string_view s) {
  std::u16string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    char32_t cp;
    std::size_t len;
    if (c < 0x80) {
      cp = c;
      len = 1;
    } else if ((c >> 5) == 0x6) {
      cp = c & 0x1F;
      len = 2;
    } else if ((c >> 4) == 0xE) {
      cp = c & 0x0F;
      len = 3;
    } else {
      cp = c & 0x07;
      len = 4;
    }
    for (std::size_t j = 1; j < len && i + j < s.size(); ++j) {
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + j]) & 0x3F);
    }
    i += len;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out += static_cast<char16_t>(0xD800 + (cp >> 10));
      out += static_cast<char16_t>(0xDC00 + (cp & 0x3FF));
    } else {
      out += static_cast<char16_t>(cp);
    }
  }
  return out;
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c & 0x80) == 0; });
}

void write_object(std::string& out, const bj::object& obj) {
  struct Entry {
    const bj::key_value_pair* kv;
    std::u16string utf16;  // filled only when some key is not ASCII
  };
  std::vector<Entry> entries;
  entries.reserve(obj.size());
  bool ascii = true;
  for (const auto& kv : obj) {
    entries.push_back({&kv, {}});
    ascii = ascii && is_ascii(kv.key());
  }
  if (ascii) {  // for ASCII, byte order is UTF-16 order
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.kv->key() < b.kv->key(); });
  } else {
    for (auto& e : entries)
      e.utf16 = to_utf16(e.kv->key());
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.utf16 < b.utf16; });
  }
  out += '{';
  bool first = true;
  for (const auto& e : entries) {
    if (!first) out += ',';
    first = false;
    util::append_json_string(out, e.kv->key());
    out += ':';
    canonicalize_to(out, e.kv->value());
  }
  out += '}';
}

}  // namespace

void canonicalize_to(std::string& out, const bj::value& v) {
  switch (v.kind()) {
    case bj::kind::null:
      out += "null";
      break;
    case bj::kind::bool_:
      out += v.get_bool() ? "true" : "false";
      break;
    case bj::kind::int64:
      format_number_to(out, static_cast<double>(v.get_int64()));
      break;
    case bj::kind::uint64:
      format_number_to(out, static_cast<double>(v.get_uint64()));
      break;
    case bj::kind::double_:
      format_number_to(out, v.get_double());
      break;
    case bj::kind::string:
      util::append_json_string(out, v.get_string());
      break;
    case bj::kind::array: {
      out += '[';
      bool first = true;
      for (const auto& el : v.get_array()) {
        if (!first) out += ',';
        first = false;
        canonicalize_to(out, el);
      }
      out += ']';
      break;
    }
    case bj::kind::object:
      write_object(out, v.get_object());
      break;
  }
}

std::string canonicalize(const bj::value& v) {
  std::string out;
  canonicalize_to(out, v);
  return out;
}

}  // namespace schemagate::json
