#include "a2a/wire.hpp"

#include "util/json_text.hpp"
#include "util/text.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>
#include <cctype>

namespace schemagate::a2a {

namespace bj = boost::json;

namespace {

const bj::object* object_at(const bj::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_object() ? &v->get_object() : nullptr;
}

std::string string_at(const bj::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

struct ErrorRow {
  A2AError::Kind kind;
  int code;
  int status;
  std::string_view reason;
};

constexpr std::array<ErrorRow, 14> kErrors{{
    {A2AError::Kind::parse_error, -32700, 400, "PARSE_ERROR"},
    {A2AError::Kind::invalid_request, -32600, 400, "INVALID_REQUEST"},
    {A2AError::Kind::method_not_found, -32601, 404, "METHOD_NOT_FOUND"},
    {A2AError::Kind::invalid_params, -32602, 400, "INVALID_PARAMS"},
    {A2AError::Kind::internal, -32603, 500, "INTERNAL"},
    {A2AError::Kind::task_not_found, -32001, 404, "TASK_NOT_FOUND"},
    {A2AError::Kind::task_not_cancelable, -32002, 400, "TASK_NOT_CANCELABLE"},
    {A2AError::Kind::push_notification_not_supported, -32003, 400,
     "PUSH_NOTIFICATION_NOT_SUPPORTED"},
    {A2AError::Kind::unsupported_operation, -32004, 400, "UNSUPPORTED_OPERATION"},
    {A2AError::Kind::content_type_not_supported, -32005, 400, "CONTENT_TYPE_NOT_SUPPORTED"},
    {A2AError::Kind::invalid_agent_response, -32006, 500, "INVALID_AGENT_RESPONSE"},
    {A2AError::Kind::extended_card_not_configured, -32007, 400,
     "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
    {A2AError::Kind::extension_support_required, -32008, 400, "EXTENSION_SUPPORT_REQUIRED"},
    {A2AError::Kind::version_not_supported, -32009, 400, "VERSION_NOT_SUPPORTED"},
}};

const ErrorRow& row(A2AError::Kind kind) {
  for (const auto& r : kErrors) {
    if (r.kind == kind) return r;
  }
  return kErrors[4];
}

constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kStates{{
    {"TASK_STATE_SUBMITTED", "submitted"},
    {"TASK_STATE_WORKING", "working"},
    {"TASK_STATE_COMPLETED", "completed"},
    {"TASK_STATE_FAILED", "failed"},
    {"TASK_STATE_CANCELED", "canceled"},
    {"TASK_STATE_INPUT_REQUIRED", "input-required"},
    {"TASK_STATE_REJECTED", "rejected"},
    {"TASK_STATE_AUTH_REQUIRED", "auth-required"},
}};

}  // namespace

std::optional<WireVersion> parse_wire_version(std::optional<std::string_view> header) {
  const std::string_view v = header ? util::trim(*header) : std::string_view{};
  if (v.empty()) return WireVersion::v0_3;
  // Major.Minor, a patch part ignored (spec §3.6).
  const auto first = v.find('.');
  const std::string_view major = v.substr(0, first);
  std::string_view minor = first == std::string_view::npos ? "0" : v.substr(first + 1);
  minor = minor.substr(0, minor.find('.'));
  const auto digits = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
  };
  if (!digits(major) || !digits(minor)) return std::nullopt;
  if (major == "0" && minor == "3") return WireVersion::v0_3;
  if (major == "1" && minor == "0") return WireVersion::v1_0;
  return std::nullopt;
}

int A2AError::json_rpc_code() const {
  return row(kind_).code;
}
int A2AError::http_status() const {
  return row(kind_).status;
}
std::string_view A2AError::reason() const {
  return row(kind_).reason;
}

bj::array A2AError::wire_details() const {
  bj::array out;
  bj::object info{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
                  {"reason", reason()},
                  {"domain", "a2a-protocol.org"}};
  if (!metadata_.empty()) info["metadata"] = metadata_;
  out.push_back(std::move(info));
  for (const auto& d : details_)
    out.push_back(d);
  return out;
}

bj::object bad_request(const std::vector<FieldViolation>& violations) {
  bj::array list;
  for (const auto& v : violations)
    list.push_back(bj::object{{"field", v.field}, {"description", v.description}});
  return bj::object{{"@type", "type.googleapis.com/google.rpc.BadRequest"},
                    {"fieldViolations", std::move(list)}};
}

std::string schema_media_type(std::string_view schema_name) {
  const bool token =
      !schema_name.empty() && std::all_of(schema_name.begin(), schema_name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("!#$&-^_.+~").find(c) != std::string_view::npos;
      });
  if (token) return "application/json;schema=" + std::string(schema_name);
  std::string quoted = "\"";
  for (char c : schema_name) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return "application/json;schema=" + quoted + "\"";
}

bj::object read_part(const bj::value& value, const std::string& where) {
  if (!value.is_object())
    throw A2AError(A2AError::Kind::invalid_params, where + " must be an object");
  const auto& in = value.get_object();
  bj::object out;
  if (const auto* m = in.if_contains("metadata"); m && !m->is_null()) {
    if (!m->is_object()) {
      throw A2AError(A2AError::Kind::invalid_params, where + ".metadata must be an object");
    }
    out["metadata"] = *m;
  }
  const std::string kind = string_at(in, "kind");
  if (kind == "file") {  // 0.3: {"kind": "file", "file": {"uri"|"bytes", "name", "mimeType"}}
    const auto* file = object_at(in, "file");
    if (!file) throw A2AError(A2AError::Kind::invalid_params, where + ".file must be an object");
    if (const auto* uri = file->if_contains("uri"); uri && uri->is_string()) {
      out["url"] = *uri;
    } else if (const auto* bytes = file->if_contains("bytes"); bytes && bytes->is_string()) {
      out["raw"] = *bytes;
    } else {
      throw A2AError(A2AError::Kind::invalid_params, where + ".file needs \"uri\" or \"bytes\"");
    }
    if (const auto name = string_at(*file, "name"); !name.empty()) out["filename"] = name;
    if (const auto mt = string_at(*file, "mimeType"); !mt.empty()) out["mediaType"] = mt;
    return out;
  }
  int contents = 0;
  for (const char* k : {"text", "data", "url", "raw"}) {
    if (const auto* v = in.if_contains(k)) {
      ++contents;
      if (std::string_view(k) != "data" && !v->is_string()) {
        throw A2AError(A2AError::Kind::invalid_params, where + "." + k + " must be a string");
      }
      out[k] = *v;
    }
  }
  if (contents != 1) {
    throw A2AError(A2AError::Kind::invalid_params,
                   where + " must hold exactly one of text, data, url or raw" +
                       (kind.empty() ? "" : " (kind \"" + kind + "\")"));
  }
  if (!kind.empty() && kind != "text" && kind != "data") {
    throw A2AError(A2AError::Kind::invalid_params,
                   where + ".kind must be \"text\", \"data\" or \"file\", not \"" + kind + "\"");
  }
  for (const char* k : {"mediaType", "filename"}) {
    if (const auto* v = in.if_contains(k); v && !v->is_null()) {
      if (!v->is_string()) {
        throw A2AError(A2AError::Kind::invalid_params, where + "." + k + " must be a string");
      }
      if (!v->get_string().empty()) out[k] = *v;
    }
  }
  // Seed 001 puts the media type in metadata.mimeType (0.3 had no other place for it).
  if (!out.contains("mediaType")) {
    if (const auto* md = object_at(out, "metadata")) {
      if (const auto mt = string_at(*md, "mimeType"); !mt.empty()) out["mediaType"] = mt;
    }
  }
  return out;
}

PartKind kind_of(const bj::object& part) {
  if (part.contains("text")) return PartKind::text;
  if (part.contains("data")) return PartKind::data;
  return PartKind::file;
}

std::string media_type_of(const bj::object& part) {
  if (auto mt = string_at(part, "mediaType"); !mt.empty()) return mt;
  if (const auto* md = object_at(part, "metadata")) return string_at(*md, "mimeType");
  return {};
}

std::string name_of(const bj::object& part) {
  if (const auto* md = object_at(part, "metadata")) {
    if (auto n = string_at(*md, "name"); !n.empty()) return n;
  }
  return string_at(part, "name");
}

bj::object read_message(const bj::value& value, const std::string& where) {
  if (!value.is_object()) {
    throw A2AError(A2AError::Kind::invalid_params, where + " must be an object");
  }
  const auto& in = value.get_object();
  bj::object out;
  const auto* id = in.if_contains("messageId");
  if (!id || !(id->is_string() || id->is_int64() || id->is_uint64())) {
    throw A2AError(A2AError::Kind::invalid_params, where + ".messageId is required");
  }
  out["messageId"] =
      id->is_string()
          ? bj::value(*id)
          : bj::value(std::to_string(id->is_int64() ? id->get_int64()
                                                    : static_cast<std::int64_t>(id->get_uint64())));
  std::string role = string_at(in, "role");
  if (role == "user") role = "ROLE_USER";
  if (role == "agent") role = "ROLE_AGENT";
  if (role != "ROLE_USER" && role != "ROLE_AGENT") {
    throw A2AError(A2AError::Kind::invalid_params,
                   where + ".role must be ROLE_USER (0.3: \"user\"), not \"" + role + "\"");
  }
  out["role"] = role;
  const auto* parts = in.if_contains("parts");
  if (!parts || !parts->is_array() || parts->get_array().empty()) {
    throw A2AError(A2AError::Kind::invalid_params, where + ".parts must hold at least one part",
                   {bad_request({{where + ".parts", "At least one part is required"}})});
  }
  bj::array read;
  for (std::size_t i = 0; i < parts->get_array().size(); ++i) {
    read.push_back(read_part(parts->get_array()[i], where + ".parts[" + std::to_string(i) + "]"));
  }
  out["parts"] = std::move(read);
  for (const char* k : {"contextId", "taskId"}) {
    if (const auto* v = in.if_contains(k); v && !v->is_null()) {
      if (!v->is_string()) {
        throw A2AError(A2AError::Kind::invalid_params, where + "." + k + " must be a string");
      }
      if (!v->get_string().empty()) out[k] = *v;
    }
  }
  for (const char* k : {"metadata"}) {
    if (const auto* v = in.if_contains(k); v && v->is_object()) out[k] = *v;
  }
  for (const char* k : {"extensions", "referenceTaskIds"}) {
    if (const auto* v = in.if_contains(k); v && v->is_array()) out[k] = *v;
  }
  return out;
}

bj::object part_v03(const bj::object& part) {
  bj::object out;
  bj::object metadata;
  if (const auto* md = object_at(part, "metadata")) metadata = *md;
  switch (kind_of(part)) {
    case PartKind::text:
      out = {{"kind", "text"}, {"text", part.at("text")}};
      break;
    case PartKind::data: {
      out = {{"kind", "data"}};
      const auto& data = part.at("data");
      // 0.3 data parts hold objects only: others are wrapped as the SDK's compat layer does.
      if (data.is_object()) {
        out["data"] = data;
      } else {
        out["data"] = bj::object{{"value", data}};
        metadata["data_part_compat"] = true;
      }
      if (const auto mt = string_at(part, "mediaType"); !mt.empty()) metadata["mimeType"] = mt;
      break;
    }
    case PartKind::file: {
      bj::object file;
      if (const auto* u = part.if_contains("url")) file["uri"] = *u;
      if (const auto* r = part.if_contains("raw")) file["bytes"] = *r;
      if (const auto n = string_at(part, "filename"); !n.empty()) file["name"] = n;
      if (const auto mt = string_at(part, "mediaType"); !mt.empty()) file["mimeType"] = mt;
      out = {{"kind", "file"}, {"file", std::move(file)}};
      break;
    }
  }
  if (!metadata.empty()) out["metadata"] = std::move(metadata);
  return out;
}

namespace {

bj::array parts_v03(const bj::value* parts) {
  bj::array out;
  if (parts && parts->is_array()) {
    for (const auto& p : parts->get_array())
      out.push_back(part_v03(p.as_object()));
  }
  return out;
}

bj::object status_v03(const bj::object& status) {
  bj::object out{{"state", state_v03(string_at(status, "state"))}};
  if (const auto* m = object_at(status, "message")) out["message"] = message_v03(*m);
  if (const auto* t = status.if_contains("timestamp")) out["timestamp"] = *t;
  return out;
}

}  // namespace

bj::object message_v03(const bj::object& message) {
  bj::object out{{"kind", "message"},
                 {"messageId", message.at("messageId")},
                 {"role", string_at(message, "role") == "ROLE_USER" ? "user" : "agent"},
                 {"parts", parts_v03(message.if_contains("parts"))}};
  for (const char* k : {"contextId", "taskId", "metadata", "extensions", "referenceTaskIds"}) {
    if (const auto* v = message.if_contains(k)) out[k] = *v;
  }
  return out;
}

bj::object artifact_v03(const bj::object& artifact) {
  bj::object out{{"artifactId", artifact.at("artifactId")},
                 {"parts", parts_v03(artifact.if_contains("parts"))}};
  for (const char* k : {"name", "description", "metadata", "extensions"}) {
    if (const auto* v = artifact.if_contains(k)) out[k] = *v;
  }
  return out;
}

bj::object task_v03(const bj::object& task) {
  bj::object out{{"kind", "task"},
                 {"id", task.at("id")},
                 {"contextId", task.at("contextId")},
                 {"status", status_v03(task.at("status").as_object())}};
  if (const auto* a = task.if_contains("artifacts"); a && a->is_array()) {
    bj::array list;
    for (const auto& x : a->get_array())
      list.push_back(artifact_v03(x.as_object()));
    out["artifacts"] = std::move(list);
  }
  if (const auto* h = task.if_contains("history"); h && h->is_array()) {
    bj::array list;
    for (const auto& x : h->get_array())
      list.push_back(message_v03(x.as_object()));
    out["history"] = std::move(list);
  }
  if (const auto* m = task.if_contains("metadata")) out["metadata"] = *m;
  return out;
}

bj::object stream_event_v03(const bj::object& sr) {
  if (const auto* t = object_at(sr, "task")) return task_v03(*t);
  if (const auto* m = object_at(sr, "message")) return message_v03(*m);
  if (const auto* s = object_at(sr, "statusUpdate")) {
    const auto& status = s->at("status").as_object();
    bj::object out{{"kind", "status-update"},
                   {"taskId", s->at("taskId")},
                   {"contextId", s->at("contextId")},
                   {"status", status_v03(status)},
                   {"final", is_terminal(string_at(status, "state"))}};
    if (const auto* md = s->if_contains("metadata")) out["metadata"] = *md;
    return out;
  }
  const auto& a = sr.at("artifactUpdate").as_object();
  bj::object out{{"kind", "artifact-update"},
                 {"taskId", a.at("taskId")},
                 {"contextId", a.at("contextId")},
                 {"artifact", artifact_v03(a.at("artifact").as_object())}};
  for (const char* k : {"append", "lastChunk", "metadata"}) {
    if (const auto* v = a.if_contains(k)) out[k] = *v;
  }
  return out;
}

bool is_terminal(std::string_view state) {
  return state == "TASK_STATE_COMPLETED" || state == "TASK_STATE_FAILED" ||
         state == "TASK_STATE_CANCELED" || state == "TASK_STATE_REJECTED";
}

std::string state_v03(std::string_view state) {
  for (const auto& [v1, v03] : kStates) {
    if (v1 == state) return std::string(v03);
  }
  return "unknown";
}

std::string state_from_v03(std::string_view state) {
  for (const auto& [v1, v03] : kStates) {
    if (v03 == state || v1 == state) return std::string(v1);
  }
  return "TASK_STATE_UNSPECIFIED";
}

}  // namespace schemagate::a2a

