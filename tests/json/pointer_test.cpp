#include "json/pointer.hpp"
#include "json/parse.hpp"

#include <gtest/gtest.h>

using schemagate::json::escape_token;
using schemagate::json::Pointer;
using schemagate::json::PointerError;
using schemagate::json::resolve;

namespace {

// The example document of RFC 6901 §5.
const auto kDoc = schemagate::json::parse(R"({
  "foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5,
  "k\"l": 6, " ": 7, "m~n": 8})");

TEST(Pointer, ResolvesTheRfcExamples) {
  EXPECT_EQ(*resolve(kDoc, Pointer::parse("")), kDoc);
  EXPECT_EQ(*resolve(kDoc, Pointer::parse("/foo/0")), "bar");
  EXPECT_EQ(*resolve(kDoc, Pointer::parse("/")), 0);
  EXPECT_EQ(*resolve(kDoc, Pointer::parse("/a~1b")), 1);
  EXPECT_EQ(*resolve(kDoc, Pointer::parse("/c%d")), 2);
  EXPECT_EQ(*resolve(kDoc, Pointer::parse("/i\\j")), 5);
  EXPECT_EQ(*resolve(kDoc, Pointer::parse("/ ")), 7);
  EXPECT_EQ(*resolve(kDoc, Pointer::parse("/m~0n")), 8);
}

TEST(Pointer, ResolvesTheRfcFragmentExamples) {
  EXPECT_EQ(*resolve(kDoc, Pointer::parse_fragment("#/foo/1")), "baz");
  EXPECT_EQ(*resolve(kDoc, Pointer::parse_fragment("#/c%25d")), 2);
  EXPECT_EQ(*resolve(kDoc, Pointer::parse_fragment("#/k%22l")), 6);
  EXPECT_EQ(*resolve(kDoc, Pointer::parse_fragment("#/%20")), 7);
  EXPECT_THROW(Pointer::parse_fragment("#/%2"), PointerError);
  EXPECT_THROW(Pointer::parse_fragment("#/%zz"), PointerError);
}

TEST(Pointer, MissingTargetsResolveToNothing) {
  EXPECT_EQ(resolve(kDoc, Pointer::parse("/nope")), nullptr);
  EXPECT_EQ(resolve(kDoc, Pointer::parse("/foo/2")), nullptr);
  EXPECT_EQ(resolve(kDoc, Pointer::parse("/foo/-")), nullptr);
  EXPECT_EQ(resolve(kDoc, Pointer::parse("/foo/01")), nullptr);
  EXPECT_EQ(resolve(kDoc, Pointer::parse("/foo/+1")), nullptr);
  EXPECT_EQ(resolve(kDoc, Pointer::parse("/foo/0/x")), nullptr);
}

TEST(Pointer, RejectsMalformedPointers) {
  EXPECT_THROW(Pointer::parse("foo"), PointerError);
  EXPECT_THROW(Pointer::parse("/a~2b"), PointerError);
  try {
    Pointer::parse("/ab~");
    FAIL();
  } catch (const PointerError& e) {
    EXPECT_NE(std::string(e.what()).find("position 3"), std::string::npos) << e.what();
  }
}

TEST(Pointer, EscapesAndRoundTrips) {
  EXPECT_EQ(escape_token("a/b~c"), "a~1b~0c");
  EXPECT_EQ(escape_token("~1"), "~01");
  const auto p = Pointer().child("a/b").child("~").child(std::size_t{3});
  EXPECT_EQ(p.to_string(), "/a~1b/~0/3");
  EXPECT_EQ(Pointer::parse(p.to_string()), p);
  EXPECT_EQ(p.tokens()[1], "~");
}

}  // namespace
