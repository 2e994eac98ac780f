#include "negotiate_command.hpp"

#include "http/client.hpp"
#include "json/parse.hpp"
#include "llm/chat_model.hpp"
#include "sdk/payload_builder.hpp"
#include "util/clock.hpp"
#include "util/json_text.hpp"

#include <boost/json.hpp>

#include <cstdlib>
#include <iostream>

namespace schemagate::cli {

namespace bj = boost::json;

void add_negotiate(CLI::App& app, NegotiateCommand& c) {
  c.command = app.add_subcommand(
      "negotiate",
      "Fetch a scenario's template and turn a natural-language request into its payload "
      "(prints {schema_id, payload}; exit 1 when the server refuses it with --submit)");
  c.command->add_option("--server", c.server, "The schemagate server")
      ->envname("SCHEMAGATE_SERVER")
      ->capture_default_str();
  c.command->add_option("--api-key", c.api_key, "API key (needed with --submit)")
      ->envname("SCHEMAGATE_API_KEY");
  c.command->add_option("--scenario", c.scenario, "The scenario, e.g. flight_booking")->required();
  c.command->add_option("--say", c.say, "The request, as a person would say it")->required();
  c.command->add_option("--today", c.today,
                        "Reference day for relative dates such as 'next Monday' (YYYY-MM-DD; "
                        "default: today, UTC)");
  c.command->add_option("--language", c.language, "Preferred language of the descriptions");
  c.command
      ->add_option("--chat-url", c.chat_url,
                   "Build with a chat model at this OpenAI-compatible server (key in "
                   "SCHEMAGATE_CHAT_API_KEY) instead of the offline rules")
      ->envname("SCHEMAGATE_CHAT_URL");
  c.command->add_option("--chat-model", c.chat_model, "The chat model's name")
      ->envname("SCHEMAGATE_CHAT_MODEL");
  c.command->add_flag("--submit", c.submit, "Send the payload and print the agent's answer");
  c.command->add_flag("--trace", c.trace, "Also print which words went to which key (stderr)");
}

std::optional<int> run_negotiate(const NegotiateCommand& c) {
  if (!c.command || !c.command->parsed()) return std::nullopt;
  try {
    http::Client client;
    std::vector<http::Header> headers;
    if (!c.api_key.empty()) headers.push_back({"Authorization", "Bearer " + c.api_key});
    const std::string base =
        c.server.ends_with('/') ? c.server.substr(0, c.server.size() - 1) : c.server;
    std::string path = base + "/scenarios/" + c.scenario + "/template";
    if (!c.language.empty()) path += "?preferred_language=" + c.language;
    const auto r = client.request("GET", path, "", headers, std::chrono::seconds(10));
    if (r.status != 200) {
      std::cerr << "schemagate negotiate: " << path << " answered " << r.status << ": " << r.body
                << "\n";
      return 1;
    }
    const auto tmpl = json::parse(r.body).as_object();
    std::string today = c.today;
    if (today.empty()) today = util::format_rfc3339(util::SystemClock().now()).substr(0, 10);
    sdk::BuiltPayload built;
    if (!c.chat_url.empty()) {
      const auto schema_r =
          client.request("GET",
                         base + "/scenarios/" + c.scenario + "/versions/" +
                             std::string(tmpl.at("version").as_string()) + "/json-schema",
                         "", headers, std::chrono::seconds(10));
      if (schema_r.status != 200) {
        std::cerr << "schemagate negotiate: the template's JSON Schema: HTTP " << schema_r.status
                  << "\n";
        return 1;
      }
      const char* key = std::getenv("SCHEMAGATE_CHAT_API_KEY");
      llm::HttpChatModel model(client, {c.chat_url, c.chat_model, key ? key : ""});
      built =
          sdk::build_with_model(model, tmpl, json::parse(schema_r.body).as_object(), c.say, today);
    } else {
      built = sdk::PayloadBuilder(tmpl, today).build(c.say);
    }
    if (c.trace) {
      for (const auto& t : built.trace)
        std::cerr << util::json_text(t) << "\n";
    }
    const bj::object body{{"schema_id", tmpl.at("schema_id")}, {"payload", built.payload}};
    std::cout << util::json_text(body) << "\n";
    if (!c.submit) return 0;
    headers.push_back({"Content-Type", "application/json"});
    const auto sent = client.request("POST", base + "/scenarios/" + c.scenario + "/payloads",
                                     bj::serialize(body), headers, std::chrono::seconds(30));
    std::cout << sent.body << "\n";
    return sent.status == 200 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "schemagate negotiate: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace schemagate::cli
