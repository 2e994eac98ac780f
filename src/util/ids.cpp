#include "util/ids.hpp"

#include <cstdio>
#include <random>

namespace schemagate::util {

std::string new_uuid() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const std::uint64_t hi = (rng() & 0xffffffffffff0fffull) | 0x0000000000004000ull;
  const std::uint64_t lo = (rng() & 0x3fffffffffffffffull) | 0x8000000000000000ull;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx",
                static_cast<unsigned long long>(hi >> 32),
                static_cast<unsigned long long>((hi >> 16) & 0xffff),
                static_cast<unsigned long long>(hi & 0xffff),
                static_cast<unsigned long long>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffull));
  return buf;
}

}  // namespace schemagate::util
