// `format` checks (used when formats are assertions). Each follows the RFC the JSON Schema
// specification names for it; non-strings are always valid.

#include "jsonschema/program.hpp"

#include <arpa/inet.h>
#include <boost/url/parse.hpp>

#include <cctype>

namespace schemagate::jsonschema::detail {

namespace {

bool digits(std::string_view s, std::size_t pos, std::size_t n) {
  if (pos + n > s.size()) return false;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

int number_at(std::string_view s, std::size_t pos, std::size_t n) {
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i)
    v = v * 10 + (s[i] - '0');
  return v;
}

bool leap_year(int y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

bool full_date(std::string_view s) {
  if (s.size() != 10 || !digits(s, 0, 4) || s[4] != '-' || !digits(s, 5, 2) || s[7] != '-' ||
      !digits(s, 8, 2)) {
    return false;
  }
  const int y = number_at(s, 0, 4), m = number_at(s, 5, 2), d = number_at(s, 8, 2);
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return false;
  return d <= days[m - 1] + (m == 2 && leap_year(y) ? 1 : 0);
}

// RFC 3339 full-time; a leap second is valid only where it falls on 23:59:60 UTC.
bool full_time(std::string_view s) {
  if (s.size() < 9 || !digits(s, 0, 2) || s[2] != ':' || !digits(s, 3, 2) || s[5] != ':' ||
      !digits(s, 6, 2)) {
    return false;
  }
  const int h = number_at(s, 0, 2), m = number_at(s, 3, 2), sec = number_at(s, 6, 2);
  std::size_t i = 8;
  if (i < s.size() && s[i] == '.') {
    const std::size_t start = ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
      ++i;
    if (i == start) return false;
  }
  if (i >= s.size()) return false;
  int offset_minutes = 0;
  if (s[i] == 'Z' || s[i] == 'z') {
    if (i + 1 != s.size()) return false;
  } else if (s[i] == '+' || s[i] == '-') {
    if (s.size() != i + 6 || !digits(s, i + 1, 2) || s[i + 3] != ':' || !digits(s, i + 4, 2)) {
      return false;
    }
    const int oh = number_at(s, i + 1, 2), om = number_at(s, i + 4, 2);
    if (oh > 23 || om > 59) return false;
    offset_minutes = (oh * 60 + om) * (s[i] == '+' ? 1 : -1);
  } else {
    return false;
  }
  if (h > 23 || m > 59 || sec > 60) return false;
  if (sec == 60) {
    const int utc = ((h * 60 + m - offset_minutes) % 1440 + 1440) % 1440;
    return utc == 23 * 60 + 59;
  }
  return true;
}

bool date_time(std::string_view s) {
  if (s.size() < 11 || (s[10] != 'T' && s[10] != 't')) return false;
  return full_date(s.substr(0, 10)) && full_time(s.substr(11));
}

// ISO 8601 durations as in RFC 3339 appendix A.
bool duration(std::string_view s) {
  if (s.size() < 2 || s[0] != 'P') return false;
  std::size_t i = 1;
  auto component = [&](std::string_view units, std::size_t& unit_index) -> int {
    // Returns 1 when a number+unit was read, 0 when none is there, -1 on error.
    const std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
      ++i;
    if (i == start) return 0;
    if (i >= s.size()) return -1;
    const auto pos = units.find(s[i], unit_index);
    // After the first component, units must follow on directly (RFC 3339 appendix A: years
    // and days need months between them, hours and seconds need minutes).
    if (pos == std::string_view::npos || (unit_index != 0 && pos != unit_index)) return -1;
    unit_index = pos + 1;
    ++i;
    return 1;
  };
  std::size_t unit = 0;
  int read = 0, r;
  if (s.size() > 1 && s.back() == 'W') {  // PnW stands alone
    return digits(s, 1, s.size() - 2) && s.size() > 2;
  }
  while ((r = component("YMD", unit)) == 1)
    ++read;
  if (r < 0) return false;
  if (i < s.size()) {
    if (s[i] != 'T') return false;
    ++i;
    std::size_t time_unit = 0;
    int time_read = 0;
    while ((r = component("HMS", time_unit)) == 1)
      ++time_read;
    if (r < 0 || time_read == 0) return false;
    read += time_read;
  }
  return read > 0 && i == s.size();
}

bool ipv4(std::string_view s) {
  int parts = 0;
  std::size_t i = 0;
  while (true) {
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9')
      ++i;
    const std::size_t len = i - start;
    if (len == 0 || len > 3 || (len > 1 && s[start] == '0')) return false;
    if (number_at(s, start, len) > 255) return false;
    ++parts;
    if (i == s.size()) break;
    if (s[i] != '.' || parts == 4) return false;
    ++i;
  }
  return parts == 4;
}

bool ipv6(std::string_view s) {
  if (s.empty() || s.size() > 45) return false;
  for (char c : s) {
    if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.')) return false;
  }
  in6_addr addr;
  return inet_pton(AF_INET6, std::string(s).c_str(), &addr) == 1;
}

// IDNA (RFC 3490 §3.1) also separates labels with U+3002, U+FF0E and U+FF61.
std::string normalize_idn_separators(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto rest = s.substr(i);
    if (rest.starts_with("\xE3\x80\x82") || rest.starts_with("\xEF\xBC\x8E") ||
        rest.starts_with("\xEF\xBD\xA1")) {
      out += '.';
      i += 3;
    } else {
      out += s[i++];
    }
  }
  return out;
}

bool hostname(std::string_view s, bool international) {
  std::string normalized;
  if (international) {
    normalized = normalize_idn_separators(s);
    s = normalized;
  }
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto dot = s.find('.', start);
    const auto label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (label.empty() || (!international && label.size() > 63) || label.front() == '-' ||
        label.back() == '-') {
      return false;
    }
    if (label.size() >= 4 && label[2] == '-' && label[3] == '-' &&
        !(std::tolower(static_cast<unsigned char>(label[0])) == 'x' &&
          std::tolower(static_cast<unsigned char>(label[1])) == 'n')) {
      return false;  // RFC 5891 §4.2.3.1: "--" in positions 3-4 is reserved for A-labels
    }
    for (char c : label) {
      const auto u = static_cast<unsigned char>(c);
      if (u >= 0x80 && international) continue;
      if (!(std::isalnum(u) || c == '-')) return false;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

bool email(std::string_view s, bool international) {
  const auto at = s.rfind('@');
  if (at == std::string_view::npos || at == 0 || at + 1 == s.size()) return false;
  const auto local = s.substr(0, at);
  const auto domain = s.substr(at + 1);
  if (local.size() >= 2 && local.front() == '"' && local.back() == '"') {
    // quoted local part: anything printable, escapes allowed
  } else {
    if (local.front() == '.' || local.back() == '.' || local.find("..") != std::string_view::npos) {
      return false;
    }
    static constexpr std::string_view atext = "!#$%&'*+-/=?^_`{|}~.";
    for (char c : local) {
      const auto u = static_cast<unsigned char>(c);
      if (std::isalnum(u) || atext.find(c) != std::string_view::npos) continue;
      if (u >= 0x80 && international) continue;
      return false;
    }
  }
  if (domain.front() == '[') {
    if (domain.back() != ']') return false;
    const auto literal = domain.substr(1, domain.size() - 2);
    if (literal.starts_with("IPv6:")) return ipv6(literal.substr(5));
    return ipv4(literal);
  }
  return hostname(domain, international);
}

bool uuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < 36; ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

bool json_pointer(std::string_view s) {
  if (s.empty()) return true;
  if (s[0] != '/') return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '~' && (i + 1 >= s.size() || (s[i + 1] != '0' && s[i + 1] != '1'))) return false;
  }
  return true;
}

bool relative_json_pointer(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
    ++i;
  if (i == 0 || (i > 1 && s[0] == '0')) return false;
  const auto rest = s.substr(i);
  if (rest == "#") return true;
  if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) {
    std::size_t j = 1;
    while (j < rest.size() && std::isdigit(static_cast<unsigned char>(rest[j])))
      ++j;
    if (j == 1 || (j > 2 && rest[1] == '0') || (rest[1] == '0' && j == 2 && rest[0] == '-')) {
      return false;
    }
    const auto tail = rest.substr(j);
    return tail == "#" || json_pointer(tail);
  }
  return json_pointer(rest);
}

// IRIs are URIs that may carry non-ASCII characters: percent-encode those bytes, then parse.
std::string ascii_iri(std::string_view s) {
  std::string out;
  static const char* hex = "0123456789ABCDEF";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      out += '%';
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

// Boost.URL 1.81 accepts a non-numeric port and a second '@' in the authority; RFC 3986 does
// not, so the authority is checked again here.
bool strict_authority(std::string_view s) {
  const auto colon = s.find(':');
  if (colon != std::string_view::npos && colon < s.find_first_of("/?#")) {
    s.remove_prefix(colon + 1);  // the scheme
  }
  if (!s.starts_with("//")) return true;  // no authority
  auto authority = s.substr(2);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  const auto at = authority.find('@');
  if (at != std::string_view::npos) {
    if (authority.find('@', at + 1) != std::string_view::npos) return false;
    authority.remove_prefix(at + 1);
  }
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return false;
    authority.remove_prefix(close + 1);
  } else {
    const auto colon = authority.find(':');
    authority = colon == std::string_view::npos ? std::string_view{} : authority.substr(colon);
  }
  if (authority.empty()) return true;
  if (authority.front() != ':') return false;
  for (char c : authority.substr(1)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool uri(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return boost::urls::parse_uri(s).has_value() && strict_authority(s);
}

bool uri_reference(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return boost::urls::parse_uri_reference(s).has_value() && strict_authority(s);
}

// RFC 6570 level 4 syntax.
bool uri_template(std::string_view s) {
  auto pct = [&](std::size_t i) {
    return i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
           std::isxdigit(static_cast<unsigned char>(s[i + 2]));
  };
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c != '{') {
      if (c <= 0x20 || c == 0x7F ||
          std::string_view("\"<>\\^`|}").find(static_cast<char>(c)) != std::string_view::npos) {
        return false;
      }
      if (c == '%') {
        if (!pct(i)) return false;
        i += 3;
      } else {
        ++i;
      }
      continue;
    }
    ++i;  // expression
    if (i < s.size() && std::string_view("+#./;?&").find(s[i]) != std::string_view::npos) ++i;
    while (true) {  // varspec
      bool need_char = true;
      std::size_t start = i;
      while (i < s.size()) {
        const auto v = static_cast<unsigned char>(s[i]);
        if (std::isalnum(v) || v == '_') {
          ++i;
          need_char = false;
        } else if (v == '%' && pct(i)) {
          i += 3;
          need_char = false;
        } else if (v == '.' && !need_char) {
          ++i;
          need_char = true;
        } else {
          break;
        }
      }
      if (i == start || need_char) return false;
      if (i < s.size() && s[i] == ':') {
        ++i;
        const std::size_t d = i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
          ++i;
        if (i == d || i - d > 4 || s[d] == '0') return false;
      } else if (i < s.size() && s[i] == '*') {
        ++i;
      }
      if (i < s.size() && s[i] == ',') {
        ++i;
        continue;
      }
      break;
    }
    if (i >= s.size() || s[i] != '}') return false;
    ++i;
  }
  return true;
}

bool regex(std::string_view s) {
  try {
    RE2::Options opts;
    opts.set_log_errors(false);
    return RE2(translate_ecma_regex(s), opts).ok();
  } catch (const UnsupportedRegex&) {
    return true;  // valid ECMA-262, just not runnable by RE2
  } catch (const SchemaError&) {
    return false;
  }
}

}  // namespace

