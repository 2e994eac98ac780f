#pragma once

#include "http/router.hpp"
#include "json/parse.hpp"

namespace schemagate::versioning {
class VersioningService;
}

namespace schemagate::api {

class Auth;

// Seed 003 over HTTP:
//   GET  /.well-known/schema-manifest.json             every contract's compatibility profile
//   GET  /.well-known/jwks.json                        the server's signing keys
//   GET  /contracts/{c}/compatibility                  one profile (signed)
//   POST /contracts/{c}/compatibility                  {from, to, policy?} -> change report
//   POST /contracts/{c}/handshake                      {supported_versions} -> chosen version
//   PUT  /contracts/{c}/versions/{v}/deprecation       {deprecation_date}
//   GET|PUT /mappings/{c}/{from}/{to}                  signed mapping documents
//   POST /signing/keys/rotate, GET|PUT /signing/trusted-keys, DELETE /signing/trusted-keys/{kid}
void add_versioning_routes(http::Router& router, versioning::VersioningService& service, Auth& auth,
                           const json::ParseLimits& limits);

}  // namespace schemagate::api
