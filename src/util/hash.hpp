#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
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

// A strong HTTP entity tag (quoted) of some bytes: equal bytes, equal tag.
inline std::string etag_of_bytes(std::string_view bytes) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "\"%016llx\"", static_cast<unsigned long long>(fnv1a64(bytes)));
  return buf;
}

}  // namespace schemagate::util
