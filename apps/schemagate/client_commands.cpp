#include "client_commands.hpp"

#include "http/client.hpp"
#include "json/parse.hpp"
#include "util/files.hpp"
#include "util/json_text.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace schemagate::cli {

namespace bj = boost::json;

namespace {

constexpr int kRefused = 1, kUsage = 2, kUnreachable = 3;

struct Failure {
  int code;
  std::string message;
};

// A path segment as a URL carries it: agent ids may be URIs (urn:..., https://...).
std::string segment(std::string_view s) {
  std::string out;
  for (const unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

std::string query_param(std::string_view name, std::string_view value) {
  return std::string(name) + "=" + segment(value);
}

// Indented JSON for people (numbers and strings as JSON.stringify writes them).
void pretty(std::string& out, const bj::value& v, int depth) {
  const std::string pad(static_cast<std::size_t>(depth + 1) * 2, ' ');
  const std::string close(static_cast<std::size_t>(depth) * 2, ' ');
  if (const auto* o = v.if_object(); o && !o->empty()) {
    out += "{\n";
    bool first = true;
    for (const auto& kv : *o) {
      out += (first ? "" : ",\n") + pad;
      first = false;
      util::append_json_string(out, kv.key());
      out += ": ";
      pretty(out, kv.value(), depth + 1);
    }
    out += "\n" + close + "}";
  } else if (const auto* a = v.if_array(); a && !a->empty()) {
    out += "[\n";
    for (std::size_t i = 0; i < a->size(); ++i) {
      out += (i ? ",\n" : "") + pad;
      pretty(out, (*a)[i], depth + 1);
    }
    out += "\n" + close + "]";
  } else {
    util::append_json(out, v, util::JsonForm::as_is);
  }
}

std::string pretty(const bj::value& v) {
  std::string out;
  pretty(out, v, 0);
  return out;
}

std::string text_of(const bj::value& v, std::string_view key) {
  const auto* o = v.if_object();
  const auto* x = o ? o->if_contains(key) : nullptr;
  return x && x->is_string() ? std::string(x->get_string()) : std::string();
}

// Columns padded to their widest cell (in characters); the last column is not padded.
void print_table(const std::vector<std::string>& head,
                 const std::vector<std::vector<std::string>>& rows) {
  auto chars = [](const std::string& s) {
    std::size_t n = 0;
    for (const unsigned char c : s)
      n += (c & 0xC0) != 0x80;
    return n;
  };
  std::vector<std::size_t> width(head.size());
  for (std::size_t i = 0; i < head.size(); ++i)
    width[i] = chars(head[i]);
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], chars(r[i]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      out += cells[i];
      if (i + 1 < cells.size()) out += std::string(width[i] - chars(cells[i]) + 2, ' ');
    }
    std::cout << out << "\n";
  };
  line(head);
  for (const auto& r : rows)
    line(r);
}

std::string shorten(std::string s, std::size_t max_chars) {
  std::size_t n = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && n++ == max_chars - 1) break;
  }
  if (i < s.size()) s = s.substr(0, i) + "…";
  return s;
}

class Api {
 public:
  explicit Api(const ClientCommands& c) : c_(c) {
    base_ = c.server;
    while (base_.ends_with('/'))
      base_.pop_back();
  }

  // The reply's JSON; a refusal (4xx) or failure (5xx, unreachable) throws Failure with the
  // server's error, each violation or card problem on a line of its own.
  bj::value call(const std::string& method, const std::string& path, const std::string& body = "") {
    std::vector<http::Header> headers{{"Accept", "application/json"}};
    if (!body.empty()) headers.push_back({"Content-Type", "application/json"});
    if (!c_.api_key.empty()) headers.push_back({"Authorization", "Bearer " + c_.api_key});
    http::ClientResponse r;
    try {
      r = client_.request(method, base_ + path, body, headers,
                          std::chrono::milliseconds(c_.timeout_ms));
    } catch (const http::ClientError& e) {
      throw Failure{kUnreachable, "cannot reach " + c_.server + ": " + e.what()};
    }
    bj::value parsed;
    if (!r.body.empty()) {
      try {
        parsed = json::parse(r.body);
      } catch (const json::ParseError&) {
        parsed = bj::string(r.body);
      }
    }
    if (r.status >= 200 && r.status < 300) return parsed;
    throw Failure{r.status >= 500 ? kUnreachable : kRefused, describe(r.status, parsed)};
  }

