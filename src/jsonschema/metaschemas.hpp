#pragma once

#include <span>
#include <string_view>

namespace schemagate::jsonschema {

struct EmbeddedDocument {
  std::string_view name;  // draft7, draft2019-09, draft2020-12, vocabularies (URI -> schema map)
  std::string_view json;
};

// The official metaschemas of the three dialects and their vocabulary metaschemas, compiled into
// the binary (generated from Debian's python3-jsonschema at build time).
std::span<const EmbeddedDocument> embedded_metaschemas();

}  // namespace schemagate::jsonschema