namespace schemagate::a2a {

namespace {

bj::array parts_from(const bj::value* parts, const std::string& where) {
  bj::array out;
  if (parts && parts->is_array()) {
    for (std::size_t i = 0; i < parts->get_array().size(); ++i)
      out.push_back(read_part(parts->get_array()[i], where + "[" + std::to_string(i) + "]"));
  }
  return out;
}

bj::object artifact_from(const bj::object& a) {
  bj::object out = a;
  out["parts"] = parts_from(a.if_contains("parts"), "artifact.parts");
  return out;
}

bj::object status_from_v03(const bj::object& s) {
  bj::object out{{"state", state_from_v03(string_at(s, "state"))}};
  if (const auto* m = object_at(s, "message")) out["message"] = message_from_v03(*m);
  if (const auto* t = s.if_contains("timestamp")) out["timestamp"] = *t;
  return out;
}

}  // namespace

bj::object message_from_v03(const bj::object& m) {
  bj::object out = m;
  out.erase("kind");
  const auto role = string_at(m, "role");
  out["role"] = role == "user" || role == "ROLE_USER" ? "ROLE_USER" : "ROLE_AGENT";
  out["parts"] = parts_from(m.if_contains("parts"), "message.parts");
  return out;
}

bj::object task_from_v03(const bj::object& t) {
  bj::object out = t;
  out.erase("kind");
  if (const auto* s = object_at(t, "status")) out["status"] = status_from_v03(*s);
  if (const auto* a = t.if_contains("artifacts"); a && a->is_array()) {
    bj::array list;
    for (const auto& x : a->get_array()) {
      if (x.is_object()) list.push_back(artifact_from(x.get_object()));
    }
    out["artifacts"] = std::move(list);
  }
  if (const auto* h = t.if_contains("history"); h && h->is_array()) {
    bj::array list;
    for (const auto& x : h->get_array()) {
      if (x.is_object()) list.push_back(message_from_v03(x.get_object()));
    }
    out["history"] = std::move(list);
  }
  return out;
}

std::string upstream_send_body(const bj::object& request, WireVersion version,
                               std::string_view rpc_id, bool streaming) {
  bj::object params = request;
  if (version == WireVersion::v0_3) {
    params["message"] = message_v03(request.at("message").as_object());
    if (const auto* c = object_at(request, "configuration")) {
      bj::object conf = *c;
      conf.erase("returnImmediately");
      conf["blocking"] = true;
      params["configuration"] = std::move(conf);
    }
  }
  return util::json_text(
      bj::object{{"jsonrpc", "2.0"},
                 {"id", rpc_id},
                 {"method", version == WireVersion::v0_3
                                ? (streaming ? "message/stream" : "message/send")
                                : (streaming ? "SendStreamingMessage" : "SendMessage")},
                 {"params", std::move(params)}});
}

namespace {

// The result object of the agent's JSON-RPC response; its error, if it sent one, thrown.
bj::object upstream_result(std::string_view body) {
  bj::value doc;
  try {
    doc = bj::parse(body);
  } catch (const std::exception& e) {
    throw A2AError(A2AError::Kind::invalid_agent_response,
                   std::string("the agent's A2A reply is not JSON: ") + e.what());
  }
  const auto* o = doc.if_object();
  if (!o) {
    throw A2AError(A2AError::Kind::invalid_agent_response,
                   "the agent's A2A reply is not a JSON-RPC object");
  }
  if (const auto* err = object_at(*o, "error")) {
    const auto* code = err->if_contains("code");
    throw A2AError(
        A2AError::Kind::invalid_agent_response,
        "the agent answered with JSON-RPC error " +
            (code && code->is_int64() ? std::to_string(code->get_int64()) : std::string("?")) +
            ": " + string_at(*err, "message"));
  }
  const auto* result = object_at(*o, "result");
  if (!result) {
    throw A2AError(A2AError::Kind::invalid_agent_response,
                   "the agent's A2A reply has no result object");
  }
  return *result;
}

}  // namespace

bj::object read_upstream_reply(std::string_view body, WireVersion version) {
  const auto result = upstream_result(body);
  try {
    if (version == WireVersion::v1_0) {
      if (const auto* t = object_at(result, "task")) return bj::object{{"task", task_from_v03(*t)}};
      if (const auto* m = object_at(result, "message")) {
        return bj::object{{"message", read_message(*m, "result.message")}};
      }
    } else {
      const auto kind = string_at(result, "kind");
      if (kind == "task") return bj::object{{"task", task_from_v03(result)}};
      if (kind == "message") return bj::object{{"message", message_from_v03(result)}};
    }
  } catch (const A2AError& e) {
    throw A2AError(A2AError::Kind::invalid_agent_response,
                   std::string("the agent's reply: ") + e.what());
  }
  throw A2AError(A2AError::Kind::invalid_agent_response,
                 "the agent's A2A result is neither a task nor a message");
}

bj::object read_upstream_event(std::string_view data, WireVersion version) {
  const auto result = upstream_result(data);
  try {
    if (version == WireVersion::v1_0) {
      if (const auto* t = object_at(result, "task")) return bj::object{{"task", task_from_v03(*t)}};
      if (const auto* m = object_at(result, "message"))
        return bj::object{{"message", message_from_v03(*m)}};
      if (const auto* s = object_at(result, "statusUpdate")) {
        bj::object out = *s;
        out["status"] = status_from_v03(s->at("status").as_object());
        return bj::object{{"statusUpdate", std::move(out)}};
      }
      if (const auto* a = object_at(result, "artifactUpdate")) {
        bj::object out = *a;
        out["artifact"] = artifact_from(a->at("artifact").as_object());
        return bj::object{{"artifactUpdate", std::move(out)}};
      }
    } else {
      const auto kind = string_at(result, "kind");
      if (kind == "task") return bj::object{{"task", task_from_v03(result)}};
      if (kind == "message") return bj::object{{"message", message_from_v03(result)}};
      if (kind == "status-update") {
        bj::object out = result;
        out.erase("kind");
        out.erase("final");
        out["status"] = status_from_v03(result.at("status").as_object());
        return bj::object{{"statusUpdate", std::move(out)}};
      }
      if (kind == "artifact-update") {
        bj::object out = result;
        out.erase("kind");
        out["artifact"] = artifact_from(result.at("artifact").as_object());
        return bj::object{{"artifactUpdate", std::move(out)}};
      }
    }
  } catch (const A2AError& e) {
    throw A2AError(A2AError::Kind::invalid_agent_response,
                   std::string("the agent's event: ") + e.what());
  } catch (const std::exception& e) {
    throw A2AError(A2AError::Kind::invalid_agent_response,
                   std::string("the agent's event: ") + e.what());
  }
  throw A2AError(A2AError::Kind::invalid_agent_response,
                 "the agent sent an event of no known kind");
}

}  // namespace schemagate::a2a