 private:
  static std::string describe(int status, const bj::value& body) {
    std::string out = "HTTP " + std::to_string(status);
    const auto* e = body.is_object() ? body.get_object().if_contains("error") : nullptr;
    if (!e || !e->is_object())
      return out + (body.is_string() ? ": " + std::string(body.get_string()) : "");
    out += " " + text_of(*e, "code") + ": " + text_of(*e, "message");
    if (const auto* d = e->get_object().if_contains("details"); d && d->is_object()) {
      for (const char* list : {"violations", "problems"}) {
        const auto* items = d->get_object().if_contains(list);
        if (!items || !items->is_array()) continue;
        for (const auto& v : items->get_array()) {
          const std::string where = text_of(v, "instanceLocation").empty()
                                        ? text_of(v, "path")
                                        : text_of(v, "instanceLocation");
          out += "\n  " + (where.empty() ? std::string("(root)") : where) + ": " +
                 text_of(v, "message");
        }
      }
    }
    return out;
  }

  const ClientCommands& c_;
  std::string base_;
  http::Client client_;
};

// --data: inline JSON, @FILE, or @- for standard input.
bj::value read_data(const std::string& data) {
  std::string text = data;
  if (data == "@-") {
    std::stringstream in;
    in << std::cin.rdbuf();
    text = in.str();
  } else if (data.starts_with("@")) {
    try {
      text = util::read_file(data.substr(1));
    } catch (const std::exception& e) {
      throw Failure{kUsage, e.what()};
    }
  }
  try {
    json::ParseLimits limits;
    return json::parse(text, limits);
  } catch (const json::ParseError& e) {
    throw Failure{kUsage, std::string("--data is not JSON: ") + e.what()};
  }
}

void print(const ClientCommands& c, const bj::value& v) {
  std::cout << (c.json ? util::json_text(v) : pretty(v)) << "\n";
}

int agents_list(const ClientCommands& c, Api& api) {
  std::string q = "?" + query_param("limit", std::to_string(c.limit));
  if (!c.capability.empty()) q += "&" + query_param("capability", c.capability);
  if (!c.tag.empty()) q += "&" + query_param("tag", c.tag);
  if (!c.search_language.empty()) q += "&" + query_param("language", c.search_language);
  if (!c.provider.empty()) q += "&" + query_param("provider", c.provider);
  bj::array agents;
  std::string cursor;
  for (;;) {
    const auto page = api.call(
        "GET", "/agents" + q + (cursor.empty() ? "" : "&" + query_param("cursor", cursor)));
    for (const auto& a : page.at("agents").as_array())
      agents.push_back(a);
    const auto* next = page.as_object().if_contains("next_cursor");
    cursor = next && next->is_string() ? std::string(next->get_string()) : "";
    if (!c.all || cursor.empty()) break;
  }
  if (c.json) {
    bj::object out{{"agents", agents}};
    if (!cursor.empty()) out["next_cursor"] = cursor;
    std::cout << util::json_text(out) << "\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& a : agents) {
    std::string caps;
    if (const auto* o = a.as_object().if_contains("capabilities"); o && o->is_array()) {
      for (const auto& x : o->get_array())
        caps += (caps.empty() ? "" : ",") + std::string(x.is_string() ? x.get_string() : "");
    }
    rows.push_back(
        {text_of(a, "id"), text_of(a, "name"), caps, shorten(text_of(a, "description"), 60)});
  }
  print_table({"ID", "NAME", "CAPABILITIES", "DESCRIPTION"}, rows);
  if (!cursor.empty()) std::cout << "(more: --all, or --limit)\n";
  return 0;
}

