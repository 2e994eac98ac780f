#include "json/pointer.hpp"

#include <charconv>

namespace schemagate::json {

namespace bj = boost::json;

Pointer Pointer::parse(std::string_view text) {
  std::vector<std::string> tokens;
  if (text.empty()) return Pointer{};
  if (text[0] != '/') {
    throw PointerError("JSON Pointer \"" + std::string(text) + "\" must start with '/'");
  }
  std::string current;
  for (std::size_t i = 1; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '/') {
      tokens.push_back(std::move(current));
      current.clear();
      continue;
    }
    if (text[i] == '~') {
      const char next = i + 1 < text.size() ? text[i + 1] : '\0';
      if (next != '0' && next != '1') {
        throw PointerError("JSON Pointer \"" + std::string(text) + "\" has '~' at position " +
                           std::to_string(i) + " not followed by '0' or '1'");
      }
      current += next == '0' ? '~' : '/';
      ++i;
      continue;
    }
    current += text[i];
  }
  return Pointer{std::move(tokens)};
}

Pointer Pointer::parse_fragment(std::string_view fragment) {
  if (!fragment.empty() && fragment[0] == '#') fragment.remove_prefix(1);
  std::string decoded;
  decoded.reserve(fragment.size());
  for (std::size_t i = 0; i < fragment.size(); ++i) {
    if (fragment[i] != '%') {
      decoded += fragment[i];
      continue;
    }
    unsigned byte = 0;
    const char* first = fragment.data() + i + 1;
    if (i + 2 >= fragment.size() || std::from_chars(first, first + 2, byte, 16).ptr != first + 2) {
      throw PointerError("URI fragment \"#" + std::string(fragment) +
                         "\" has an invalid percent escape at position " + std::to_string(i + 1));
    }
    decoded += static_cast<char>(byte);
    i += 2;
  }
  return parse(decoded);
}

std::string Pointer::to_string() const {
  std::string out;
  for (const auto& t : tokens_) {
    out += '/';
    out += escape_token(t);
  }
  return out;
}

Pointer Pointer::child(std::string_view token) const {
  Pointer p = *this;
  p.tokens_.emplace_back(token);
  return p;
}

Pointer Pointer::child(std::size_t index) const {
  return child(std::to_string(index));
}

std::string escape_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

namespace {

bool array_index(const std::string& token, std::size_t& index) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return false;
  const auto res = std::from_chars(token.data(), token.data() + token.size(), index);
  return res.ec == std::errc{} && res.ptr == token.data() + token.size();
}

}  // namespace

const bj::value* resolve(const bj::value& root, const Pointer& ptr) {
  const bj::value* cur = &root;
  for (const auto& token : ptr.tokens()) {
    if (const auto* obj = cur->if_object()) {
      cur = obj->if_contains(token);
    } else if (const auto* arr = cur->if_array()) {
      std::size_t i = 0;
      cur = array_index(token, i) && i < arr->size() ? &(*arr)[i] : nullptr;
    } else {
      return nullptr;
    }
    if (!cur) return nullptr;
  }
  return cur;
}

bj::value* resolve(bj::value& root, const Pointer& ptr) {
  return const_cast<bj::value*>(resolve(static_cast<const bj::value&>(root), ptr));
}

}  // namespace schemagate::json
