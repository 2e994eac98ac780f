#pragma once

#include <boost/json/value.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace schemagate::signing {

// RFC 4648 §5 base64url without padding, as JOSE writes it.
std::string base64url_encode(std::string_view bytes);
// nullopt for characters outside the alphabet, padding or a length no encoding produces.
std::optional<std::string> base64url_decode(std::string_view text);

// An Ed25519 key pair (RFC 8032). `seed` is the 32-byte private key JOSE calls "d".
struct KeyPair {
  std::array<std::uint8_t, 32> seed{};
  std::array<std::uint8_t, 32> public_key{};
  std::array<std::uint8_t, 64> secret{};  // libsodium's form: seed || public key
  std::string kid;                        // RFC 7638 thumbprint of the public JWK

  static KeyPair generate();
  static KeyPair from_seed(const std::array<std::uint8_t, 32>& seed);
};

// RFC 7638 JWK thumbprint (SHA-256, base64url) of an Ed25519 public key.
std::string thumbprint(const std::array<std::uint8_t, 32>& public_key);
// The public JWK (RFC 8037 §2): {"kty":"OKP","crv":"Ed25519","x","kid","use":"sig","alg":"EdDSA"}.
boost::json::object public_jwk(const std::array<std::uint8_t, 32>& public_key);
// The public key of an OKP/Ed25519 JWK; nullopt (and `problem` set) when it is not one.
std::optional<std::array<std::uint8_t, 32>> public_key_of(const boost::json::value& jwk,
                                                          std::string& problem);

// RFC 7515 compact serialization signed with EdDSA (RFC 8037): the protected header is written
// in its RFC 8785 canonical form, so {"alg":"EdDSA"} reproduces RFC 8037 §A.4 byte for byte.
std::string sign_compact(const KeyPair& key, const boost::json::object& header,
                         std::string_view payload);

// A detached JWS (RFC 7515 Appendix F) over the RFC 8785 canonical form of `document` with its
// top-level "signature" member left out: "<header>..<signature>". The header names the key
// (kid) and says what was signed ("cty": "jcs+json").
std::string sign_document(const KeyPair& key, const boost::json::value& document);

struct JwsParts {
  boost::json::object header;
  std::string signing_input;  // header.payload, as signed
  std::string signature;      // raw bytes
};
// Splits and decodes a compact JWS; `detached_payload` fills an empty payload part. nullopt
// (and `problem` set) when it is malformed or its alg is not EdDSA.
std::optional<JwsParts> parse_jws(std::string_view jws, std::optional<std::string_view> detached,
                                  std::string& problem);

bool verify_signature(const std::array<std::uint8_t, 32>& public_key, std::string_view message,
                      std::string_view signature);

// The Ed25519 keys of a JWKS ({"keys": [...]}) or of a single JWK, by kid (a key without one
// is listed under its RFC 7638 thumbprint). Other keys are left out.
boost::json::object keys_by_kid(const boost::json::value& jwks);

// Checks a sign_document() signature against `keys` (from keys_by_kid). Empty when valid;
// otherwise what is wrong (malformed, unknown key, changed document).
std::string verify_document(const boost::json::value& document, std::string_view jws,
                            const boost::json::object& keys);

// The bytes sign_document() signs for `document`.
std::string signed_content(const boost::json::value& document);

}  // namespace schemagate::signing
