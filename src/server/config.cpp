#include "server/config.hpp"

#include <charconv>
#include <stdexcept>

namespace schemagate::server {

void apply_listen_address(const std::string& text, http::ServerOptions& options) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) {
    throw std::invalid_argument("listen address '" + text + "' must be HOST:PORT");
  }
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  unsigned port = 0;
  const auto res = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || res.ec != std::errc{} ||
      res.ptr != port_text.data() + port_text.size() || port > 65535) {
    throw std::invalid_argument("listen address '" + text + "' has an invalid port '" + port_text +
                                "' (0-65535)");
  }
  options.host = std::move(host);
  options.port = static_cast<unsigned short>(port);
}

}  // namespace schemagate::server
