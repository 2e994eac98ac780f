#include "server/http_agent_transport.hpp"

namespace schemagate::server {

namespace {

std::vector<http::Header> json_headers(
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<http::Header> headers{{"Content-Type", "application/json"},
                                    {"Accept", "application/json"}};
  for (const auto& [name, value] : extra)
    headers.push_back({name, value});
  return headers;
}

}  // namespace

exchange::AgentTransport::Reply HttpAgentTransport::post_json(
    const std::string& url, const std::string& body, std::chrono::milliseconds timeout,
    const std::vector<std::pair<std::string, std::string>>& extra) {
  try {
    const auto res = client_.request("POST", url, body, json_headers(extra), timeout);
    const auto type = res.header("Content-Type");
    return Reply{res.status, type ? std::string(*type) : std::string(), res.body};
  } catch (const http::ClientError& e) {
    if (e.kind() == http::ClientError::Kind::timeout) throw exchange::AgentTimeout(e.what());
    throw exchange::AgentUnreachable(e.what());
  }
}

void HttpAgentTransport::post_json_async(
    const std::string& url, const std::string& body, std::chrono::milliseconds timeout,
    const std::vector<std::pair<std::string, std::string>>& extra, ReplyCallback done) {
  if (!async_) {
    AgentTransport::post_json_async(url, body, timeout, extra, std::move(done));
    return;
  }
  async_->request(
      "POST", url, body, json_headers(extra), timeout,
      [done = std::move(done)](http::ClientResponse res, std::exception_ptr error) {
        if (error) {
          try {
            std::rethrow_exception(error);
          } catch (const http::ClientError& e) {
            if (e.kind() == http::ClientError::Kind::timeout) {
              done(Reply{}, std::make_exception_ptr(exchange::AgentTimeout(e.what())));
            } else {
              done(Reply{}, std::make_exception_ptr(exchange::AgentUnreachable(e.what())));
            }
          } catch (const std::exception& e) {
            done(Reply{}, std::make_exception_ptr(exchange::AgentUnreachable(e.what())));
          }
          return;
        }
        const auto type = res.header("Content-Type");
        done(Reply{res.status, type ? std::string(*type) : std::string(), std::move(res.body)},
             nullptr);
      });
}

namespace {

class HttpStream final : public exchange::AgentTransport::Stream {
 public:
  HttpStream(std::unique_ptr<http::ClientStream> upstream, std::chrono::milliseconds timeout)
      : upstream_(std::move(upstream)), timeout_(timeout) {
    status = upstream_->status();
    const auto type = upstream_->header("Content-Type");
    content_type = type ? std::string(*type) : std::string();
  }
  bool read(std::string& out) override {
    try {
      return upstream_->read(out, timeout_);
    } catch (const http::ClientError& e) {
      if (e.kind() == http::ClientError::Kind::timeout) throw exchange::AgentTimeout(e.what());
      throw exchange::AgentUnreachable(e.what());
    }
  }

 private:
  std::unique_ptr<http::ClientStream> upstream_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

std::unique_ptr<exchange::AgentTransport::Stream> HttpAgentTransport::post_for_stream(
    const std::string& url, const std::string& body, std::chrono::milliseconds timeout,
    const std::vector<std::pair<std::string, std::string>>& extra) {
  try {
    std::vector<http::Header> headers{{"Content-Type", "application/json"},
                                      {"Accept", "text/event-stream, application/json"}};
    for (const auto& [name, value] : extra)
      headers.push_back({name, value});
    return std::make_unique<HttpStream>(client_.open("POST", url, body, headers, timeout), timeout);
  } catch (const http::ClientError& e) {
    if (e.kind() == http::ClientError::Kind::timeout) throw exchange::AgentTimeout(e.what());
    throw exchange::AgentUnreachable(e.what());
  }
}

}  // namespace schemagate::server
