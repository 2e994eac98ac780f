#include "http/router.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

using schemagate::http::Error;
using schemagate::http::Request;
using schemagate::http::Response;
using schemagate::http::Router;

namespace {

Response tag(const std::string& t) {
  return Response::text(200, t);
}

Router make_router() {
  Router r;
  r.add("GET", "/agents", [](Request&) { return tag("list"); });
  r.add("POST", "/agents", [](Request&) { return tag("create"); });
  r.add("GET", "/agents/{id}", [](Request& q) { return tag("get " + q.param("id")); });
  r.add("PUT", "/agents/{id}", [](Request& q) { return tag("put " + q.param("id")); });
  r.add("POST", "/agents/search", [](Request&) { return tag("search"); });
  r.add("POST", "/agents/{id}/invoke", [](Request& q) { return tag("invoke " + q.param("id")); });
  r.add("GET", "/mappings/{scenario}/{from}/{to}", [](Request& q) {
    return tag(q.param("scenario") + ":" + q.param("from") + "->" + q.param("to"));
  });
  r.add("GET", "/ui/{path...}", [](Request& q) { return tag("ui " + q.param("path")); });
  return r;
}

std::string call(const Router& r, const std::string& method, const std::string& path) {
  Request req;
  req.method = method;
  req.path = path;
  const auto m = r.route(req);
  return (*m.handler)(req).body;
}

int status_of(const Router& r, const std::string& method, const std::string& path) {
  try {
    call(r, method, path);
    return 200;
  } catch (const Error& e) {
    return e.status();
  }
}

TEST(Router, BindsPathParameters) {
  const auto r = make_router();
  EXPECT_EQ(call(r, "GET", "/agents/translator"), "get translator");
  EXPECT_EQ(call(r, "POST", "/agents/a1/invoke"), "invoke a1");
  EXPECT_EQ(call(r, "GET", "/mappings/flight/1.0.0/2.0.0"), "flight:1.0.0->2.0.0");
}

TEST(Router, PercentDecodesParametersAfterSplitting) {
  const auto r = make_router();
  EXPECT_EQ(call(r, "GET", "/agents/a%2Fb%20c"), "get a/b c");
  EXPECT_EQ(status_of(r, "GET", "/agents/bad%zz"), 400);
}

TEST(Router, LiteralSegmentsBeatParameters) {
  const auto r = make_router();
  EXPECT_EQ(call(r, "POST", "/agents/search"), "search");
  EXPECT_EQ(call(r, "PUT", "/agents/search"), "put search");
}

TEST(Router, RestParameterTakesTheRemainder) {
  const auto r = make_router();
  EXPECT_EQ(call(r, "GET", "/ui/assets/app.js"), "ui assets/app.js");
  EXPECT_EQ(call(r, "GET", "/ui/"), "ui ");
}

TEST(Router, HeadIsRoutedAsGet) {
  const auto r = make_router();
  EXPECT_EQ(call(r, "HEAD", "/agents"), "list");
}

TEST(Router, UnknownPathIs404) {
  const auto r = make_router();
  EXPECT_EQ(status_of(r, "GET", "/nothing"), 404);
  EXPECT_EQ(status_of(r, "GET", "/agents/a/b/c"), 404);
  EXPECT_EQ(status_of(r, "GET", "/agents/"), 404);  // an empty id is not an id
}

TEST(Router, WrongMethodIs405ListingAllowedOnes) {
  const auto r = make_router();
  Request req;
  req.method = "DELETE";
  req.path = "/agents";
  try {
    r.route(req);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), 405);
    EXPECT_EQ(e.code(), "MethodNotAllowed");
    ASSERT_EQ(e.extra_headers.size(), 1u);
    EXPECT_EQ(e.extra_headers[0].name, "Allow");
    EXPECT_EQ(e.extra_headers[0].value, "GET, POST");
  }
}

TEST(Router, RefusesDuplicateRoutes) {
  Router r;
  r.add("GET", "/x", [](Request&) { return tag("a"); });
  EXPECT_THROW(r.add("GET", "/x", [](Request&) { return tag("b"); }), std::logic_error);
  EXPECT_THROW(r.add("GET", "/y/{rest...}/z", [](Request&) { return tag("c"); }), std::logic_error);
}

}  // namespace

TEST(ResponseJson, KeepsMemberOrderAndWritesNumbersAsJavaScriptDoes) {
  const auto body = boost::json::parse(
      R"({"z": 0.029, "a": 0.3836, "big": 9007199254740993, "neg": -1.5e-7, "huge": 1e21,
          "s": "line\nbreak \"quoted\" é", "list": [1, 2.5, null, true]})");
  const auto r = schemagate::http::Response::json(200, body);
  EXPECT_EQ(r.body,
            "{\"z\":0.029,\"a\":0.3836,\"big\":9007199254740993,\"neg\":-1.5e-7,\"huge\":1e+21,"
            "\"s\":\"line\\nbreak \\\"quoted\\\" é\",\"list\":[1,2.5,null,true]}");
  EXPECT_EQ(r.header("Content-Type"), "application/json");
}
