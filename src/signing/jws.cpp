#include "signing/jws.hpp"

#include "json/jcs.hpp"
#include "json/parse.hpp"

#include <sodium.h>

#include <stdexcept>

namespace schemagate::signing {

namespace bj = boost::json;

namespace {

void init_sodium() {
  static const bool ready = sodium_init() >= 0;
  if (!ready) throw std::runtime_error("libsodium could not be initialised");
}

}  // namespace

std::string base64url_encode(std::string_view bytes) {
  const std::size_t len =
      sodium_base64_encoded_len(bytes.size(), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  std::string out(len, '\0');
  sodium_bin2base64(out.data(), len, reinterpret_cast<const unsigned char*>(bytes.data()),
                    bytes.size(), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  out.resize(len - 1);  // the terminating NUL
  return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  std::string out(text.size() * 3 / 4 + 3, '\0');
  std::size_t len = 0;
  const char* end = nullptr;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(),
                        text.size(), nullptr, &len, &end,
                        sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
      end != text.data() + text.size()) {
    return std::nullopt;
  }
  out.resize(len);
  return out;
}

KeyPair KeyPair::from_seed(const std::array<std::uint8_t, 32>& seed) {
  init_sodium();
  KeyPair k;
  k.seed = seed;
  crypto_sign_seed_keypair(k.public_key.data(), k.secret.data(), seed.data());
  k.kid = thumbprint(k.public_key);
  return k;
}

KeyPair KeyPair::generate() {
  init_sodium();
  std::array<std::uint8_t, 32> seed{};
  randombytes_buf(seed.data(), seed.size());
  KeyPair k = from_seed(seed);
  sodium_memzero(seed.data(), seed.size());
  return k;
}

std::string thumbprint(const std::array<std::uint8_t, 32>& public_key) {
  init_sodium();
  // RFC 7638 §3.2: the required members only, in lexicographic order, no whitespace.
  const std::string x = base64url_encode(
      std::string_view(reinterpret_cast<const char*>(public_key.data()), public_key.size()));
  const std::string jwk = R"({"crv":"Ed25519","kty":"OKP","x":")" + x + R"("})";
  std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
  crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(jwk.data()), jwk.size());
  return base64url_encode(
      std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

bj::object public_jwk(const std::array<std::uint8_t, 32>& public_key) {
  return bj::object{
      {"kty", "OKP"},
      {"crv", "Ed25519"},
      {"x", base64url_encode(std::string_view(reinterpret_cast<const char*>(public_key.data()),
                                              public_key.size()))},
      {"kid", thumbprint(public_key)},
      {"use", "sig"},
      {"alg", "EdDSA"}};
}

std::optional<std::array<std::uint8_t, 32>> public_key_of(const bj::value& jwk,
                                                          std::string& problem) {
  const auto* o = jwk.if_object();
  if (!o) {
    problem = "a JWK must be a JSON object";
    return std::nullopt;
  }
  const auto member = [&](std::string_view name) -> std::string {
    const auto* v = o->if_contains(name);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  if (member("kty") != "OKP" || member("crv") != "Ed25519") {
    problem = "only Ed25519 keys are accepted (kty \"OKP\", crv \"Ed25519\")";
    return std::nullopt;
  }
  const auto x = base64url_decode(member("x"));
  if (!x || x->size() != 32) {
    problem = "x must be the 32-byte public key in base64url";
    return std::nullopt;
  }
  std::array<std::uint8_t, 32> key{};
  std::copy(x->begin(), x->end(), key.begin());
  return key;
}

std::string sign_compact(const KeyPair& key, const bj::object& header, std::string_view payload) {
  init_sodium();
  std::string input =
      base64url_encode(json::canonicalize(header)) + "." + base64url_encode(payload);
  std::array<unsigned char, crypto_sign_BYTES> sig{};
  crypto_sign_detached(sig.data(), nullptr, reinterpret_cast<const unsigned char*>(input.data()),
                       input.size(), key.secret.data());
  return input + "." +
         base64url_encode(std::string_view(reinterpret_cast<const char*>(sig.data()), sig.size()));
}

std::string signed_content(const bj::value& document) {
  if (const auto* o = document.if_object(); o && o->contains("signature")) {
    bj::object copy = *o;
    copy.erase("signature");
    return json::canonicalize(copy);
  }
  return json::canonicalize(document);
}

std::string sign_document(const KeyPair& key, const bj::value& document) {
  const std::string jws =
      sign_compact(key, bj::object{{"alg", "EdDSA"}, {"kid", key.kid}, {"cty", "jcs+json"}},
                   signed_content(document));
  // Detached: the payload part is left empty (RFC 7515 Appendix F).
  const auto first = jws.find('.');
  const auto second = jws.find('.', first + 1);
  return jws.substr(0, first + 1) + jws.substr(second);
}

std::optional<JwsParts> parse_jws(std::string_view jws, std::optional<std::string_view> detached,
                                  std::string& problem) {
  const auto first = jws.find('.');
  const auto second = first == std::string_view::npos ? first : jws.find('.', first + 1);
  if (second == std::string_view::npos || jws.find('.', second + 1) != std::string_view::npos) {
    problem = "a JWS in compact form has three parts separated by '.'";
    return std::nullopt;
  }
  const auto header_b64 = jws.substr(0, first);
  auto payload_b64 = jws.substr(first + 1, second - first - 1);
  const auto header_text = base64url_decode(header_b64);
  const auto sig = base64url_decode(jws.substr(second + 1));
  if (!header_text || !sig) {
    problem = "the JWS header or signature is not base64url";
    return std::nullopt;
  }
  JwsParts parts;
  bj::value header;
  try {
    header = json::parse(*header_text);
  } catch (const std::exception&) {
  }
  if (!header.is_object()) {
    problem = "the JWS header is not a JSON object";
    return std::nullopt;
  }
  parts.header = std::move(header.get_object());
  const auto* alg = parts.header.if_contains("alg");
  if (!alg || !alg->is_string() || alg->get_string() != "EdDSA") {
    problem = "the JWS alg must be \"EdDSA\"";
    return std::nullopt;
  }
  if (parts.header.contains("crit")) {
    problem = "the JWS names critical header parameters this verifier does not understand";
    return std::nullopt;
  }
  std::string payload;
  if (payload_b64.empty() && detached) {
    payload = base64url_encode(*detached);
  } else if (!payload_b64.empty() && !detached) {
    payload = std::string(payload_b64);
  } else {
    problem = detached ? "a detached JWS must leave its payload part empty"
                       : "the JWS has no payload and none was given";
    return std::nullopt;
  }
  parts.signing_input = std::string(header_b64) + "." + payload;
  parts.signature = std::move(*sig);
  return parts;
}

bool verify_signature(const std::array<std::uint8_t, 32>& public_key, std::string_view message,
                      std::string_view signature) {
  init_sodium();
  if (signature.size() != crypto_sign_BYTES) return false;
  return crypto_sign_verify_detached(reinterpret_cast<const unsigned char*>(signature.data()),
                                     reinterpret_cast<const unsigned char*>(message.data()),
                                     message.size(), public_key.data()) == 0;
}

bj::object keys_by_kid(const bj::value& jwks) {
  bj::object out;
  const auto add = [&out](const bj::value& jwk) {
    std::string ignored;
    const auto key = public_key_of(jwk, ignored);
    if (!key) return;
    const auto* kid = jwk.as_object().if_contains("kid");
    out[kid && kid->is_string() ? std::string(kid->get_string()) : thumbprint(*key)] = jwk;
  };
  const auto* list = jwks.is_object() ? jwks.get_object().if_contains("keys") : nullptr;
  if (list && list->is_array()) {
    for (const auto& k : list->get_array())
      add(k);
  } else if (jwks.is_object()) {
    add(jwks);
  }
  return out;
}

std::string verify_document(const bj::value& document, std::string_view jws,
                            const bj::object& keys) {
  std::string problem;
  const auto parts = parse_jws(jws, signed_content(document), problem);
  if (!parts) return "malformed signature: " + problem;
  const auto* kid = parts->header.if_contains("kid");
  if (!kid || !kid->is_string()) return "the signature names no key (kid)";
  const auto* jwk = keys.if_contains(kid->get_string());
  if (!jwk) return "signed by " + std::string(kid->get_string()) + ", which is not a trusted key";
  const auto key = public_key_of(*jwk, problem);
  if (!key || !verify_signature(*key, parts->signing_input, parts->signature)) {
    return "the signature does not verify: the document was changed or forged";
  }
  return {};
}

}  // namespace schemagate::signing
