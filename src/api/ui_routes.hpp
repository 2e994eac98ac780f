#pragma once

#include "http/router.hpp"
#include "util/embedded.hpp"

namespace schemagate::api {

// The web console's files, compiled into the binary (ui/ at build time): nothing is fetched
// from anywhere at run time.
std::span<const util::EmbeddedFile> ui_files();
// docs/openapi.json, compiled in.
std::span<const util::EmbeddedFile> openapi_files();

// GET /ui/ and /ui/{file}: the console, with a Content-Security-Policy that allows this origin
// only. It talks to the API with the key a person pastes (kept in the tab, never shown again).
// GET /openapi.json: the OpenAPI 3.1 document of the whole REST API (ETag revalidated).
void add_ui_routes(http::Router& router);

}  // namespace schemagate::api