int agents_get(const ClientCommands& c, Api& api) {
  const auto card = api.call("GET", "/agents/" + segment(c.id));
  if (c.json) {
    print(c, card);
    return 0;
  }
  std::cout << text_of(card, "name") << " (" << text_of(card, "id") << ")\n"
            << text_of(card, "description") << "\n";
  if (const auto e = text_of(card, "endpoint"); !e.empty()) std::cout << "endpoint: " << e << "\n";
  for (const char* list : {"capabilities", "tags", "supported_languages"}) {
    const auto* v = card.as_object().if_contains(list);
    if (!v || !v->is_array() || v->get_array().empty()) continue;
    std::string joined;
    for (const auto& x : v->get_array())
      joined += (joined.empty() ? "" : ", ") + std::string(x.is_string() ? x.get_string() : "");
    std::cout << list << ": " << joined << "\n";
  }
  if (const auto* ops = card.as_object().if_contains("operations"); ops && ops->is_array()) {
    for (const auto& op : ops->get_array()) {
      std::cout << "\noperation " << text_of(op, "name");
      if (const auto v = text_of(op, "version"); !v.empty()) std::cout << " " << v;
      if (const auto s = text_of(op, "scenario"); !s.empty())
        std::cout << " (scenario " << s << ")";
      std::cout << "\n";
      if (const auto d = text_of(op, "description"); !d.empty()) std::cout << "  " << d << "\n";
      if (const auto* in = op.as_object().if_contains("input_schema"); in && in->is_object()) {
        std::cout << "  input schema: " << util::json_text(*in) << "\n";
      }
      if (const auto* out = op.as_object().if_contains("output_schema"); out && out->is_object()) {
        std::cout << "  output schema: " << util::json_text(*out) << "\n";
      }
    }
  }
  return 0;
}

int agents_register(const ClientCommands& c, Api& api) {
  const auto card = read_data(c.file == "-" ? "@-" : "@" + c.file);
  const std::string id = text_of(card, "id");
  if (c.replace && id.empty()) throw Failure{kUsage, "--replace needs the card's \"id\""};
  const auto body = util::json_text(card);
  const auto out = c.replace ? api.call("PUT", "/agents/" + segment(id), body)
                             : api.call("POST", "/agents", body);
  if (c.json) {
    print(c, out);
  } else {
    std::cout << (c.replace ? "registered or replaced " : "registered ") << text_of(out, "id")
              << "\n";
  }
  return 0;
}

int agents_delete(const ClientCommands& c, Api& api) {
  api.call("DELETE", "/agents/" + segment(c.id));
  if (!c.json) std::cout << "deleted " << c.id << "\n";
  return 0;
}

