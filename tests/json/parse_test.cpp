#include "json/parse.hpp"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>

using schemagate::json::parse;
using schemagate::json::ParseError;
using schemagate::json::ParseLimits;

namespace {

ParseError parse_error(std::string_view text, const ParseLimits& limits = {}) {
  try {
    parse(text, limits);
  } catch (const ParseError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a parse error for " << text;
  return ParseError("none", 0, 0, 0);
}

TEST(Parse, ReadsEveryKindOfValue) {
  const auto v = parse(R"({"s":"x","i":-3,"u":18446744073709551615,"d":2.5,"b":true,"n":null,
                          "a":[1,[2]],"o":{}})");
  const auto& o = v.as_object();
  EXPECT_EQ(o.at("s"), "x");
  EXPECT_EQ(o.at("i").as_int64(), -3);
  EXPECT_EQ(o.at("u").as_uint64(), 18446744073709551615ull);
  EXPECT_EQ(o.at("d").as_double(), 2.5);
  EXPECT_EQ(o.at("b"), true);
  EXPECT_TRUE(o.at("n").is_null());
  EXPECT_EQ(o.at("a").as_array().size(), 2u);
  EXPECT_TRUE(o.at("o").as_object().empty());
}

TEST(Parse, DoublesAreCorrectlyRounded) {
  for (const char* text :
       {"0.1", "2.2250738585072011e-308", "2.2250738585072012e-308", "1.7976931348623157e308",
        "4.9e-324", "9007199254740993.0", "0.30000000000000004", "1e23", "8.41e21", "5e-324",
        "123456789012345678901234567890", "1.00000000000000011102230246251565"}) {
    double expected = 0;
    std::from_chars(text, text + std::strlen(text), expected);
    EXPECT_EQ(parse(text).as_double(), expected) << text;
  }
}

TEST(Parse, UnderflowIsZeroAndOverflowIsAnError) {
  EXPECT_EQ(parse("1e-400").as_double(), 0.0);
  EXPECT_TRUE(std::signbit(parse("-1e-400").as_double()));
  const auto e = parse_error("[1e400]");
  EXPECT_NE(e.reason().find("too large"), std::string::npos) << e.what();
}

TEST(Parse, ErrorsNameLineAndColumn) {
  const auto e = parse_error("{\n  \"a\": [1, 2,\n  ]\n}");
  EXPECT_EQ(e.line(), 3u);
  EXPECT_EQ(e.column(), 3u);
  EXPECT_NE(std::string(e.what()).find("unexpected ']'"), std::string::npos) << e.what();
}

TEST(Parse, ColumnsCountCharactersNotBytes) {
  const auto e = parse_error("[\"\xc3\xa9\xc3\xa9\", x]");
  EXPECT_EQ(e.line(), 1u);
  EXPECT_EQ(e.column(), 8u);
}

TEST(Parse, DescribesCommonMistakes) {
  EXPECT_NE(parse_error("").reason().find("end of input"), std::string::npos);
  EXPECT_NE(parse_error("{\"a\":1").reason().find("end of input"), std::string::npos);
  EXPECT_NE(parse_error("{} x").reason().find("after the JSON value"), std::string::npos);
  EXPECT_NE(parse_error("[nul]").reason().find("invalid literal 'nul'"), std::string::npos);
  EXPECT_NE(parse_error("[\"\\ud800\"]").reason().find("unpaired UTF-16 surrogate"),
            std::string::npos);
  EXPECT_NE(parse_error("[\"\\udc00\"]").reason().find("surrogate"), std::string::npos);
  EXPECT_NE(parse_error("[\"\xff\"]").reason().find("UTF-8"), std::string::npos);
  EXPECT_NE(parse_error("[\"a\x01\"]").reason().find("U+0001"), std::string::npos);
}

TEST(Parse, EnforcesDepthLimit) {
  ParseLimits limits;
  limits.max_depth = 4;
  EXPECT_NO_THROW(parse("[[[[1]]]]", limits));
  const auto e = parse_error("[[[[[1]]]]]", limits);
  EXPECT_NE(e.reason().find("limit of 4"), std::string::npos) << e.what();
  // The default limit stops a hostile document long before the stack is at risk, and no
  // configured limit can go past the ceiling.
  EXPECT_THROW(parse(std::string(100000, '[')), ParseError);
  ParseLimits huge;
  huge.max_depth = 1'000'000;
  const std::size_t n = schemagate::json::kMaxParseDepth + 1;
  const auto e2 = parse_error(std::string(n, '[') + std::string(n, ']'), huge);
  EXPECT_NE(e2.reason().find("limit of 4096"), std::string::npos) << e2.what();
}

TEST(Parse, EnforcesStringAndDocumentLimits) {
  ParseLimits limits;
  limits.max_string_bytes = 8;
  EXPECT_NO_THROW(parse("[\"12345678\"]", limits));
  EXPECT_NE(parse_error("[\"123456789\"]", limits).reason().find("limit of 8"), std::string::npos);
  EXPECT_NE(parse_error("{\"123456789\":1}", limits).reason().find("limit of 8"),
            std::string::npos);
  limits.max_document_bytes = 10;
  EXPECT_NE(parse_error("[1,2,3,4,5,6]", limits).reason().find("larger than the limit"),
            std::string::npos);
}

TEST(Parse, RejectsDuplicateKeysUnlessAllowed) {
  const auto e = parse_error(R"({"a":1,"b":{"a":2,"a":3}})");
  EXPECT_NE(e.reason().find("duplicate key \"a\""), std::string::npos) << e.what();
  EXPECT_EQ(e.column(), 21u);  // the duplicate key's closing quote
  ParseLimits lax;
  lax.reject_duplicate_keys = false;
  EXPECT_EQ(parse(R"({"a":1,"a":2})", lax).at("a"), 2);
}

}  // namespace
