#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace schemagate::versioning {

// Semantic Versioning 2.0.0: MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD].
struct SemVer {
  unsigned long major = 0, minor = 0, patch = 0;
  std::vector<std::string> prerelease;  // dot-separated identifiers
  std::string build;                    // ignored in comparisons

  // nullopt when `text` is not a valid version (leading zeros, empty identifiers, ...).
  static std::optional<SemVer> parse(std::string_view text);
  std::string to_string() const;

  // Precedence per semver.org §11 (build metadata does not count).
  std::strong_ordering operator<=>(const SemVer& other) const;
  bool operator==(const SemVer& other) const { return (*this <=> other) == 0; }
};

}  // namespace schemagate::versioning