int search(const ClientCommands& c, Api& api) {
  bj::object filters;
  if (!c.capability.empty()) filters["capability"] = c.capability;
  if (!c.tag.empty()) filters["tag"] = c.tag;
  if (!c.search_language.empty()) filters["language"] = c.search_language;
  if (!c.provider.empty()) filters["provider"] = c.provider;
  const auto found = api.call(
      "POST", "/agents/search",
      util::json_text(bj::object{{"query", c.query}, {"top", c.top}, {"filters", filters}}));
  if (c.json) {
    print(c, found);
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  std::size_t rank = 0;
  for (const auto& r : found.at("results").as_array()) {
    char score[32];
    std::snprintf(score, sizeof score, "%.3f", r.at("score").to_number<double>());
    rows.push_back({std::to_string(++rank), score, text_of(r, "id"), text_of(r, "name"),
                    shorten(text_of(r, "description"), 50)});
  }
  if (rows.empty()) {
    std::cout << "no agent matches\n";
    return 0;
  }
  print_table({"#", "SCORE", "ID", "NAME", "DESCRIPTION"}, rows);
  return 0;
}

int invoke(const ClientCommands& c, Api& api) {
  if (c.data.empty()) throw Failure{kUsage, "--data is required (JSON, @FILE or @-)"};
  const auto input = read_data(c.data);
  const std::string path = "/agents/" + segment(c.id) +
                           (c.operation.empty() ? "" : "/operations/" + segment(c.operation)) +
                           "/invoke";
  print(c, api.call("POST", path, util::json_text(input)));
  return 0;
}

int templates_list(const ClientCommands& c, Api& api) {
  const auto list = api.call("GET", "/scenarios");
  if (c.json) {
    print(c, list);
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : list.at("scenarios").as_array()) {
    std::string versions;
    for (const auto& v : s.at("versions").as_array())
      versions += (versions.empty() ? "" : ", ") + std::string(v.as_string());
    rows.push_back({text_of(s, "scenario"), text_of(s, "latest_version"), versions});
  }
  print_table({"SCENARIO", "LATEST", "VERSIONS"}, rows);
  return 0;
}

int templates_get(const ClientCommands& c, Api& api) {
  std::string q;
  if (!c.version.empty()) q += "&" + query_param("schema_version", c.version);
  if (!c.language.empty()) q += "&" + query_param("preferred_language", c.language);
  if (!q.empty()) q[0] = '?';
  const auto t = api.call("GET", "/scenarios/" + segment(c.scenario) + "/template" + q);
  if (c.json) {
    print(c, t);
    return 0;
  }
  std::cout << text_of(t, "scenario") << " " << text_of(t, "version") << " ("
            << text_of(t, "schema_id") << ")\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& k : t.at("keys").as_array()) {
    const auto* req = k.as_object().if_contains("required");
    rows.push_back({text_of(k, "key_name"), text_of(k, "key_type"),
                    req && req->is_bool() && req->get_bool() ? "yes" : "",
                    shorten(text_of(k, "semantic_description"), 70)});
  }
  print_table({"KEY", "TYPE", "REQUIRED", "DESCRIPTION"}, rows);
  return 0;
}

int templates_publish(const ClientCommands& c, Api& api) {
  const auto body = read_data(c.file == "-" ? "@-" : "@" + c.file);
  const auto out =
      api.call("PUT", "/scenarios/" + segment(c.scenario) + "/versions/" + segment(c.version),
               util::json_text(body));
  if (c.json) {
    print(c, out);
  } else {
    std::cout << "published " << c.scenario << " " << c.version << "\n";
  }
  return 0;
}

void add_shared(CLI::App* sub, ClientCommands& c) {
  // The variables are read for the command that runs (run_client_commands): every client
  // command shares these fields, and CLI11 would fill them from the environment once per
  // command, over a flag given to another.
  sub->add_option("--server", c.server, "The schemagate server (or SCHEMAGATE_SERVER)")
      ->capture_default_str();
  sub->add_option("--api-key", c.api_key,
                  "API key, sent as Authorization: Bearer (or SCHEMAGATE_API_KEY)");
  sub->add_flag("--json", c.json, "Print the server's JSON (one line) instead of a table");
  sub->add_option("--timeout-ms", c.timeout_ms, "How long to wait for the server")
      ->capture_default_str();
}

void add_filters(CLI::App* sub, ClientCommands& c) {
  sub->add_option("--capability", c.capability, "Only agents with this capability");
  sub->add_option("--tag", c.tag, "Only agents with this tag");
  sub->add_option("--language", c.search_language, "Only agents that support this language");
  sub->add_option("--provider", c.provider, "Only agents from this provider");
}

}  // namespace

