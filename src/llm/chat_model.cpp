#include "llm/chat_model.hpp"

#include "http/client.hpp"
#include "json/parse.hpp"
#include "jsonschema/schema.hpp"

#include <boost/json.hpp>

namespace schemagate::llm {

namespace bj = boost::json;

HttpChatModel::HttpChatModel(http::Client& client, Options options)
    : client_(client), options_(std::move(options)) {
  while (options_.base_url.ends_with("/"))
    options_.base_url.pop_back();
}

std::string HttpChatModel::ask(const bj::array& messages, const std::string& schema_name,
                               const bj::value& schema) {
  const std::string url = options_.base_url + "/v1/chat/completions";
  std::vector<http::Header> headers{{"Content-Type", "application/json"},
                                    {"Accept", "application/json"}};
  if (!options_.api_key.empty()) headers.push_back({"Authorization", "Bearer " + options_.api_key});
  const bj::object body{
      {"model", options_.model},
      {"temperature", options_.temperature},
      {"messages", messages},
      {"response_format",
       bj::object{{"type", "json_schema"},
                  {"json_schema",
                   bj::object{{"name", schema_name}, {"schema", schema}, {"strict", true}}}}}};
  http::ClientResponse res;
  try {
    res = client_.request("POST", url, bj::serialize(body), headers, options_.timeout);
  } catch (const std::exception& e) {
    throw ChatError("chat model server " + url + ": " + e.what());
  }
  if (res.status != 200) {
    throw ChatError("chat model server " + url + " answered HTTP " + std::to_string(res.status) +
                    ": " + res.body.substr(0, 200));
  }
  try {
    const auto doc = json::parse(res.body);
    const auto& content = doc.at("choices").at(0).at("message").at("content");
    if (!content.is_string()) throw ChatError("no text content");
    return std::string(content.get_string());
  } catch (const std::exception& e) {
    throw ChatError("chat model server " + url + " answered without choices[0].message.content (" +
                    e.what() + ")");
  }
}

bj::value HttpChatModel::complete_json(const std::string& system, const std::string& user,
                                       const std::string& schema_name, const bj::value& schema) {
  const auto check = jsonschema::Schema::compile(schema);
  bj::array messages{bj::object{{"role", "system"}, {"content", system}},
                     bj::object{{"role", "user"}, {"content", user}}};
  std::string problem;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::string text = ask(messages, schema_name, schema);
    bj::value answer;
    try {
      answer = json::parse(text);
    } catch (const json::ParseError& e) {
      problem = std::string("the answer is not JSON: ") + e.what();
    }
    if (problem.empty()) {
      const auto result = check.evaluate(answer);
      if (result.valid) return answer;
      problem = "the answer breaks the schema: " + result.errors.front().instance_location + " " +
                result.errors.front().error;
    }
    // Once more, saying what was wrong (the validate-and-repair loop).
    messages.push_back(bj::object{{"role", "assistant"}, {"content", text}});
    messages.push_back(bj::object{
        {"role", "user"},
        {"content", problem + ". Answer again with JSON that matches the schema exactly."}});
    if (attempt == 0) problem.clear();
  }
  throw ChatError("the chat model did not produce valid JSON twice: " + problem);
}

}  // namespace schemagate::llm
