#include "evolution/inducer.hpp"

#include "json/parse.hpp"
#include "llm/chat_model.hpp"
#include "util/text.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace schemagate::evolution {

namespace bj = boost::json;

namespace {

const std::set<std::string> kSecurityWords{
    "payment", "pay",     "card",     "credit",     "debit", "iban",       "bank",     "account",
    "cvv",     "billing", "passport", "identity",   "ssn",   "social",     "password", "login",
    "token",   "secret",  "access",   "permission", "admin", "credential", "pin",      "wallet"};

bool is_number(const std::string& w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
  });
}

std::vector<std::string> content_words(const std::string& text) {
  std::vector<std::string> out;
  for (auto& w : util::split_words(text)) {
    if (!util::is_function_word(w)) out.push_back(std::move(w));
  }
  return out;
}

std::string snake(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (w.empty() || is_number(w)) continue;
    out += (out.empty() ? "" : "_") + w;
  }
  return out.substr(0, 64);
}

}  // namespace

std::string content_text(const std::string& fragment) {
  std::string out;
  for (const auto& w : content_words(fragment))
    out += (out.empty() ? "" : " ") + w;
  return out;
}

bool security_relevant(const std::string& text) {
  for (const auto& w : util::split_words(text)) {
    if (kSecurityWords.contains(w)) return true;
  }
  return false;
}

bj::object CandidateKey::to_key() const {
  bj::object k{{"key_name", key_name},
               {"key_type", key_type},
               {"required", false},
               {"default_value", nullptr},
               {"semantic_description", semantic_description}};
  if (!values.empty()) {
    bj::array e;
    for (const auto& v : values)
      e.push_back(bj::string(v));
    k["enum"] = std::move(e);
  }
  if (key_type == "integer" || key_type == "number") k["minimum"] = 0;
  return k;
}

std::optional<bj::value> value_in(const CandidateKey& key, const std::string& fragment) {
  const auto words = util::split_words(fragment);
  if (key.key_type == "boolean") return bj::value(true);
  if (key.key_type == "integer" || key.key_type == "number") {
    // A number followed by the unit ("2 bags"; "bag" and "bags" alike).
    const std::string stem = key.unit.substr(0, std::max<std::size_t>(3, key.unit.size() - 1));
    for (std::size_t i = 0; i + 1 < words.size(); ++i) {
      if (!is_number(words[i]) || !words[i + 1].starts_with(stem)) continue;
      const double v = std::stod(words[i]);
      if (key.key_type == "integer") return bj::value(static_cast<std::int64_t>(v));
      return bj::value(v);
    }
    return std::nullopt;
  }
  for (const auto& v : key.values) {
    if (std::find(words.begin(), words.end(), v) != words.end()) return bj::value(v);
  }
  return std::nullopt;
}

