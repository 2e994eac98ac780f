#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace schemagate::util {

// The words of a text, lower-cased: runs of ASCII letters and digits (bytes >= 0x80 stay inside
// words), with a camelCase boundary starting a new word ("getWeather" -> "get", "weather").
// Search and the word-vector embedder read text through this one splitter.
std::vector<std::string> split_words(std::string_view text);

// English words that carry no content of their own in a request: articles, pronouns,
// auxiliaries, prepositions, courtesy and the verbs a wish is wrapped in ("I would like"). Not
// negations: "not near the toilet" keeps its "not". Lower-case input.
bool is_function_word(std::string_view word);

// RFC 4648 base64 (with padding). decode_base64 returns false on any character outside the
// alphabet or a bad length.
std::string encode_base64(std::string_view bytes);
bool decode_base64(std::string_view text, std::string& bytes);

// How many characters (Unicode code points) a UTF-8 text holds: what every text limit counts,
// since a limit's message says "characters" (4,000 Chinese characters are 12,000 bytes).
std::size_t char_count(std::string_view utf8);

// `s` without leading and trailing ASCII whitespace.
std::string_view trim(std::string_view s);

// A media type's essence (lower-cased type/subtype) and its `schema` parameter (seed 001's
// "application/json;schema=<name>", the value quoted or not; empty when absent).
struct MediaType {
  std::string essence;
  std::string schema;
};
MediaType parse_media_type(std::string_view text);

}  // namespace schemagate::util
