#include "util/files.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace schemagate::util {

std::string read_file(const std::string& path) {
  std::ostringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  // A regular file is read in one go into a string of its size; anything else is streamed.
  const auto size = in.tellg();
  if (size > 0) {
    std::string text(static_cast<std::size_t>(size), '\0');
    in.seekg(0);
    if (in.read(text.data(), size) && in.peek() == std::char_traits<char>::eof()) return text;
    in.clear();
  }
  in.seekg(0);
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace schemagate::util