std::optional<CandidateKey> induce_key(const std::vector<std::string>& fragments) {
  if (fragments.empty()) return std::nullopt;
  // Document frequency of each content word across the fragments.
  std::map<std::string, std::size_t> df;
  std::vector<std::vector<std::string>> tokens;
  for (const auto& f : fragments) {
    tokens.push_back(content_words(f));
    std::set<std::string> seen(tokens.back().begin(), tokens.back().end());
    for (const auto& w : seen)
      ++df[w];
  }
  const std::size_t n = fragments.size();
  // The subject: the most shared word (not a number), in at least half the fragments.
  std::string head;
  std::size_t best = 0;
  for (const auto& [w, count] : df) {
    if (is_number(w)) continue;
    if (count > best) {
      best = count;
      head = w;
    }
  }
  if (head.empty() || best * 2 < n) return std::nullopt;

  CandidateKey key;
  key.security_relevant = std::any_of(fragments.begin(), fragments.end(),
                                      [](const std::string& f) { return security_relevant(f); });

  // Numbers next to the subject: a count or an amount in that unit.
  std::size_t numeric = 0;
  bool fractional = false;
  for (const auto& t : tokens) {
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      if (is_number(t[i]) && t[i + 1] == head) {
        ++numeric;
        fractional |= t[i].find('.') != std::string::npos;
        break;
      }
    }
  }
  if (numeric * 2 >= n) {
    key.key_type = fractional ? "number" : "integer";
    key.unit = head;
    key.key_name = head + (fractional ? "" : "_count");
    key.semantic_description = "How many " + head + " the request asks for, as a number.";
  } else {
    // Words that sit next to the subject and vary across fragments: an enumeration.
    std::map<std::string, std::size_t> modifiers;
    for (const auto& t : tokens) {
      for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i] != head) continue;
        if (i > 0 && !is_number(t[i - 1]) && df[t[i - 1]] < n) ++modifiers[t[i - 1]];
      }
    }
    std::vector<std::string> values;
    for (const auto& [w, c] : modifiers) {
      if (c >= 1) values.push_back(w);
    }
    if (values.size() >= 2) {
      key.key_type = "string";
      key.values = values;
      key.key_name = head + "_preference";
      std::string list;
      for (const auto& v : values)
        list += (list.empty() ? "" : ", ") + v;
      key.semantic_description = "Preferred " + head + ": one of " + list + ".";
    } else {
      // A phrase every fragment shares: a yes/no wish ("extra legroom").
      std::vector<std::string> phrase;
      const auto& first = tokens.front();
      for (const auto& w : first) {
        if (df[w] * 2 >= n && !is_number(w)) phrase.push_back(w);
      }
      if (phrase.empty()) phrase.push_back(head);
      if (phrase.size() > 3) phrase.resize(3);
      key.key_type = "boolean";
      key.key_name = snake(phrase);
      key.semantic_description = "Whether the request asks for ";
      for (std::size_t i = 0; i < phrase.size(); ++i)
        key.semantic_description += (i ? " " : "") + phrase[i];
      key.semantic_description += ".";
    }
  }
  if (key.key_name.empty() || !std::isalpha(static_cast<unsigned char>(key.key_name[0]))) {
    return std::nullopt;
  }
  // Mapping examples from real fragments (seed 000 §6.2.2 asks for them).
  std::set<std::string> quoted;
  for (const auto& f : fragments) {
    if (key.examples.size() >= 3) break;
    if (quoted.contains(f)) continue;
    if (const auto v = value_in(key, f)) {
      key.examples.emplace_back(f, *v);
      quoted.insert(f);
    }
  }
  if (!key.examples.empty()) {
    key.semantic_description += " Examples:";
    for (const auto& [f, v] : key.examples) {
      key.semantic_description +=
          " '" + f + "' -> " +
          (v.is_string() ? "'" + std::string(v.get_string()) + "'" : bj::serialize(v)) + ";";
    }
    key.semantic_description.pop_back();
    key.semantic_description += ".";
  }
  return key;
}

std::optional<CandidateKey> induce_key(llm::ChatModel& model,
                                       const std::vector<std::string>& fragments) {
  static const bj::value schema = json::parse(R"({
    "type": "object", "additionalProperties": false,
    "required": ["key_name", "key_type", "values", "semantic_description", "examples"],
    "properties": {
      "key_name": {"type": "string", "pattern": "^[a-z][a-z0-9]*(_[a-z0-9]+)*$", "maxLength": 64},
      "key_type": {"enum": ["string", "integer", "number", "boolean"]},
      "values": {"type": "array", "items": {"type": "string"}, "maxItems": 20},
      "semantic_description": {"type": "string", "minLength": 1, "maxLength": 1000},
      "examples": {"type": "array", "maxItems": 5, "items": {
        "type": "object", "additionalProperties": false, "required": ["fragment", "value"],
        "properties": {"fragment": {"type": "string"},
                       "value": {"type": ["string", "number", "boolean"]}}}}}})");
  std::string user = "Fragments users wrote because no key of the template could carry them:\n";
  for (const auto& f : fragments)
    user += "- " + f + "\n";
  const auto answer = model.complete_json(
      "You design one optional key for a key-value request template. Summarise what the "
      "fragments ask for as one key: a snake_case key_name, its key_type, the values when it is "
      "an enumeration (else []), a one-sentence semantic_description, and up to three examples "
      "mapping a fragment from the list to its value.",
      user, "candidate_key", schema);
  CandidateKey key;
  key.key_name = answer.at("key_name").as_string();
  key.key_type = answer.at("key_type").as_string();
  for (const auto& v : answer.at("values").as_array())
    key.values.push_back(std::string(v.as_string()));
  if (key.key_type != "string") key.values.clear();
  key.semantic_description = answer.at("semantic_description").as_string();
  std::string examples;
  for (const auto& e : answer.at("examples").as_array()) {
    const std::string fragment(e.at("fragment").as_string());
    // Examples must come from real fragments (§6.2.2), whatever the model says.
    if (std::find(fragments.begin(), fragments.end(), fragment) == fragments.end()) continue;
    key.examples.emplace_back(fragment, e.at("value"));
    const auto& v = e.at("value");
    examples += " '" + fragment + "' -> " +
                (v.is_string() ? "'" + std::string(v.get_string()) + "'" : bj::serialize(v)) + ";";
  }
  if (!examples.empty()) {
    examples.pop_back();
    key.semantic_description += " Examples:" + examples + ".";
  }
  key.security_relevant = security_relevant(key.key_name + " " + key.semantic_description) ||
                          std::any_of(fragments.begin(), fragments.end(),
                                      [](const std::string& f) { return security_relevant(f); });
  return key;
}

}  // namespace schemagate::evolution
