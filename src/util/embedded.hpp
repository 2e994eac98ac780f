#pragma once

#include <span>
#include <string_view>

namespace schemagate::util {

// A file compiled into the binary by embed_files() (cmake/EmbedFiles.cmake).
struct EmbeddedFile {
  std::string_view name;
  std::string_view text;
};

}  // namespace schemagate::util