namespace {
constexpr std::pair<std::string_view, Format> kFormatNames[] = {
    {"date-time", Format::date_time},
    {"date", Format::date},
    {"time", Format::time},
    {"duration", Format::duration},
    {"email", Format::email},
    {"idn-email", Format::idn_email},
    {"hostname", Format::hostname},
    {"idn-hostname", Format::idn_hostname},
    {"ipv4", Format::ipv4},
    {"ipv6", Format::ipv6},
    {"uri", Format::uri},
    {"uri-reference", Format::uri_reference},
    {"iri", Format::iri},
    {"iri-reference", Format::iri_reference},
    {"uuid", Format::uuid},
    {"json-pointer", Format::json_pointer},
    {"relative-json-pointer", Format::relative_json_pointer},
    {"regex", Format::regex},
    {"uri-template", Format::uri_template},
};
}  // namespace

std::string_view format_name(Format f) {
  for (const auto& [name, format] : kFormatNames) {
    if (format == f) return name;
  }
  return "value";
}

Format format_from_name(std::string_view n) {
  for (const auto& [name, format] : kFormatNames) {
    if (name == n) return format;
  }
  return Format::unknown;
}

bool check_format(Format f, const boost::json::value& v) {
  if (!v.is_string()) return true;
  const std::string_view s = v.get_string();
  switch (f) {
    case Format::date_time:
      return date_time(s);
    case Format::date:
      return full_date(s);
    case Format::time:
      return full_time(s);
    case Format::duration:
      return duration(s);
    case Format::email:
      return email(s, false);
    case Format::idn_email:
      return email(s, true);
    case Format::hostname:
      return hostname(s, false);
    case Format::idn_hostname:
      return hostname(s, true);
    case Format::ipv4:
      return ipv4(s);
    case Format::ipv6:
      return ipv6(s);
    case Format::uri:
      return uri(s);
    case Format::uri_reference:
      return uri_reference(s);
    case Format::iri:
      return boost::urls::parse_uri(ascii_iri(s)).has_value();
    case Format::iri_reference:
      return boost::urls::parse_uri_reference(ascii_iri(s)).has_value();
    case Format::uuid:
      return uuid(s);
    case Format::json_pointer:
      return json_pointer(s);
    case Format::relative_json_pointer:
      return relative_json_pointer(s);
    case Format::regex:
      return regex(s);
    case Format::uri_template:
      return uri_template(s);
    case Format::unknown:
      return true;
  }
  return true;
}

}  // namespace schemagate::jsonschema::detail
