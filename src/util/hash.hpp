#pragma once

#include <cstdint>
#include <string_view>

namespace schemagate::util {

// FNV-1a, 64 bits: a cheap, stable fingerprint (ETags, idempotency bodies), not a defence
// against anyone choosing inputs to collide.
inline std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace schemagate::util
