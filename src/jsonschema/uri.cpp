#include "jsonschema/program.hpp"

#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

namespace schemagate::jsonschema::detail {

namespace urls = boost::urls;

std::pair<std::string, std::string> split_fragment(std::string_view uri) {
  const auto hash = uri.find('#');
  if (hash == std::string_view::npos) return {std::string(uri), {}};
  return {std::string(uri.substr(0, hash)), std::string(uri.substr(hash + 1))};
}

std::string resolve_uri(std::string_view base, std::string_view reference) {
  auto strip = [](std::string s) {
    if (!s.empty() && s.back() == '#') s.pop_back();
    return s;
  };
  const auto ref = urls::parse_uri_reference(reference);
  if (!ref) throw SchemaError("invalid URI reference \"" + std::string(reference) + "\"");
  if (ref->has_scheme()) return strip(std::string(ref->buffer()));
  const auto b = urls::parse_uri(base);
  if (!b) {
    throw SchemaError("cannot resolve \"" + std::string(reference) + "\" against base \"" +
                      std::string(base) + "\"");
  }
  // A reference that is only a fragment never changes the rest of the base, even for URNs.
  if (!reference.empty() && reference.front() == '#') {
    return strip(split_fragment(base).first + std::string(reference));
  }
  urls::url dest;
  const auto r = urls::resolve(*b, *ref, dest);
  if (!r) {
    throw SchemaError("cannot resolve \"" + std::string(reference) + "\" against base \"" +
                      std::string(base) + "\": " + r.error().message());
  }
  return strip(std::string(dest.buffer()));
}

}  // namespace schemagate::jsonschema::detail
