#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <vector>

namespace schemagate::llm {
class ChatModel;
}

namespace schemagate::evolution {

// A key proposed for a template from a cluster of `other` fragments (seed 000 §6.2.2 intent
// induction): name, type, default and a description with mapping examples from real fragments.
struct CandidateKey {
  std::string key_name;
  std::string key_type;             // string, integer, number, boolean
  std::vector<std::string> values;  // the enumeration seen (string keys)
  std::string unit;                 // numbers: the unit the fragments used
  std::string semantic_description;
  // The fragment -> value pairs the description quotes.
  std::vector<std::pair<std::string, boost::json::value>> examples;
  bool security_relevant = false;  // payment, identity, access: an admin must approve (§7)

  // The patch's new_keys entry (required false, experimental).
  boost::json::object to_key() const;
};

// The offline inducer: the word the fragments share is the subject; words that vary next to it
// become an enumeration ("window seat", "aisle seat" -> seat_preference: window | aisle);
// numbers with a unit become a number key ("2 bags" -> bags_count); a shared phrase with nothing
// varying becomes a boolean ("extra legroom" -> extra_legroom). nullopt when the fragments share
// nothing to build a key on.
std::optional<CandidateKey> induce_key(const std::vector<std::string>& fragments);

// Intent induction by a chat model (seed 000 §6.2.2): the fragments in, a key out, through a
// JSON-schema-constrained answer that is validated (and asked again once). Whether the key is
// security-relevant is decided here, by rule, never by the model. Throws llm::ChatError.
std::optional<CandidateKey> induce_key(llm::ChatModel& model,
                                       const std::vector<std::string>& fragments);

// The value a fragment gives `key` (for the examples, and to judge values clients send).
std::optional<boost::json::value> value_in(const CandidateKey& key, const std::string& fragment);

// The fragment's content words (stopwords and courtesy left out), lower-cased: what the pool
// embeds, so that "window seat please" and "a window seat" mean the same.
std::string content_text(const std::string& fragment);

// Names and words that touch payment, identity or access control.
bool security_relevant(const std::string& text);

}  // namespace schemagate::evolution
