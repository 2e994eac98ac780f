#pragma once

#include "util/embedded.hpp"

#include <span>

namespace schemagate::jsonschema {

// The official metaschemas of the three dialects and their vocabulary metaschemas, compiled into
// the binary from Debian's python3-jsonschema: draft7, draft2019-09, draft2020-12, and
// vocabularies (a map of URI to schema).
std::span<const util::EmbeddedFile> embedded_metaschemas();

}  // namespace schemagate::jsonschema
