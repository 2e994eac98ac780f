#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <stdexcept>
#include <string>

namespace schemagate::http {
class Client;
}

namespace schemagate::llm {

class ChatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A chat model that answers with JSON constrained by a JSON Schema (seed 000 §6.1 and §6.2.2
// use one for payload building, intent induction and alignment judging).
class ChatModel {
 public:
  virtual ~ChatModel() = default;
  virtual std::string model() const = 0;
  // The model's answer, parsed and validated against `schema`: asked once more, with the
  // violations quoted, when the first answer does not validate. Throws ChatError.
  virtual boost::json::value complete_json(const std::string& system, const std::string& user,
                                           const std::string& schema_name,
                                           const boost::json::value& schema) = 0;
};

// An OpenAI-compatible server: POST {base_url}/v1/chat/completions with response_format
// {"type": "json_schema", "json_schema": {"name", "schema", "strict": true}}.
class HttpChatModel final : public ChatModel {
 public:
  struct Options {
    std::string base_url;
    std::string model;
    std::string api_key;  // sent as a bearer token when set
    std::chrono::milliseconds timeout{30'000};
    double temperature = 0;
  };
  HttpChatModel(http::Client& client, Options options);
  std::string model() const override { return options_.model; }
  boost::json::value complete_json(const std::string& system, const std::string& user,
                                   const std::string& schema_name,
                                   const boost::json::value& schema) override;

 private:
  std::string ask(const boost::json::array& messages, const std::string& schema_name,
                  const boost::json::value& schema);
  http::Client& client_;
  Options options_;
};

}  // namespace schemagate::llm
