#pragma once

#include "signing/jws.hpp"

#include <boost/json/value.hpp>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace schemagate::store {
class Store;
}
namespace schemagate::util {
class Clock;
}

namespace schemagate::signing {

// The server's Ed25519 signing keys and the keys its operator trusts, in the Store. The newest
// own key signs; older ones stay for verification (rotation never invalidates what was signed).
// The first key is generated on first use.
class KeyStore {
 public:
  KeyStore(store::Store& store, const util::Clock& clock);

  KeyPair active();
  KeyPair rotate();  // a new active key; returns it

  // GET /.well-known/jwks.json: every own public key, newest first.
  boost::json::object jwks();

  // A detached JWS over the document's canonical form (its "signature" member left out).
  std::string sign(const boost::json::value& document);

  enum class Trust { own, operator_trusted, unknown };
  struct Verification {
    bool valid = false;
    Trust trust = Trust::unknown;
    std::string kid;
    std::string problem;  // why it is not valid (empty when valid)
  };
  // Checks `jws` against `document`; an unknown kid is reported as such (valid = false).
  Verification verify(const boost::json::value& document, std::string_view jws);

  // Keys of other publishers the operator trusts to sign mappings (seed 003 §3.3).
  // Throws std::invalid_argument naming what is wrong with the JWK.
  boost::json::object trust(const boost::json::value& jwk, std::string_view note);
  bool distrust(std::string_view kid);
  boost::json::array trusted();

 private:
  void load();
  KeyPair rotate_locked();

  store::Store& store_;
  const util::Clock& clock_;
  std::mutex mu_;
  bool loaded_ = false;
  std::vector<KeyPair> own_;  // newest first
};

}  // namespace schemagate::signing
