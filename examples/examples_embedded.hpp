#pragma once

#include "util/embedded.hpp"

#include <span>

namespace schemagate::examples {

// examples/templates/*.json, compiled in so that `schemagate demo` runs from any directory.
std::span<const util::EmbeddedFile> embedded_templates();

}  // namespace schemagate::examples
