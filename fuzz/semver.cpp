// Semantic versions from arbitrary text: a version that parses compares equal to itself and
// orders consistently against a fixed one.
#include "versioning/semver.hpp"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using schemagate::versioning::SemVer;
  const auto v = SemVer::parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!v) return 0;
  static const auto one = *SemVer::parse("1.0.0");
  if (!(*v == *v) || (*v < one && one < *v)) std::abort();
  return 0;
}
