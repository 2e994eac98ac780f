#include "sdk/agent.hpp"

#include "api/json_body.hpp"
#include "http/server.hpp"
#include "jsonschema/schema.hpp"
#include "util/json_text.hpp"
#include "util/metrics.hpp"

#include <spdlog/spdlog.h>
#include <boost/json/serialize.hpp>

#include <stdexcept>
#include <thread>

namespace schemagate::sdk {

namespace bj = boost::json;

namespace {

// A streamed reply's events in SSE framing, produced while they are sent.
class EventBody final : public http::BodyStream {
 public:
  explicit EventBody(AgentServer::EventSource source) : source_(std::move(source)) {}
  bool next(std::string& piece) override {
    if (done_) return false;
    std::optional<AgentServer::Event> event;
    try {
      event = source_();
    } catch (const std::exception& e) {
      spdlog::error("agent stream failed: {}", e.what());
      event = AgentServer::Event{
          "error",
          bj::object{{"error", bj::object{{"code", "AgentError"},
                                          {"message", "the agent failed while streaming"}}}}};
      done_ = true;
    }
    if (!event) return false;
    piece = "event: " + event->name + "\ndata: " + util::json_text(event->data) + "\n\n";
    return true;
  }

 private:
  AgentServer::EventSource source_;
  bool done_ = false;
};

bool asks_for_events(const http::Request& req) {
  const auto accept = req.header("Accept");
  return accept && accept->find("text/event-stream") != std::string_view::npos;
}

}  // namespace

struct AgentServer::Impl {
  exchange::Template tmpl;
  std::shared_ptr<const jsonschema::Schema> schema;
  Handler handler;
  StreamHandler stream_handler;
  AgentOptions options;
  http::Router router;
  util::MetricsRegistry metrics;
  json::ParseLimits limits;
  std::unique_ptr<http::Server> server;
  std::thread thread;
  unsigned short port = 0;

  // The gateway has validated already; an agent that is reached directly must not trust that.
  bj::object validated(const bj::value& payload) {
    const auto result = schema->evaluate(payload);
    if (!result.valid) {
      throw http::Error(400, "InvalidInput",
                        "the payload does not match " + tmpl.schema_id + ": " +
                            result.errors.front().instance_location + " " +
                            result.errors.front().error,
                        bj::object{{"violations", result.violations()}});
    }
    bj::object completed = payload.get_object();
    for (const auto& k : tmpl.keys) {
      if (!k.required && k.default_value && !completed.contains(k.name)) {
        completed[k.name] = *k.default_value;
      }
    }
    return completed;
  }

