#pragma once

#include <string>

namespace schemagate::util {

// A random (version 4) UUID in its canonical lower-case text form.
std::string new_uuid();

}  // namespace schemagate::util
