#include "sdk/payload_builder.hpp"

#include "llm/chat_model.hpp"
#include "util/clock.hpp"
#include "util/text.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>
#include <regex>
#include <set>

namespace schemagate::sdk {

namespace bj = boost::json;

namespace {

// Words that carry no value in a request: util's function words, and the verbs people wrap
// an edit in ("add a filter", "apply", "use").
bool filler(const std::string& w) {
  return util::is_function_word(w) || w == "add" || w == "apply" || w == "use" || w == "set" ||
         w == "look";
}

const char* kWeekdays[] = {"sunday",   "monday", "tuesday", "wednesday",
                           "thursday", "friday", "saturday"};

struct Token {
  std::string text;  // as written
  std::string lower;
  std::size_t clause = 0;
  bool used = false;
};

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<Token> tokenize(const std::string& text) {
  std::vector<Token> out;
  std::size_t clause = 0;
  std::string word;
  const auto flush = [&] {
    if (word.empty()) return;
    const std::string l = lower(word);
    if (l == "and" || l == "also" || l == "then") ++clause;  // a new wish starts
    out.push_back({word, l, clause, false});
    word.clear();
  };
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '\'') {
      word += c;
    } else {
      flush();
      if (c == ',' || c == '.' || c == ';' || c == '!' || c == '?' || c == ':') ++clause;
    }
  }
  flush();
  return out;
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& t : tokenize(text))
    out.push_back(t.lower);
  return out;
}

// Same word, a plural, or the same stem ("blurry" and "blur", "whiten" and "whitening").
bool alike(std::string a, std::string b) {
  if (a == b) return true;
  const auto singular = [](std::string& w) {
    if (w.size() > 3 && w.back() == 's') w.pop_back();
  };
  singular(a);
  singular(b);
  if (a == b) return true;
  std::size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common])
    ++common;
  return common >= 4 && common + 3 >= std::max(a.size(), b.size());
}