void add_client_commands(CLI::App& app, ClientCommands& c) {
  const char* codes =
      "\n\nExit codes: 0 done, 1 the server refused (its error is printed, each violation on "
      "its own line), 2 usage error, 3 server unreachable or failing (5xx).";
  c.agents = app.add_subcommand("agents", std::string("Registered agents on a server") + codes);
  c.agents->require_subcommand(1);
  c.agents_list = c.agents->add_subcommand(
      "list", "List the agents you may see (a page; --all for every page)");
  add_shared(c.agents_list, c);
  add_filters(c.agents_list, c);
  c.agents_list->add_option("--limit", c.limit, "Agents per page (1-100)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  c.agents_list->add_flag("--all", c.all, "Follow the cursor through every page");
  c.agents_get = c.agents->add_subcommand("get", "Show an agent's card, operations and schemas");
  add_shared(c.agents_get, c);
  c.agents_get->add_option("ID", c.id, "The agent's id")->required();
  c.agents_register = c.agents->add_subcommand("register", "Register an agent card (POST /agents)");
  add_shared(c.agents_register, c);
  c.agents_register->add_option("FILE", c.file, "The card as JSON ('-' for standard input)")
      ->required();
  c.agents_register->add_flag("--replace", c.replace,
                              "Create or replace the card with its id (PUT /agents/{id})");
  c.agents_delete = c.agents->add_subcommand("delete", "Remove an agent (DELETE /agents/{id})");
  add_shared(c.agents_delete, c);
  c.agents_delete->add_option("ID", c.id, "The agent's id")->required();

  c.search = app.add_subcommand("search", std::string("Find agents by describing a need") + codes);
  add_shared(c.search, c);
  add_filters(c.search, c);
  c.search->add_option("TEXT", c.query, "What the agent should do, in plain words")->required();
  c.search->add_option("--top", c.top, "How many results")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();

  c.invoke = app.add_subcommand(
      "invoke",
      std::string("Call an agent through the gateway (the input is validated first)") + codes);
  add_shared(c.invoke, c);
  c.invoke->add_option("AGENT", c.id, "The agent's id")->required();
  c.invoke->add_option("OPERATION", c.operation, "The operation (default: the agent's only one)");
  c.invoke->add_option("--data", c.data, "The input: JSON, @FILE, or @- for standard input")
      ->required();

  c.templates =
      app.add_subcommand("templates", std::string("Scenario templates (seed 000)") + codes);
  c.templates->require_subcommand(1);
  c.templates_list = c.templates->add_subcommand("list", "Scenarios and their published versions");
  add_shared(c.templates_list, c);
  c.templates_get =
      c.templates->add_subcommand("get", "A scenario's template: its keys, types and descriptions");
  add_shared(c.templates_get, c);
  c.templates_get->add_option("SCENARIO", c.scenario, "The scenario")->required();
  c.templates_get->add_option("--version", c.version,
                              "A published version (default: the current one)");
  c.templates_get->add_option("--language", c.language, "Preferred language of the descriptions");
  c.templates_publish =
      c.templates->add_subcommand("publish",
                                  "Publish a template version (PUT /scenarios/{s}/versions/{v}; "
                                  "breaking changes need a new major)");
  add_shared(c.templates_publish, c);
  c.templates_publish->add_option("SCENARIO", c.scenario, "The scenario")->required();
  c.templates_publish->add_option("VERSION", c.version, "Its semantic version, e.g. 1.1.0")
      ->required();
  c.templates_publish->add_option("FILE", c.file, "The template as JSON ('-' for standard input)")
      ->required();
}

std::optional<int> run_client_commands(const ClientCommands& c) {
  using Run = int (*)(const ClientCommands&, Api&);
  const std::pair<CLI::App*, Run> commands[] = {{c.agents_list, agents_list},
                                                {c.agents_get, agents_get},
                                                {c.agents_register, agents_register},
                                                {c.agents_delete, agents_delete},
                                                {c.search, search},
                                                {c.invoke, invoke},
                                                {c.templates_list, templates_list},
                                                {c.templates_get, templates_get},
                                                {c.templates_publish, templates_publish}};
  for (const auto& [sub, run] : commands) {
    if (!sub || !sub->parsed()) continue;
    ClientCommands with_env = c;
    if (const char* s = std::getenv("SCHEMAGATE_SERVER"); s && sub->count("--server") == 0) {
      with_env.server = s;
    }
    if (const char* k = std::getenv("SCHEMAGATE_API_KEY"); k && sub->count("--api-key") == 0) {
      with_env.api_key = k;
    }
    try {
      Api api(with_env);
      return run(with_env, api);
    } catch (const Failure& f) {
      const bool nested = sub->get_parent()->get_parent() != nullptr;
      std::cerr << "schemagate " << (nested ? sub->get_parent()->get_name() + " " : "")
                << sub->get_name() << ": " << f.message << "\n";
      return f.code;
    }
  }
  return std::nullopt;
}

}  // namespace schemagate::cli