  http::Response run_handler(const bj::object& payload) {
    try {
      return http::Response::json(200, handler(payload));
    } catch (const http::Error&) {
      throw;
    } catch (const std::exception& e) {
      spdlog::error("agent {} failed: {}", tmpl.scenario, e.what());
      throw http::Error(500, "AgentError", "the agent failed to process the payload");
    }
  }
};

AgentServer::AgentServer(const bj::value& template_json, Handler handler, AgentOptions options)
    : impl_(std::make_unique<Impl>()) {
  const auto version = template_json.is_object() && template_json.get_object().contains("version")
                           ? std::string(template_json.at("version").as_string())
                           : std::string("1.0.0");
  const auto scenario = template_json.is_object() &&
                                template_json.get_object().contains("scenario") &&
                                template_json.at("scenario").is_string()
                            ? std::string(template_json.at("scenario").as_string())
                            : std::string();
  auto parsed = exchange::parse_template(template_json, scenario, version);
  if (auto* problems = std::get_if<std::vector<exchange::TemplateProblem>>(&parsed)) {
    std::string all;
    for (const auto& p : *problems)
      all += "\n  " + p.path + ": " + p.message;
    throw std::invalid_argument("invalid agent template:" + all);
  }
  impl_->tmpl = std::move(std::get<exchange::Template>(parsed));
  jsonschema::CompileOptions opts;
  opts.assert_format = true;
  impl_->schema = std::make_shared<jsonschema::Schema>(
      jsonschema::Schema::compile(impl_->tmpl.json_schema(), opts));
  impl_->handler = std::move(handler);
  impl_->options = std::move(options);

  Impl& self = *impl_;
  self.router.add("POST", "/execute", [&self](http::Request& req) {
    const auto body = api::read_json_body(req, self.limits);
    if (!body.is_object()) {
      throw http::Error(400, "InvalidInput", "the payload must be a JSON object");
    }
    if (asks_for_events(req)) {
      // The gateway passes a streamed call's `"stream": true` on (seed 004 §6.3); it is a
      // request to this server, not part of the payload the template describes.
      bj::value payload = body;
      payload.get_object().erase("stream");
      if (self.stream_handler) {
        http::Response r;
        r.stream = std::make_shared<EventBody>(self.stream_handler(self.validated(payload)));
        r.set_header("Content-Type", "text/event-stream");
        r.set_header("Cache-Control", "no-cache");
        return r;
      }
      return self.run_handler(self.validated(payload));
    }
    return self.run_handler(self.validated(body));
  });
  self.router.add("GET", "/template", [&self](http::Request& req) {
    const auto lang = req.query_param("preferred_language");
    std::string language;
    return http::Response::json(200, self.tmpl.negotiated(lang ? *lang : "", language));
  });
  // The same seed-000 protocol, for clients that talk to the agent directly.
  self.router.add("POST", "/sdsi", [&self](http::Request& req) {
    const auto body = api::read_json_body(req, self.limits);
    const auto* method = body.is_object() ? body.get_object().if_contains("method") : nullptr;
    const auto* params = body.is_object() ? body.get_object().if_contains("params") : nullptr;
    if (!method || !method->is_string() || !params || !params->is_object()) {
      throw http::Error(400, "InvalidInput", "expected {\"method\", \"params\"}");
    }
    if (*method == "get_schema_template") {
      const auto* lang = params->get_object().if_contains("preferred_language");
      std::string language;
      return http::Response::json(
          200,
          self.tmpl.negotiated(
              lang && lang->is_string() ? std::string_view(lang->get_string()) : "", language));
    }
    if (*method == "submit_payload") {
      const auto* id = params->get_object().if_contains("schema_id");
      if (!id || !id->is_string() || id->get_string() != self.tmpl.schema_id.c_str()) {
        throw http::Error(404, "NotFound", "this agent serves schema_id " + self.tmpl.schema_id);
      }
      const auto* payload = params->get_object().if_contains("payload");
      if (!payload || !payload->is_object()) {
        throw http::Error(400, "InvalidInput", "params.payload must be an object");
      }
      return self.run_handler(self.validated(*payload));
    }
    throw http::Error(404, "NotFound",
                      "method " + std::string(method->get_string()) + " not found");
  });
}

AgentServer::~AgentServer() {
  stop();
}

unsigned short AgentServer::start() {
  http::ServerOptions opts;
  opts.host = impl_->options.host;
  opts.port = impl_->options.port;
  opts.threads = impl_->options.threads;
  opts.handle_signals = false;
  opts.access_log = false;
  opts.shutdown_grace = std::chrono::seconds(5);
  opts.name = "agent " + impl_->tmpl.scenario;
  impl_->server = std::make_unique<http::Server>(impl_->router, impl_->metrics, opts);
  impl_->port = impl_->server->listen();
  impl_->thread = std::thread([this] { impl_->server->run(); });
  return impl_->port;
}

void AgentServer::stop() {
  if (!impl_ || !impl_->server) return;
  impl_->server->stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->server.reset();
}

void AgentServer::stream_with(StreamHandler handler) {
  impl_->stream_handler = std::move(handler);
}

std::string AgentServer::execute_url() const {
  return "http://" + impl_->options.host + ":" + std::to_string(impl_->port) + "/execute";
}

const exchange::Template& AgentServer::schema_template() const {
  return impl_->tmpl;
}

}  // namespace schemagate::sdk
