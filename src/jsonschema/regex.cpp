#include "jsonschema/program.hpp"

#include <cctype>
#include <cstdio>

namespace schemagate::jsonschema::detail {

namespace {

// ECMA-262 \s: white space and line terminators, Unicode-aware.
constexpr std::string_view kSpaceClass =
    "\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
    "\\x{205F}\\x{3000}\\x{FEFF}";
// ECMA-262 '.': anything but a line terminator.
constexpr std::string_view kDot = "[^\\n\\r\\x{2028}\\x{2029}]";

[[noreturn]] void unsupported(std::string_view pattern, std::string_view what) {
  throw UnsupportedRegex("pattern \"" + std::string(pattern) + "\" uses " + std::string(what) +
                         ", which the linear-time regex engine (RE2) cannot run");
}

bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

// ECMA-262 property names (long General_Category names, gc=/sc= prefixes) -> RE2's names.
std::string re2_property(std::string_view name) {
  for (std::string_view prefix :
       {"General_Category=", "gc=", "Script=", "sc=", "Script_Extensions=", "scx="}) {
    if (name.starts_with(prefix)) {
      name.remove_prefix(prefix.size());
      break;
    }
  }
  static constexpr std::pair<std::string_view, std::string_view> kLong[] = {
      {"Letter", "L"},
      {"Cased_Letter", "L"},
      {"Lowercase_Letter", "Ll"},
      {"Uppercase_Letter", "Lu"},
      {"Titlecase_Letter", "Lt"},
      {"Modifier_Letter", "Lm"},
      {"Other_Letter", "Lo"},
      {"Mark", "M"},
      {"Combining_Mark", "M"},
      {"Nonspacing_Mark", "Mn"},
      {"Spacing_Mark", "Mc"},
      {"Enclosing_Mark", "Me"},
      {"Number", "N"},
      {"Decimal_Number", "Nd"},
      {"digit", "Nd"},
      {"Letter_Number", "Nl"},
      {"Other_Number", "No"},
      {"Punctuation", "P"},
      {"punct", "P"},
      {"Connector_Punctuation", "Pc"},
      {"Dash_Punctuation", "Pd"},
      {"Open_Punctuation", "Ps"},
      {"Close_Punctuation", "Pe"},
      {"Initial_Punctuation", "Pi"},
      {"Final_Punctuation", "Pf"},
      {"Other_Punctuation", "Po"},
      {"Symbol", "S"},
      {"Math_Symbol", "Sm"},
      {"Currency_Symbol", "Sc"},
      {"Modifier_Symbol", "Sk"},
      {"Other_Symbol", "So"},
      {"Separator", "Z"},
      {"Space_Separator", "Zs"},
      {"Line_Separator", "Zl"},
      {"Paragraph_Separator", "Zp"},
      {"Other", "C"},
      {"Control", "Cc"},
      {"cntrl", "Cc"},
      {"Format", "Cf"},
      {"Surrogate", "Cs"},
      {"Private_Use", "Co"}};
  for (const auto& [long_name, short_name] : kLong) {
    if (name == long_name) return std::string(short_name);
  }
  return std::string(name);
}

}  // namespace

std::string translate_ecma_regex(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 16);
  bool in_class = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) throw SchemaError("pattern \"" + std::string(p) + "\" ends in '\\'");
      const char e = p[++i];
      switch (e) {
        case 'd':
          out += in_class ? "0-9" : "[0-9]";
          break;
        case 'D':
          out += in_class ? "\\D" : "[^0-9]";
          break;
        case 'w':
          out += in_class ? "A-Za-z0-9_" : "[A-Za-z0-9_]";
          break;
        case 'W':
          out += in_class ? "\\W" : "[^A-Za-z0-9_]";
          break;
        case 's':
          if (in_class)
            out += kSpaceClass;
          else
            out += "[" + std::string(kSpaceClass) + "]";
          break;
        case 'S':
          if (in_class) unsupported(p, "\\S inside a character class");
          out += "[^" + std::string(kSpaceClass) + "]";
          break;
        case 'c':
          if (i + 1 < p.size() && std::isalpha(static_cast<unsigned char>(p[i + 1]))) {
            const int code = (p[++i] & 0x1F);
            char buf[16];
            std::snprintf(buf, sizeof buf, "\\x{%X}", code);
            out += buf;
          } else {
            out += "\\\\c";
          }
          break;
        case 'u':
          if (i + 1 < p.size() && p[i + 1] == '{') {
            const auto close = p.find('}', i);
            if (close == std::string_view::npos) unsupported(p, "an unterminated \\u{...}");
            out += "\\x{" + std::string(p.substr(i + 2, close - i - 2)) + "}";
            i = close;
          } else if (i + 4 < p.size() && is_hex(p[i + 1]) && is_hex(p[i + 2]) && is_hex(p[i + 3]) &&
                     is_hex(p[i + 4])) {
            out += "\\x{" + std::string(p.substr(i + 1, 4)) + "}";
            i += 4;
          } else {
            out += 'u';
          }
          break;
        case 'p':
        case 'P': {
          if (i + 1 < p.size() && p[i + 1] == '{') {
            const auto close = p.find('}', i);
            if (close == std::string_view::npos) unsupported(p, "an unterminated \\p{...}");
            out += '\\';
            out += e;
            out += '{' + re2_property(p.substr(i + 2, close - i - 2)) + '}';
            i = close;
          } else {
            out += '\\';
            out += e;
          }
          break;
        }
        case '/':
          out += '/';
          break;
        case '-':
          out += "\\-";
          break;
        case '0':
          out += "\\x{0}";
          break;
        default:
          if (e >= '1' && e <= '9') unsupported(p, "a backreference");
          if (e == 'k') unsupported(p, "a named backreference");
          if (e == 'a') {
            throw SchemaError("pattern \"" + std::string(p) +
                              "\" uses \\a, which is not an ECMA-262 escape");
          }
          out += '\\';
          out += e;
      }
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      if (c == '[')
        out += "\\[";
      else
        out += c;
      continue;
    }
    switch (c) {
      case '[':
        in_class = true;
        out += c;
        if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
        if (i + 1 < p.size() && p[i + 1] == ']') {  // ECMA "[]" matches nothing, "[^]" anything
          ++i;
          in_class = false;
          const bool negated = out.back() == '^';
          out.resize(out.size() - (negated ? 2 : 1));
          out += negated ? "(?s:.)" : "[^\\x{0}-\\x{10FFFF}]";
        }
        break;
      case '.':
        out += kDot;
        break;
      case '(':
        if (i + 2 < p.size() && p[i + 1] == '?') {
          const char k = p[i + 2];
          if (k == '=' || k == '!') unsupported(p, "a lookahead");
          if (k == '<' && i + 3 < p.size() && (p[i + 3] == '=' || p[i + 3] == '!')) {
            unsupported(p, "a lookbehind");
          }
          if (k == 'P' || (k != ':' && k != '<')) {
            throw SchemaError("pattern \"" + std::string(p) + "\" uses a (?" + std::string(1, k) +
                              " group, which is not ECMA-262 syntax");
          }
          if (k == '<') {  // named group: (?<name> -> (?P<name>
            out += "(?P<";
            i += 2;
            break;
          }
        }
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace schemagate::jsonschema::detail
