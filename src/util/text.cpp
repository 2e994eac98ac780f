#include "util/text.hpp"

#include <unordered_set>

#include <algorithm>
#include <array>
#include <cctype>

namespace schemagate::util {

std::vector<std::string> split_words(std::string_view text) {
  // ASCII classes by hand: every card's text passes through here at start, and the C library's
  // are a call per character (the locale's rules give the same answers for ASCII).
  const auto upper = [](unsigned char c) { return c >= 'A' && c <= 'Z'; };
  const auto lower = [](unsigned char c) { return c >= 'a' && c <= 'z'; };
  const auto digit = [](unsigned char c) { return c >= '0' && c <= '9'; };
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto first = static_cast<unsigned char>(text[i]);
    if (first < 0x80 && !upper(first) && !lower(first) && !digit(first)) {
      ++i;
      continue;
    }
    // One word: up to a separator, or to an upper-case letter after a lower-case one.
    std::string word;
    for (; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x80 || lower(c) || digit(c)) {
        word += static_cast<char>(c);
      } else if (upper(c)) {
        if (!word.empty() && lower(static_cast<unsigned char>(text[i - 1]))) break;
        word += static_cast<char>(c - 'A' + 'a');
      } else {
        break;
      }
    }
    out.push_back(std::move(word));
  }
  return out;
}

namespace {
constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string encode_base64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const auto n = (static_cast<unsigned char>(bytes[i]) << 16) |
                   (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                   static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (const auto rest = bytes.size() - i; rest > 0) {
    auto n = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool decode_base64(std::string_view text, std::string& bytes) {
  static const auto table = [] {
    std::array<int, 256> t{};
    t.fill(-1);
    for (std::size_t i = 0; i < kAlphabet.size(); ++i)
      t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int>(i);
    return t;
  }();
  bytes.clear();
  if (text.size() % 4 != 0) return false;
  bytes.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + static_cast<std::size_t>(k)];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return false;  // data after padding
      v[k] = table[static_cast<unsigned char>(c)];
      if (v[k] < 0) return false;
    }
    const auto n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    bytes += static_cast<char>((n >> 16) & 255);
    if (pad < 2) bytes += static_cast<char>((n >> 8) & 255);
    if (pad < 1) bytes += static_cast<char>(n & 255);
  }
  return true;
}

namespace {

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::size_t char_count(std::string_view utf8) {
  std::size_t n = 0;
  for (const char c : utf8)
    n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

MediaType parse_media_type(std::string_view text) {
  MediaType out;
  const auto semi = text.find(';');
  out.essence = lower_ascii(trim(text.substr(0, semi)));
  std::string_view rest = semi == std::string_view::npos ? "" : text.substr(semi + 1);
  while (!rest.empty()) {
    // A quoted value may hold ';'.
    const auto eq = rest.find('=');
    if (eq == std::string_view::npos) break;
    const std::string name = lower_ascii(trim(rest.substr(0, eq)));
    std::string_view after = trim(rest.substr(eq + 1));
    std::string value;
    if (!after.empty() && after.front() == '"') {
      std::size_t i = 1;
      for (; i < after.size() && after[i] != '"'; ++i) {
        if (after[i] == '\\' && i + 1 < after.size()) ++i;
        value += after[i];
      }
      after.remove_prefix(std::min(after.size(), i + 1));
      const auto next = after.find(';');
      rest = next == std::string_view::npos ? "" : after.substr(next + 1);
    } else {
      const auto next = after.find(';');
      value = std::string(trim(after.substr(0, next)));
      rest = next == std::string_view::npos ? "" : after.substr(next + 1);
    }
    if (name == "schema") out.schema = value;
  }
  return out;
}

bool is_function_word(std::string_view word) {
  static const std::unordered_set<std::string_view> words{
      "a",      "an",    "the",    "and",    "or",   "but",   "if",       "of",     "to",
      "in",     "on",    "at",     "for",    "with", "by",    "from",     "as",     "is",
      "are",    "be",    "am",     "was",    "were", "been",  "being",    "i",      "me",
      "my",     "we",    "our",    "us",     "you",  "your",  "it",       "its",    "this",
      "that",   "these", "those",  "please", "want", "would", "like",     "need",   "prefer",
      "can",    "could", "should", "will",   "do",   "does",  "some",     "any",    "very",
      "much",   "more",  "most",   "also",   "just", "only",  "possible", "thanks", "thank",
      "kindly", "get",   "have",   "has",    "had",  "give",  "make",     "let",    "put",
      "so",     "too",   "all",    "than",   "then", "there", "here",     "when",   "where",
      "which",  "who",   "what",   "how",    "up",   "out",   "about",    "into",   "over",
      "again",  "s",     "t",      "d",      "ll",   "m"};
  return words.contains(word);
}

}  // namespace schemagate::util
