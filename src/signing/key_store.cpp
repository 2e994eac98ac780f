#include "signing/key_store.hpp"

#include "store/store.hpp"
#include "util/clock.hpp"

#include <algorithm>
#include <stdexcept>

namespace schemagate::signing {

namespace bj = boost::json;

namespace {

constexpr std::string_view kOwnKeys = "signing_keys";      // kid -> {d, x, created_at_ms}
constexpr std::string_view kTrustedKeys = "trusted_keys";  // kid -> {jwk, note, trusted_at}

std::string bytes(const auto& array) {
  return std::string(reinterpret_cast<const char*>(array.data()), array.size());
}

}  // namespace

KeyStore::KeyStore(store::Store& store, const util::Clock& clock) : store_(store), clock_(clock) {}

void KeyStore::load() {
  if (loaded_) return;
  std::vector<std::pair<std::int64_t, KeyPair>> keys;
  store_.scan(kOwnKeys, "", [&](const store::Document& d) {
    const auto seed = base64url_decode(d.body.at("d").as_string());
    if (!seed || seed->size() != 32) {
      throw std::runtime_error("signing key " + d.key + " in the store is damaged");
    }
    std::array<std::uint8_t, 32> s{};
    std::copy(seed->begin(), seed->end(), s.begin());
    keys.emplace_back(d.body.at("created_at_ms").as_int64(), KeyPair::from_seed(s));
  });
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  own_.clear();
  for (auto& [at, key] : keys)
    own_.push_back(std::move(key));
  loaded_ = true;
}

KeyPair KeyStore::active() {
  std::lock_guard lock(mu_);
  load();
  if (!own_.empty()) return own_.front();
  return rotate_locked();
}

KeyPair KeyStore::rotate() {
  std::lock_guard lock(mu_);
  load();
  return rotate_locked();
}

KeyPair KeyStore::rotate_locked() {
  KeyPair key = KeyPair::generate();
  // Strictly newer than every key already there, even when the clock stands still (tests).
  std::int64_t at = clock_.now_unix_ms();
  if (const auto newest = own_.empty() ? std::nullopt : store_.get(kOwnKeys, own_.front().kid)) {
    at = std::max(at, newest->body.at("created_at_ms").as_int64() + 1);
  }
  store_.put(
      std::string(kOwnKeys), key.kid,
      bj::object{{"d", base64url_encode(bytes(key.seed))},
                 {"x", base64url_encode(bytes(key.public_key))},
                 {"created_at_ms", at},
                 {"created_at",
                  util::format_rfc3339(util::Clock::time_point(std::chrono::milliseconds(at)))}},
      0);
  own_.insert(own_.begin(), key);
  return key;
}

bj::object KeyStore::jwks() {
  active();
  std::lock_guard lock(mu_);
  bj::array keys;
  for (const auto& k : own_)
    keys.push_back(public_jwk(k.public_key));
  return bj::object{{"keys", std::move(keys)}};
}

std::string KeyStore::sign(const bj::value& document) {
  return sign_document(active(), document);
}

KeyStore::Verification KeyStore::verify(const bj::value& document, std::string_view jws) {
  Verification v;
  std::string problem;
  const auto parts = parse_jws(jws, signed_content(document), problem);
  if (!parts) {
    v.problem = problem;
    return v;
  }
  const auto* kid = parts->header.if_contains("kid");
  if (!kid || !kid->is_string()) {
    v.problem = "the signature's header names no key (kid)";
    return v;
  }
  v.kid = kid->get_string();
  std::optional<std::array<std::uint8_t, 32>> key;
  {
    std::lock_guard lock(mu_);
    load();
    for (const auto& k : own_) {
      if (k.kid == v.kid) {
        key = k.public_key;
        v.trust = Trust::own;
      }
    }
  }
  if (!key) {
    if (const auto t = store_.get(kTrustedKeys, v.kid)) {
      std::string ignored;
      key = public_key_of(t->body.at("jwk"), ignored);
      v.trust = Trust::operator_trusted;
    }
  }
  if (!key) {
    v.problem = "the signing key " + v.kid +
                " is neither this server's nor one its operator trusts (PUT /signing/trusted-keys)";
    return v;
  }
  v.valid = verify_signature(*key, parts->signing_input, parts->signature);
  if (!v.valid) v.problem = "the signature does not match the document (it was changed or forged)";
  return v;
}

bj::object KeyStore::trust(const bj::value& jwk, std::string_view note) {
  std::string problem;
  const auto key = public_key_of(jwk, problem);
  if (!key) throw std::invalid_argument(problem);
  if (const auto* d = jwk.as_object().if_contains("d")) {
    (void)d;
    throw std::invalid_argument("send the public key only: the JWK must not contain \"d\"");
  }
  bj::object entry{{"kid", thumbprint(*key)},
                   {"jwk", public_jwk(*key)},
                   {"note", note},
                   {"trusted_at", util::format_rfc3339(clock_.now())}};
  store_.put(std::string(kTrustedKeys), thumbprint(*key), entry);
  return entry;
}

bool KeyStore::distrust(std::string_view kid) {
  return store_.remove(std::string(kTrustedKeys), std::string(kid));
}

bj::array KeyStore::trusted() {
  bj::array out;
  store_.scan(kTrustedKeys, "", [&](const store::Document& d) { out.push_back(d.body); });
  return out;
}

}  // namespace schemagate::signing
