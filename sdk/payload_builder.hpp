#pragma once

// Seed 000 §6.1 on the client side: a natural-language request turned into a payload for a
// negotiated template. This is the offline, rule-based builder: it reads the template's types,
// enumerations, ranges, formats and the example mappings in the semantic descriptions
// ("Example mapping: 'from Beijing' -> 'PEK'"), resolves relative dates against a reference day,
// and puts what it cannot map into `other`.

#include <boost/json/value.hpp>

#include <string>
#include <vector>

namespace schemagate::llm {
class ChatModel;
}

namespace schemagate::sdk {

struct BuiltPayload {
  boost::json::object payload;
  // Which words went where: {"key", "from", "value"} per decision, for a person to check.
  std::vector<boost::json::object> trace;
};

class PayloadBuilder {
 public:
  // `negotiated` is a get_schema_template answer (keys with one-language descriptions).
  // `today` is the reference day for relative dates (YYYY-MM-DD).
  PayloadBuilder(const boost::json::object& negotiated, std::string today);

  BuiltPayload build(const std::string& utterance) const;

 private:
  struct Example {
    std::vector<std::string> words;  // the phrase, lower-cased
    boost::json::value value;
  };
  struct Key {
    std::string name, type, format, description;
    std::vector<std::string> enumeration;
    bool has_min = false, has_max = false;
    double min = 0, max = 0;
    boost::json::value default_value;
    std::vector<Example> examples;
  };
  std::vector<Key> keys_;
  std::vector<std::string> scenario_words_;
  std::string today_;
};

// The same through a chat model (seed 000 §6.1 "LLM-based semantic parsing"): the template's
// keys and descriptions and the request go in; the answer is constrained by, and validated
// against, the payload's JSON Schema, and asked again once with the violations when it breaks
// it. Throws llm::ChatError.
BuiltPayload build_with_model(llm::ChatModel& model, const boost::json::object& negotiated,
                              const boost::json::object& payload_schema,
                              const std::string& utterance, const std::string& today);

}  // namespace schemagate::sdk
