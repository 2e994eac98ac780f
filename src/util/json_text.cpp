#include "util/json_text.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace schemagate::util {

void append_json_number(std::string& out, double x) {
  if (x == 0) {  // covers -0, which ECMAScript prints as "0"
    out += '0';
    return;
  }
  if (x < 0) {
    out += '-';
    x = -x;
  }
  // Shortest round-trip digits, closest to x among the shortest: the same digit string
  // ECMAScript's Number::toString selects.
  char buf[40];
  const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  const auto e_pos = sci.find('e');
  std::string digits;
  digits.reserve(17);
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits += c;
  }
  int exp10 = 0;
  std::from_chars(sci.data() + e_pos + (sci[e_pos + 1] == '+' ? 2 : 1), sci.data() + sci.size(),
                  exp10);
  const int k = static_cast<int>(digits.size());
  const int n = exp10 + 1;  // x = 0.d1d2...dk * 10^n

  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, 0, static_cast<std::size_t>(n));
    out += '.';
    out.append(digits, static_cast<std::size_t>(n), std::string::npos);
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += digits;
  } else {
    out += digits[0];
    if (k > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    out += 'e';
    const int e = n - 1;
    out += e < 0 ? '-' : '+';
    out += std::to_string(std::abs(e));
  }
}

void append_json_string(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out += '"';
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

namespace {

namespace bj = boost::json;

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

void append_canonical_object(std::string& out, const bj::object& obj) {
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
    append_json_string(out, e.kv->key());
    out += ':';
    append_json(out, e.kv->value(), JsonForm::canonical);
  }
  out += '}';
}

void append_number(std::string& out, double x, JsonForm form) {
  if (std::isfinite(x)) {
    append_json_number(out, x);
  } else if (form == JsonForm::canonical) {
    throw NonFiniteNumber("NaN and Infinity have no JSON form");
  } else {
    out += "null";  // as JSON.stringify writes them
  }
}

}  // namespace

std::string json_text(const bj::value& v) {
  std::string out;
  append_json(out, v, JsonForm::as_is);
  return out;
}

void append_json(std::string& out, const bj::value& v, JsonForm form) {
  switch (v.kind()) {
    case bj::kind::null:
      out += "null";
      break;
    case bj::kind::bool_:
      out += v.get_bool() ? "true" : "false";
      break;
    case bj::kind::int64:
      if (form == JsonForm::canonical) {
        append_number(out, static_cast<double>(v.get_int64()), form);
      } else {
        out += std::to_string(v.get_int64());
      }
      break;
    case bj::kind::uint64:
      if (form == JsonForm::canonical) {
        append_number(out, static_cast<double>(v.get_uint64()), form);
      } else {
        out += std::to_string(v.get_uint64());
      }
      break;
    case bj::kind::double_:
      append_number(out, v.get_double(), form);
      break;
    case bj::kind::string:
      append_json_string(out, v.get_string());
      break;
    case bj::kind::array: {
      out += '[';
      bool first = true;
      for (const auto& el : v.get_array()) {
        if (!first) out += ',';
        first = false;
        append_json(out, el, form);
      }
      out += ']';
      break;
    }
    case bj::kind::object: {
      if (form == JsonForm::canonical) {
        append_canonical_object(out, v.get_object());
        break;
      }
      out += '{';
      bool first = true;
      for (const auto& kv : v.get_object()) {
        if (!first) out += ',';
        first = false;
        append_json_string(out, kv.key());
        out += ':';
        append_json(out, kv.value(), form);
      }
      out += '}';
      break;
    }
  }
}

}  // namespace schemagate::util
