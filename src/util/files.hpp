#pragma once

#include <string>

namespace schemagate::util {

// The whole file as bytes; "-" reads standard input. Throws std::runtime_error naming the path
// and the system's reason.
std::string read_file(const std::string& path);

}  // namespace schemagate::util
