#include "api/version_envelope.hpp"

namespace schemagate::api {

namespace bj = boost::json;

exchange::VersionRequest read_version_request(const bj::object& o) {
  exchange::VersionRequest v;
  if (const auto* sv = o.if_contains("schema_version"); sv && !sv->is_null()) {
    if (!sv->is_string() || sv->get_string().empty()) {
      throw http::Error(400, "InvalidInput", "schema_version must be a version string (\"1.2.0\")");
    }
    v.schema_version = std::string(sv->get_string());
  }
  if (const auto* vn = o.if_contains("version_negotiation"); vn && !vn->is_null()) {
    if (!vn->is_object()) {
      throw http::Error(400, "InvalidInput",
                        "version_negotiation must be {\"permit_upgrade\": bool, "
                        "\"permit_downgrade\": bool}");
    }
    for (auto [name, flag] : {std::pair{"permit_upgrade", &v.permit_upgrade},
                              std::pair{"permit_downgrade", &v.permit_downgrade}}) {
      if (const auto* f = vn->get_object().if_contains(name)) {
        if (!f->is_bool()) {
          throw http::Error(400, "InvalidInput",
                            "version_negotiation." + std::string(name) + " must be true or false");
        }
        *flag = f->get_bool();
      }
    }
  }
  return v;
}

bool is_version_envelope(const bj::value& body) {
  const auto* o = body.if_object();
  if (!o || !o->contains("schema_version") || !o->contains("payload")) return false;
  for (const auto& kv : *o) {
    const auto k = kv.key();
    if (k != "schema_version" && k != "version_negotiation" && k != "payload" && k != "operation" &&
        k != "stream") {
      return false;
    }
  }
  return true;
}

}  // namespace schemagate::api
