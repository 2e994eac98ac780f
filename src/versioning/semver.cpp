#include "versioning/semver.hpp"

#include <cctype>

namespace schemagate::versioning {

namespace {

bool numeric(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool identifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  }
  return true;
}

std::optional<unsigned long> number(std::string_view s) {
  if (!numeric(s) || (s.size() > 1 && s[0] == '0') || s.size() > 15) return std::nullopt;
  return std::stoul(std::string(s));
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    const auto at = s.find(sep);
    parts.push_back(s.substr(0, at));
    if (at == std::string_view::npos) break;
    s.remove_prefix(at + 1);
  }
  return parts;
}

}  // namespace

std::optional<SemVer> SemVer::parse(std::string_view text) {
  SemVer v;
  if (const auto plus = text.find('+'); plus != std::string_view::npos) {
    v.build = std::string(text.substr(plus + 1));
    for (auto id : split(v.build, '.')) {
      if (!identifier(id)) return std::nullopt;
    }
    text = text.substr(0, plus);
  }
  if (const auto dash = text.find('-'); dash != std::string_view::npos) {
    for (auto id : split(text.substr(dash + 1), '.')) {
      if (!identifier(id) || (numeric(id) && id.size() > 1 && id[0] == '0')) return std::nullopt;
      v.prerelease.emplace_back(id);
    }
    text = text.substr(0, dash);
  }
  const auto core = split(text, '.');
  if (core.size() != 3) return std::nullopt;
  const auto a = number(core[0]), b = number(core[1]), c = number(core[2]);
  if (!a || !b || !c) return std::nullopt;
  v.major = *a;
  v.minor = *b;
  v.patch = *c;
  return v;
}

std::string SemVer::to_string() const {
  std::string s = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  for (std::size_t i = 0; i < prerelease.size(); ++i)
    s += (i ? "." : "-") + prerelease[i];
  if (!build.empty()) s += "+" + build;
  return s;
}

std::strong_ordering SemVer::operator<=>(const SemVer& o) const {
  if (auto c = major <=> o.major; c != 0) return c;
  if (auto c = minor <=> o.minor; c != 0) return c;
  if (auto c = patch <=> o.patch; c != 0) return c;
  // A version without pre-release identifiers ranks above one with them.
  if (prerelease.empty() && o.prerelease.empty()) return std::strong_ordering::equal;
  if (prerelease.empty()) return std::strong_ordering::greater;
  if (o.prerelease.empty()) return std::strong_ordering::less;
  for (std::size_t i = 0; i < prerelease.size() && i < o.prerelease.size(); ++i) {
    const auto& x = prerelease[i];
    const auto& y = o.prerelease[i];
    const bool xn = numeric(x), yn = numeric(y);
    if (xn && yn) {
      // Compared as numbers of any length (no leading zeros: the longer is the larger), not
      // converted: an identifier of 25 digits does not fit in 64 bits.
      if (auto c = x.size() <=> y.size(); c != 0) return c;
      if (auto c = x.compare(y) <=> 0; c != 0) return c;
    } else if (xn != yn) {
      return xn ? std::strong_ordering::less : std::strong_ordering::greater;
    } else if (auto c = x.compare(y) <=> 0; c != 0) {
      return c;
    }
  }
  return prerelease.size() <=> o.prerelease.size();
}

}  // namespace schemagate::versioning