std::optional<int> number_word(const std::string& w) {
  static const char* kNumbers[] = {"zero", "one",   "two",   "three", "four", "five",
                                   "six",  "seven", "eight", "nine",  "ten"};
  for (int i = 0; i <= 10; ++i) {
    if (w == kNumbers[i]) return i;
  }
  if (!w.empty() &&
      std::all_of(w.begin(), w.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
      w.size() < 9) {
    return std::stoi(w);
  }
  return std::nullopt;
}

std::string add_days(const std::string& day, int days) {
  const auto ms = util::parse_rfc3339_ms(day + "T00:00:00Z");
  if (!ms) return day;
  const std::int64_t t = *ms / 1000 + static_cast<std::int64_t>(days) * 86400;
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

int weekday_of(const std::string& day) {
  const auto ms = util::parse_rfc3339_ms(day + "T00:00:00Z");
  const std::time_t tt = static_cast<std::time_t>(ms ? *ms / 1000 : 0);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  return tm.tm_wday;
}

}  // namespace

PayloadBuilder::PayloadBuilder(const bj::object& negotiated, std::string today)
    : today_(std::move(today)) {
  if (const auto* s = negotiated.if_contains("scenario"); s && s->is_string()) {
    std::string name(s->get_string());
    std::replace(name.begin(), name.end(), '_', ' ');
    scenario_words_ = words_of(name);
  }
  static const std::regex kExample(
      R"('([^']+)'\s*->\s*('([^']*)'|true|false|-?[0-9]+(\.[0-9]+)?))");
  for (const auto& kv : negotiated.at("keys").as_array()) {
    const auto& o = kv.as_object();
    Key k;
    k.name = o.at("key_name").as_string();
    k.type = o.at("key_type").as_string();
    if (const auto* d = o.if_contains("semantic_description"); d && d->is_string()) {
      k.description = d->get_string();
    }
    if (const auto* f = o.if_contains("format"); f && f->is_string()) k.format = f->get_string();
    if (const auto* e = o.if_contains("enum"); e && e->is_array()) {
      for (const auto& v : e->get_array()) {
        if (v.is_string()) k.enumeration.push_back(std::string(v.get_string()));
      }
    }
    if (const auto* m = o.if_contains("minimum"); m && m->is_number()) {
      k.has_min = true;
      k.min = m->to_number<double>();
    }
    if (const auto* m = o.if_contains("maximum"); m && m->is_number()) {
      k.has_max = true;
      k.max = m->to_number<double>();
    }
    if (const auto* d = o.if_contains("default_value")) k.default_value = *d;
    // "Range: 0-10" in the description bounds an integer too.
    static const std::regex kRange(R"(Range:\s*(-?[0-9]+)\s*-\s*(-?[0-9]+))");
    std::smatch m;
    if (!k.has_max && std::regex_search(k.description, m, kRange)) {
      k.has_min = k.has_max = true;
      k.min = std::stod(m[1]);
      k.max = std::stod(m[2]);
    }
    for (std::sregex_iterator it(k.description.begin(), k.description.end(), kExample), end;
         it != end; ++it) {
      const auto& g = *it;
      Example ex;
      ex.words = words_of(g[1]);
      const std::string v = g[2];
      if (g[3].matched) {
        ex.value = bj::string(g[3].str());
      } else if (v == "true" || v == "false") {
        ex.value = v == "true";
      } else if (v.find('.') != std::string::npos) {
        ex.value = std::stod(v);
      } else {
        ex.value = static_cast<std::int64_t>(std::stoll(v));
      }
      k.examples.push_back(std::move(ex));
    }
    keys_.push_back(std::move(k));
  }
}

BuiltPayload PayloadBuilder::build(const std::string& utterance) const {
  auto tokens = tokenize(utterance);
  std::map<std::string, bj::value> set;
  BuiltPayload out;
  const auto decide = [&](const Key& k, bj::value v, const std::string& from) {
    set[k.name] = v;
    out.trace.push_back(bj::object{{"key", k.name}, {"from", from}, {"value", std::move(v)}});
  };
  const auto span = [&](std::size_t a, std::size_t b) {
    std::string s;
    for (std::size_t i = a; i < b && i < tokens.size(); ++i)
      s += (s.empty() ? "" : " ") + tokens[i].text;
    return s;
  };

  // 1. Dates, against the reference day.
  for (const auto& k : keys_) {
    if (k.format != "date" && k.name.find("date") == std::string::npos) continue;
    for (std::size_t i = 0; i < tokens.size() && !set.contains(k.name); ++i) {
      const auto& w = tokens[i].lower;
      std::optional<std::string> day;
      std::size_t len = 1;
      if (w == "today") day = today_;
      if (w == "tomorrow") day = add_days(today_, 1);
      if (std::regex_match(w, std::regex(R"([0-9]{4}-[0-9]{2}-[0-9]{2})"))) day = w;
      for (int d = 0; d < 7 && !day; ++d) {
        std::size_t at = i;
        if ((w == "next" || w == "this" || w == "on") && i + 1 < tokens.size()) at = i + 1;
        if (tokens[at].lower != kWeekdays[d]) continue;
        int ahead = (d - weekday_of(today_) + 7) % 7;
        if (ahead == 0) ahead = 7;  // "next Monday" said on a Monday is a week away
        day = add_days(today_, ahead);
        len = at - i + 1;
      }
      if (w == "in" && i + 2 < tokens.size() && number_word(tokens[i + 1].lower) &&
          alike(tokens[i + 2].lower, "days")) {
        day = add_days(today_, *number_word(tokens[i + 1].lower));
        len = 3;
      }
      if (!day) continue;
      for (std::size_t j = i; j < i + len; ++j)
        tokens[j].used = true;
      decide(k, bj::string(*day), span(i, i + len));
    }
  }
  // 2. "from X" / "to X": the example's pattern with the slot filled from the request.
  for (const auto& k : keys_) {
    for (const auto& ex : k.examples) {
      static const std::set<std::string> kPrepositions{"from", "to",   "at",  "in",   "on",
                                                       "for",  "with", "via", "into", "near"};
      if (set.contains(k.name) || ex.words.size() != 2 || !ex.value.is_string() ||
          !kPrepositions.contains(ex.words[0])) {
        continue;
      }
      for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
        if (tokens[i].used || tokens[i].lower != ex.words[0] || tokens[i + 1].used) continue;
        if (filler(tokens[i + 1].lower) && tokens[i + 1].lower != ex.words[1]) continue;
        std::size_t end = i + 2;  // "New York": capitalized words run on
        while (end < tokens.size() && !tokens[end].used &&
               std::isupper(static_cast<unsigned char>(tokens[end].text[0])) &&
               tokens[end].clause == tokens[i].clause && !set.contains(k.name)) {
          bool weekday = false;
          for (const char* d : kWeekdays)
            weekday |= tokens[end].lower == d;
          if (weekday) break;
          ++end;
        }
        const std::string slot = lower(span(i + 1, end));
        const std::string slot_text = span(i + 1, end);
        bj::value v = slot == ex.words[1] ? ex.value : bj::value(bj::string(slot_text));
        for (std::size_t j = i; j < end; ++j)
          tokens[j].used = true;
        decide(k, std::move(v), span(i, end));
        break;
      }
    }
  }
  // 3. Enumerations: a value named in the request, with the words that go with it.
  for (const auto& k : keys_) {
    if (k.enumeration.empty() || set.contains(k.name)) continue;
    for (std::size_t i = 0; i < tokens.size() && !set.contains(k.name); ++i) {
      for (const auto& value : k.enumeration) {
        auto parts = words_of(std::regex_replace(value, std::regex("_"), " "));
        if (parts.empty() || i + parts.size() > tokens.size()) continue;
        bool match = true;
        for (std::size_t p = 0; p < parts.size(); ++p)
          match &= !tokens[i + p].used && tokens[i + p].lower == parts[p];
        if (!match || value == "none") continue;
        std::size_t end = i + parts.size();
        // "business class", "vintage filter": a word of the key's name or example goes too.
        std::set<std::string> companions;
        for (const auto& w : words_of(std::regex_replace(k.name, std::regex("_"), " ")))
          companions.insert(w);
        for (const auto& ex : k.examples)
          for (const auto& w : ex.words)
            companions.insert(w);
        if (end < tokens.size() && companions.contains(tokens[end].lower)) ++end;
        for (std::size_t j = i; j < end; ++j)
          tokens[j].used = true;
        decide(k, bj::string(value), span(i, end));
        break;
      }
    }
  }
  // 4. Counts: a number before a word the key's examples use ("two people").
  for (const auto& k : keys_) {
    if ((k.type != "integer" && k.type != "number") || set.contains(k.name)) continue;
    std::set<std::string> nouns;
    for (const auto& ex : k.examples)
      for (const auto& w : ex.words)
        if (!number_word(w)) nouns.insert(w);
    for (const auto& w : words_of(std::regex_replace(k.name, std::regex("_"), " ")))
      nouns.insert(w);
    for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
      const auto n = number_word(tokens[i].lower);
      if (!n || tokens[i].used) continue;
      if (std::none_of(nouns.begin(), nouns.end(),
                       [&](const std::string& w) { return alike(w, tokens[i + 1].lower); })) {
        continue;
      }
      tokens[i].used = tokens[i + 1].used = true;
      decide(k, static_cast<std::int64_t>(*n), span(i, i + 2));
      break;
    }
  }
  // 5. What is left, clause by clause: the key whose name or examples share the most words,
  // or `other` (by its examples, else as the words themselves).
  std::map<std::size_t, std::vector<std::size_t>> clauses;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].used || filler(tokens[i].lower)) continue;
    if (std::any_of(scenario_words_.begin(), scenario_words_.end(),
                    [&](const std::string& w) { return alike(w, tokens[i].lower); })) {
      continue;  // the request itself ("book a flight", "retouch this photo")
    }
    clauses[tokens[i].clause].push_back(i);
  }
  std::vector<std::string> other;
  // Not a structured binding: Clang before 16 cannot capture one in the lambda below.
  for (const auto& clause_entry : clauses) {
    const auto& idx = clause_entry.second;
    const auto score = [&](const std::vector<std::string>& words) {
      std::size_t s = 0;
      for (const auto i : idx) {
        s += std::any_of(words.begin(), words.end(), [&](const std::string& w) {
          return !filler(w) && alike(w, tokens[i].lower);
        });
      }
      return s;
    };
    const Key* best = nullptr;
    const Example* best_example = nullptr;
    std::size_t best_score = 0;
    for (const auto& k : keys_) {
      if (set.contains(k.name) && k.name != "other") continue;
      std::vector<std::string> words;
      if (k.name != "other") words = words_of(std::regex_replace(k.name, std::regex("_"), " "));
      for (const auto& ex : k.examples) {
        std::vector<std::string> all = words;
        all.insert(all.end(), ex.words.begin(), ex.words.end());
        if (const auto s = score(all); s > best_score) {
          best_score = s;
          best = &k;
          best_example = &ex;
        }
      }
      if (const auto s = score(words); s > best_score && k.name != "other") {
        best_score = s;
        best = &k;
        best_example = nullptr;
      }
    }
    std::string said;
    for (const auto i : idx)
      said += (said.empty() ? "" : " ") + tokens[i].text;
    if (best && best->name != "other") {
      bj::value v;
      if (best->type == "boolean") {
        v = true;
      } else if ((best->type == "integer" || best->type == "number") && best->has_max) {
        // An intensity without a number: light, strong, or a clear middle (70% of the range).
        double share = 0.7;
        for (const auto i : idx) {
          const auto& w = tokens[i].lower;
          if (w == "light" || w == "slight" || w == "slightly" || w == "little" || w == "bit")
            share = 0.3;
          if (w == "strong" || w == "heavy" || w == "maximum" || w == "max" || w == "lot")
            share = 1.0;
        }
        const double value = best->min + share * (best->max - best->min);
        v = static_cast<std::int64_t>(std::lround(value));
      } else if (best_example) {
        v = best_example->value;
      } else {
        v = bj::string(said);
      }
      decide(*best, std::move(v), said);
    } else if (best && best_example && best_example->value.is_string()) {
      other.push_back(std::string(best_example->value.get_string()));
      out.trace.push_back(
          bj::object{{"key", "other"}, {"from", said}, {"value", best_example->value}});
    } else {
      other.push_back(said);
      out.trace.push_back(bj::object{{"key", "other"}, {"from", said}, {"value", said}});
    }
  }
  // 6. The payload in template order, defaults filled as the server would.
  for (const auto& k : keys_) {
    if (k.name == "other") continue;
    if (const auto it = set.find(k.name); it != set.end()) {
      out.payload[k.name] = it->second;
    } else if (!k.default_value.is_null()) {
      out.payload[k.name] = k.default_value;
    }
  }
  if (!other.empty()) {
    std::string text;
    for (const auto& o : other)
      text += (text.empty() ? "" : "; ") + o;
    out.payload["other"] = text;
  }
  return out;
}

BuiltPayload build_with_model(llm::ChatModel& model, const bj::object& negotiated,
                              const bj::object& payload_schema, const std::string& utterance,
                              const std::string& today) {
  std::string keys;
  for (const auto& k : negotiated.at("keys").as_array()) {
    keys +=
        "- " + std::string(k.at("key_name").as_string()) + " (" +
        std::string(k.at("key_type").as_string()) + "): " +
        (k.as_object().contains("semantic_description") && k.at("semantic_description").is_string()
             ? std::string(k.at("semantic_description").as_string())
             : std::string()) +
        "\n";
  }
  bj::object schema = payload_schema;
  schema.erase("$schema");
  schema.erase("$id");
  const auto answer = model.complete_json(
      "You turn a person's request into a key-value payload for the template below. Use only "
      "its keys, follow each description and its example mappings, resolve relative dates "
      "against today (" +
          today +
          "), and put whatever no key can carry into \"other\" as a "
          "short phrase. Keys:\n" +
          keys,
      utterance, "payload", schema);
  BuiltPayload out;
  out.payload = answer.as_object();
  out.trace.push_back(bj::object{{"key", "*"}, {"from", utterance}, {"value", answer}});
  return out;
}

}  // namespace schemagate::sdk
