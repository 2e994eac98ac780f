#pragma once

// Client SDK for seed 000: negotiate a scenario's template (cached by ETag), validate payloads
// locally with the same engine as the gateway, submit, and surface update suggestions.

#include <boost/json/value.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace schemagate::sdk {

struct ClientOptions {
  std::string base_url = "http://127.0.0.1:8080";  // the schemagate server
  std::string client_id;                           // sent with payloads (personalized patches)
  std::string preferred_language;                  // for semantic descriptions
  std::chrono::milliseconds timeout{10'000};
  // Seed 003 §3.2: the template versions this client can work with. negotiate() asks for the
  // highest the server accepts; empty means the server's default version.
  std::vector<std::string> supported_versions;
  // Seed 000 §7 / seed 003 §8: every signature the server sends (templates, update
  // suggestions, negotiated versions) is checked against its JWKS; with this set, an unsigned
  // answer is refused too.
  bool require_signatures = false;
};

// A signature was missing, did not verify, or the server answered in a version other than the
// one negotiated (a downgrade).
class IntegrityError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Violation {
  std::string instance_location;
  std::string keyword_location;
  std::string message;
};

// The payload was refused before it left the client.
class LocalValidationError : public std::runtime_error {
 public:
  LocalValidationError(std::string message, std::vector<Violation> violations)
      : std::runtime_error(std::move(message)), violations_(std::move(violations)) {}
  const std::vector<Violation>& violations() const { return violations_; }

 private:
  std::vector<Violation> violations_;
};

// The server answered with an error envelope.
class ServerError : public std::runtime_error {
 public:
  ServerError(int status, std::string code, std::string message, boost::json::value details)
      : std::runtime_error(std::move(message)),
        status_(status),
        code_(std::move(code)),
        details_(std::move(details)) {}
  int status() const { return status_; }
  const std::string& code() const { return code_; }
  const boost::json::value& details() const { return details_; }

 private:
  int status_;
  std::string code_;
  boost::json::value details_;
};

class SchemaClient {
 public:
  explicit SchemaClient(ClientOptions options);
  ~SchemaClient();

  // get_schema_template (with the seed 003 handshake when supported_versions is set):
  // revalidated with If-None-Match, so an unchanged template is not downloaded again. Throws
  // IntegrityError for a template whose signature does not verify.
  const boost::json::object& negotiate(const std::string& scenario);
  // The version the last negotiate() settled on for a scenario.
  std::string negotiated_version(const std::string& scenario) const;

  // Validates against the scenario's JSON Schema (plus keys suggested by update suggestions).
  std::vector<Violation> check(const std::string& scenario, const boost::json::object& payload);

  // check(), then submit_payload. Throws LocalValidationError or ServerError.
  boost::json::object submit(const std::string& scenario, const boost::json::object& payload);

  // The schema_update_suggestion of the last result that carried one.
  const std::optional<boost::json::value>& last_update_suggestion() const;

  struct Stats {
    int template_downloads = 0;      // 200 answers
    int template_revalidations = 0;  // 304 answers
  };
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace schemagate::sdk
