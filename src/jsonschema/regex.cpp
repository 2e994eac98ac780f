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

namespace schemagate::jsonschema::detail {

namespace {

std::bitset<128> ascii_class(char c) {
  std::bitset<128> b;
  switch (c) {
    case 'd':
      for (int i = '0'; i <= '9'; ++i)
        b.set(i);
      break;
    case 'w':
      for (int i = 0; i < 128; ++i) {
        if (std::isalnum(i) || i == '_') b.set(i);
      }
      break;
    case 's':
      for (int i : {'\t', '\n', '\v', '\f', '\r', ' '})
        b.set(i);
      break;
  }
  return b;
}

// One escaped character inside or outside a class: a set, or nothing when unsupported.
std::optional<std::bitset<128>> escape_set(char e) {
  std::bitset<128> b;
  switch (e) {
    case 'd':
    case 'w':
    case 's':
      return ascii_class(e);
    case 'D':
    case 'W':
    case 'S':
      return ~ascii_class(static_cast<char>(std::tolower(e)));
    case 't':
      b.set('\t');
      return b;
    case 'n':
      b.set('\n');
      return b;
    case 'r':
      b.set('\r');
      return b;
    case 'f':
      b.set('\f');
      return b;
    case 'v':
      b.set('\v');
      return b;
    default:
      if (std::string_view(".-/\\[](){}*+?|^$ ,:#@!%&=~'\"<>_;`").find(e) !=
          std::string_view::npos) {
        b.set(static_cast<unsigned char>(e));
        return b;
      }
      return std::nullopt;
  }
}

}  // namespace

std::optional<FastPattern> FastPattern::compile(std::string_view p) {
  FastPattern fp;
  std::size_t i = 0;
  if (i < p.size() && p[i] == '^') {
    fp.anchored_start_ = true;
    ++i;
  }
  while (i < p.size()) {
    const char c = p[i];
    if (static_cast<unsigned char>(c) >= 0x80) return std::nullopt;
    Atom atom;
    if (c == '$') {
      if (i + 1 != p.size()) return std::nullopt;
      fp.anchored_end_ = true;
      break;
    }
    if (c == '(' || c == ')' || c == '|' || c == '^' || c == '*' || c == '+' || c == '?' ||
        c == '{' || c == '}' || c == ']') {
      return std::nullopt;
    }
    if (c == '\\') {
      if (i + 1 >= p.size()) return std::nullopt;
      const auto set = escape_set(p[i + 1]);
      if (!set) return std::nullopt;
      atom.set = *set;
      i += 2;
    } else if (c == '.') {
      atom.set.set();
      atom.set.reset('\n');
      atom.set.reset('\r');
      ++i;
    } else if (c == '[') {
      ++i;
      bool negate = false;
      if (i < p.size() && p[i] == '^') {
        negate = true;
        ++i;
      }
      if (i < p.size() && p[i] == ']') return std::nullopt;  // ECMA "[]" / "[^]"
      while (i < p.size() && p[i] != ']') {
        std::bitset<128> item;
        int lo = -1;
        if (static_cast<unsigned char>(p[i]) >= 0x80) return std::nullopt;
        if (p[i] == '\\') {
          if (i + 1 >= p.size()) return std::nullopt;
          const auto set = escape_set(p[i + 1]);
          if (!set) return std::nullopt;
          if (set->count() == 1) {
            for (int k = 0; k < 128; ++k) {
              if (set->test(k)) lo = k;
            }
          }
          item = *set;
          i += 2;
        } else if (p[i] == '[') {
          return std::nullopt;  // nested/POSIX classes: leave to RE2
        } else {
          lo = static_cast<unsigned char>(p[i]);
          item.set(lo);
          ++i;
        }
        // A range a-z (a '-' before ']' is a literal).
        if (lo >= 0 && i + 1 < p.size() && p[i] == '-' && p[i + 1] != ']') {
          int hi;
          if (p[i + 1] == '\\') {
            if (i + 2 >= p.size()) return std::nullopt;
            const auto set = escape_set(p[i + 2]);
            if (!set || set->count() != 1) return std::nullopt;
            hi = 0;
            for (int k = 0; k < 128; ++k) {
              if (set->test(k)) hi = k;
            }
            i += 3;
          } else {
            if (static_cast<unsigned char>(p[i + 1]) >= 0x80) return std::nullopt;
            hi = static_cast<unsigned char>(p[i + 1]);
            i += 2;
          }
          if (hi < lo) return std::nullopt;
          for (int k = lo; k <= hi; ++k)
            item.set(k);
        }
        atom.set |= item;
      }
      if (i >= p.size()) return std::nullopt;
      ++i;  // ']'
      if (negate) atom.set = ~atom.set;
    } else {
      atom.set.set(static_cast<unsigned char>(c));
      ++i;
    }
    // Quantifier.
    if (i < p.size()) {
      if (p[i] == '?' || p[i] == '*' || p[i] == '+') {
        atom.min = p[i] == '+' ? 1 : 0;
        atom.max = p[i] == '?' ? 1 : UINT32_MAX;
        ++i;
      } else if (p[i] == '{') {
        const auto close = p.find('}', i);
        if (close == std::string_view::npos) return std::nullopt;
        const auto body = p.substr(i + 1, close - i - 1);
        const auto comma = body.find(',');
        auto number = [](std::string_view t, std::uint32_t& out) {
          if (t.empty() || t.size() > 6) return false;
          out = 0;
          for (char d : t) {
            if (d < '0' || d > '9') return false;
            out = out * 10 + static_cast<std::uint32_t>(d - '0');
          }
          return true;
        };
        if (comma == std::string_view::npos) {
          if (!number(body, atom.min)) return std::nullopt;
          atom.max = atom.min;
        } else {
          if (!number(body.substr(0, comma), atom.min)) return std::nullopt;
          const auto rest = body.substr(comma + 1);
          if (rest.empty())
            atom.max = UINT32_MAX;
          else if (!number(rest, atom.max) || atom.max < atom.min)
            return std::nullopt;
        }
        i = close + 1;
      }
      if (i < p.size() && p[i] == '?') ++i;  // lazy: same verdict for a yes/no match
    }
    fp.atoms_.push_back(atom);
  }
  // Greedy matching is exact when anchored at the start and no variable-length atom can take
  // a character that the atoms after it (up to the next mandatory one) could use.
  fp.greedy_ok_ = fp.anchored_start_;
  for (std::size_t a = 0; a < fp.atoms_.size() && fp.greedy_ok_; ++a) {
    if (fp.atoms_[a].min == fp.atoms_[a].max) continue;
    for (std::size_t b = a + 1; b < fp.atoms_.size(); ++b) {
      if ((fp.atoms_[a].set & fp.atoms_[b].set).any()) {
        fp.greedy_ok_ = false;
        break;
      }
      if (fp.atoms_[b].min > 0) break;
    }
  }
  return fp;
}

bool FastPattern::greedy_match(std::string_view s) const {
  std::size_t pos = 0;
  for (const Atom& a : atoms_) {
    std::uint32_t count = 0;
    while (count < a.max && pos < s.size() && a.set.test(static_cast<unsigned char>(s[pos]))) {
      ++pos;
      ++count;
    }
    if (count < a.min) return false;
  }
  return !anchored_end_ || pos == s.size();
}

bool FastPattern::dp_search(std::string_view s) const {
  const std::size_t n = s.size();
  // reach[q]: the atoms so far can end at position q.
  std::vector<char> reach(n + 1, anchored_start_ ? 0 : 1), next(n + 1);
  std::vector<std::uint32_t> prefix(n + 2);
  reach[0] = 1;
  for (const Atom& a : atoms_) {
    prefix[0] = 0;
    for (std::size_t q = 0; q <= n; ++q)
      prefix[q + 1] = prefix[q] + (reach[q] ? 1 : 0);
    std::size_t run = 0;  // matching characters ending just before q
    for (std::size_t q = 0; q <= n; ++q) {
      if (q > 0) run = a.set.test(static_cast<unsigned char>(s[q - 1])) ? run + 1 : 0;
      next[q] = 0;
      if (q < a.min) continue;
      const std::size_t hi = q - a.min;
      const std::size_t span = std::min<std::size_t>(a.max, run);
      const std::size_t lo = q >= span ? q - span : 0;
      if (lo <= hi && prefix[hi + 1] - prefix[lo] > 0) next[q] = 1;
    }
    reach.swap(next);
  }
  if (anchored_end_) return reach[n] != 0;
  for (char r : reach) {
    if (r) return true;
  }
  return false;
}

std::optional<bool> FastPattern::search(std::string_view s) const {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return std::nullopt;
  }
  return greedy_ok_ ? greedy_match(s) : dp_search(s);
}

}  // namespace schemagate::jsonschema::detail
