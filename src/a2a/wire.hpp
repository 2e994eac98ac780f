#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

// The A2A data model on the wire (protocol v1.0, ProtoJSON; and v0.3, which this server also
// speaks). Inside schemagate every object is held in its v1.0 shape; 0.3 shapes are read into
// it and written out of it only at the edge.
namespace schemagate::a2a {

// Seed 001: the input/output schemas extension.
inline constexpr std::string_view kSchemasExtension =
    "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1";

enum class WireVersion { v0_3, v1_0 };

// The A2A-Version service parameter: absent or empty means 0.3 (spec §3.6.2); "1.0" (a patch
// part is tolerated and ignored) means 1.0. nullopt: a version this server does not speak.
std::optional<WireVersion> parse_wire_version(std::optional<std::string_view> header);

// One failure with the A2A error it stands for (spec §3.3.2, §5.4); the adapters map the kind to
// a JSON-RPC code, an HTTP status and a google.rpc.ErrorInfo reason.
class A2AError : public std::runtime_error {
 public:
  enum class Kind {
    parse_error,                      // -32700
    invalid_request,                  // -32600
    method_not_found,                 // -32601
    invalid_params,                   // -32602 (structured input errors too)
    internal,                         // -32603
    task_not_found,                   // -32001
    task_not_cancelable,              // -32002
    push_notification_not_supported,  // -32003
    unsupported_operation,            // -32004
    content_type_not_supported,       // -32005
    invalid_agent_response,           // -32006
    extended_card_not_configured,     // -32007
    extension_support_required,       // -32008
    version_not_supported,            // -32009
  };
  // `details`: extra google.rpc detail objects (each with "@type"), e.g. a BadRequest listing
  // field violations; `metadata`: the ErrorInfo's metadata map.
  A2AError(Kind kind, std::string message, boost::json::array details = {},
           boost::json::object metadata = {})
      : std::runtime_error(std::move(message)),
        kind_(kind),
        details_(std::move(details)),
        metadata_(std::move(metadata)) {}
  Kind kind() const { return kind_; }
  const boost::json::array& details() const { return details_; }
  const boost::json::object& metadata() const { return metadata_; }

  int json_rpc_code() const;
  int http_status() const;
  std::string_view reason() const;  // TASK_NOT_FOUND, ...
  // The detail objects an error carries on the wire: an ErrorInfo first, then `details`.
  boost::json::array wire_details() const;

 private:
  Kind kind_;
  boost::json::array details_;
  boost::json::object metadata_;
};

// A google.rpc.BadRequest detail with one field violation per entry.
struct FieldViolation {
  std::string field;
  std::string description;
};
boost::json::object bad_request(const std::vector<FieldViolation>& violations);

// application/json;schema=<name> (the name quoted when it is not a token); util's
// parse_media_type reads it back.
std::string schema_media_type(std::string_view schema_name);  // application/json;schema=<name>

// A part as v1.0 holds it. Reading accepts both shapes: v1.0 ({"text"}, {"data"}, {"url"},
// {"raw"} with mediaType/filename) and 0.3 ({"kind": "text"|"data"|"file", ...} with
// metadata.mimeType). Throws A2AError invalid_params naming `where` when it is neither.
boost::json::object read_part(const boost::json::value& part, const std::string& where);
enum class PartKind { text, data, file };
PartKind kind_of(const boost::json::object& part);
// The part's media type: v1.0 `mediaType`, else seed 001's `metadata.mimeType`.
std::string media_type_of(const boost::json::object& part);
// Seed 002's part name: `metadata.name` (or `name`).
std::string name_of(const boost::json::object& part);

// A message in its v1.0 shape, from either wire shape (role "user" -> "ROLE_USER", parts read by
// read_part). Throws A2AError invalid_params naming what is missing.
boost::json::object read_message(const boost::json::value& message, const std::string& where);

// The 0.3 shapes of v1.0 objects, for answers to 0.3 callers.
boost::json::object part_v03(const boost::json::object& part);
boost::json::object message_v03(const boost::json::object& message);
boost::json::object task_v03(const boost::json::object& task);
boost::json::object artifact_v03(const boost::json::object& artifact);
// A StreamResponse ({"task"|"message"|"statusUpdate"|"artifactUpdate": ...}) as the bare 0.3
// event ({"kind": "task"|"message"|"status-update"|"artifact-update", ...}).
boost::json::object stream_event_v03(const boost::json::object& stream_response);

bool is_terminal(std::string_view state);  // TASK_STATE_COMPLETED, _FAILED, _CANCELED, _REJECTED
std::string state_v03(std::string_view state);       // TASK_STATE_COMPLETED -> completed
std::string state_from_v03(std::string_view state);  // completed -> TASK_STATE_COMPLETED

}  // namespace schemagate::a2a

namespace schemagate::a2a {

// Talking to an agent that speaks A2A itself (a fronted agent).
// The JSON-RPC request body of SendMessage (v1.0) or message/send (0.3) for a v1.0
// SendMessageRequest ({"message", "configuration"?, "metadata"?}).
// `streaming`: SendStreamingMessage (0.3: message/stream) instead.
std::string upstream_send_body(const boost::json::object& request, WireVersion version,
                               std::string_view rpc_id, bool streaming = false);
// The upstream's JSON-RPC answer to it, as a v1.0 SendMessageResponse ({"task"} or
// {"message"}). Throws A2AError: the agent's own JSON-RPC error (its code kept in the message),
// or invalid_agent_response for an answer that is not a JSON-RPC result of that shape.
boost::json::object read_upstream_reply(std::string_view body, WireVersion version);
// One server-sent event's data from the agent's stream (a JSON-RPC response whose result is a
// StreamResponse, or in 0.3 an event with its "kind"), as a v1.0 StreamResponse. Throws
// A2AError as read_upstream_reply does.
boost::json::object read_upstream_event(std::string_view data, WireVersion version);
// A Task / Message of either shape (0.3 or v1.0) read into the v1.0 shape, parts normalized.
boost::json::object task_from_v03(const boost::json::object& task);
boost::json::object message_from_v03(const boost::json::object& message);

}  // namespace schemagate::a2a
