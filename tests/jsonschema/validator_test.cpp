// Behaviour of the validator beyond the official suite: messages, output, limits, safety.

#include "json/parse.hpp"
#include "jsonschema/schema.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <thread>

using schemagate::json::parse;
using namespace schemagate::jsonschema;

namespace {

Schema compile(std::string_view text, CompileOptions opts = {}) {
  return Schema::compile(parse(text), opts);
}

std::string schema_error(std::string_view text, CompileOptions opts = {}) {
  try {
    compile(text, opts);
  } catch (const SchemaError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a schema error for " << text;
  return {};
}

TEST(Validator, ErrorsSayWhatAndWhere) {
  const auto s = compile(R"({"type":"object","required":["name"],"properties":{"name":{},
      "age":{"type":"integer","minimum":0},
      "tags":{"type":"array","items":{"type":"string","maxLength":3}}},
      "additionalProperties":false})");
  const auto r = s.evaluate(parse(R"({"age":"x","tags":["ok","toolong"],"extra":1})"));
  ASSERT_FALSE(r.valid);
  std::map<std::string, std::string> by_instance;
  for (const auto& e : r.errors)
    by_instance[e.instance_location + " " + e.keyword_location] = e.error;
  EXPECT_EQ(by_instance[" /required"], "missing required property \"name\"");
  EXPECT_EQ(by_instance["/age /properties/age/type"], "expected integer, got string");
  EXPECT_EQ(by_instance["/tags/1 /properties/tags/items/maxLength"],
            "must be at most 3 characters long, got 7");
  EXPECT_EQ(by_instance["/extra /additionalProperties"],
            "property \"extra\" is not allowed (additionalProperties)");
  EXPECT_EQ(r.errors.size(), 4u);
  EXPECT_FALSE(s.validate(parse(R"({"age":"x"})")));
  EXPECT_TRUE(s.validate(parse(R"({"name":"n","age":3,"tags":["a"]})")));
}

TEST(Validator, KeywordLocationsFollowReferences) {
  const auto s = compile(R"({"$id":"https://example.com/root","$defs":{"pos":{"minimum":1}},
                            "properties":{"n":{"$ref":"#/$defs/pos"}}})");
  const auto r = s.evaluate(parse(R"({"n":0})"));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].keyword_location, "/properties/n/$ref/minimum");
  EXPECT_EQ(r.errors[0].absolute_keyword_location, "https://example.com/root#/$defs/pos/minimum");
  EXPECT_EQ(r.errors[0].instance_location, "/n");
}

TEST(Validator, OutputFormats) {
  const auto s = compile(R"({"type":"string","title":"Name"})");
  const auto bad = s.evaluate(parse("1"), OutputFormat::basic).to_json(OutputFormat::basic);
  EXPECT_EQ(bad.at("valid"), false);
  EXPECT_EQ(bad.at("errors").as_array().size(), 1u);
  const auto flag = s.evaluate(parse("1"), OutputFormat::flag).to_json(OutputFormat::flag);
  EXPECT_EQ(flag, parse(R"({"valid":false})"));
  const auto good = s.evaluate(parse(R"("x")")).to_json(OutputFormat::basic);
  EXPECT_EQ(good.at("annotations").at(0).at("annotation"), "Name");
}

TEST(Validator, DialectComesFromDollarSchemaOrTheDefault) {
  EXPECT_EQ(compile("{}").dialect(), Dialect::draft2020_12);
  EXPECT_EQ(compile(R"({"$schema":"http://json-schema.org/draft-07/schema#"})").dialect(),
            Dialect::draft7);
  CompileOptions opts;
  opts.default_dialect = Dialect::draft2019_09;
  EXPECT_EQ(compile("{}", opts).dialect(), Dialect::draft2019_09);
  // Array-form items means different things in draft-07 and 2020-12.
  const auto d7 = compile(R"({"$schema":"http://json-schema.org/draft-07/schema#",
                             "items":[{"type":"integer"}],"additionalItems":false})");
  EXPECT_FALSE(d7.validate(parse("[1, 2]")));
  EXPECT_TRUE(d7.validate(parse("[1]")));
}

TEST(Validator, UnresolvableReferenceNamesIt) {
  const auto msg =
      schema_error(R"({"properties":{"a":{"$ref":"https://nowhere.example/s.json"}}})");
  EXPECT_NE(msg.find("https://nowhere.example/s.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/properties/a"), std::string::npos) << msg;
  EXPECT_NE(schema_error(R"({"$ref":"#/$defs/missing"})").find("#/$defs/missing"),
            std::string::npos);
  EXPECT_NE(schema_error(R"({"$ref":"#nope"})").find("no anchor \"nope\""), std::string::npos);
}

TEST(Validator, RegisteredDocumentsResolveWithoutNetwork) {
  SchemaRegistry registry;
  registry.add("https://example.com/name.json", parse(R"({"type":"string","minLength":1})"));
  CompileOptions opts;
  opts.registry = &registry;
  const auto s = compile(R"({"properties":{"n":{"$ref":"https://example.com/name.json"}}})", opts);
  EXPECT_TRUE(s.validate(parse(R"({"n":"x"})")));
  EXPECT_FALSE(s.validate(parse(R"({"n":""})")));
}

TEST(Validator, SchemasAreCheckedWhenCompiled) {
  EXPECT_NE(schema_error(R"({"minimum":"3"})").find("minimum must be a number"), std::string::npos);
  EXPECT_NE(schema_error(R"({"type":"strin"})").find("unknown type \"strin\""), std::string::npos);
  EXPECT_NE(schema_error(R"({"required":"a"})").find("required"), std::string::npos);
  EXPECT_NE(schema_error(R"({"properties":{"a":3}})").find("/properties/a"), std::string::npos);
  EXPECT_NE(schema_error(R"({"$schema":"http://json-schema.org/draft-04/schema#"})")
                .find("not supported"),
            std::string::npos);
  EXPECT_NE(
      schema_error(R"({"$schema":"https://example.com/unknown-meta"})").find("unknown $schema"),
      std::string::npos);
}

TEST(Validator, PatternsRunInLinearTime) {
  // Catastrophic backtracking for a backtracking engine; RE2 answers at once.
  const auto s = compile(R"({"pattern":"^(a+)+$"})");
  EXPECT_FALSE(s.validate(parse("\"" + std::string(5000, 'a') + "!\"")));
  EXPECT_TRUE(s.validate(parse("\"aaaa\"")));
  const auto msg = schema_error(R"({"pattern":"(?=x)y"})");
  EXPECT_NE(msg.find("lookahead"), std::string::npos) << msg;
  EXPECT_NE(msg.find("RE2"), std::string::npos) << msg;
  EXPECT_NE(schema_error(R"({"patternProperties":{"(a)\\1":{}}})").find("backreference"),
            std::string::npos);
}

TEST(Validator, EcmascriptRegexSemantics) {
  EXPECT_TRUE(compile(R"({"pattern":"^\\d+$"})").validate(parse(R"("123")")));
  EXPECT_FALSE(compile(R"({"pattern":"^\\d+$"})").validate(parse("\"\u0661\"")));  // Arabic-Indic 1
  EXPECT_TRUE(compile(R"({"pattern":"^\\s$"})").validate(parse("\"\\u00a0\"")));
  EXPECT_FALSE(compile(R"({"pattern":"^.$"})").validate(parse("\"\\n\"")));
  EXPECT_TRUE(compile(R"({"pattern":"^\\p{Letter}+$"})").validate(parse("\"\u00e9t\u00e9\"")));
}

TEST(Validator, ReferenceCyclesThatNeverConsumeTheInstanceEndCleanly) {
  CompileOptions opts;
  opts.max_evaluation_depth = 64;
  const auto s = compile(R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},
                            "$ref":"#/$defs/a"})",
                         opts);
  EXPECT_FALSE(s.validate(parse("1")));
  const auto r = s.evaluate(parse("1"));
  EXPECT_FALSE(r.valid);
  ASSERT_FALSE(r.errors.empty());
  EXPECT_NE(r.errors.back().error.find("deeper than 64"), std::string::npos);
}

TEST(Validator, DeepInstancesAreBoundedNotCrashing) {
  const auto s = compile(R"({"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"}}},
                            "$ref":"#/$defs/n"})");
  schemagate::json::ParseLimits limits;
  limits.max_depth = schemagate::json::kMaxParseDepth;
  const auto deep = parse(std::string(4000, '[') + std::string(4000, ']'), limits);
  EXPECT_FALSE(s.validate(deep));  // over the evaluation depth limit: refused, not overflowed
  const auto shallow = parse(std::string(50, '[') + std::string(50, ']'));
  EXPECT_TRUE(s.validate(shallow));
}

TEST(Validator, SchemaSizeIsLimited) {
  CompileOptions opts;
  opts.max_schema_nodes = 10;
  std::string big = R"({"properties":{)";
  for (int i = 0; i < 20; ++i)
    big += (i ? "," : "") + std::string("\"p") + std::to_string(i) + "\":{}";
  big += "}}";
  EXPECT_NE(schema_error(big, opts).find("limit"), std::string::npos);
}

TEST(Validator, DeeplyNestedSchemasAreRefusedNotOverflowing) {
  auto nested = [](int depth) {
    std::string s;
    for (int i = 0; i < depth; ++i)
      s += "{\"items\":";
    s += "{}";
    for (int i = 0; i < depth; ++i)
      s += "}";
    return s;
  };
  schemagate::json::ParseLimits limits;
  limits.max_depth = schemagate::json::kMaxParseDepth;
  EXPECT_NO_THROW(Schema::compile(parse(nested(200), limits)));
  try {
    Schema::compile(parse(nested(4000), limits));
    FAIL() << "a 4000-level schema compiled";
  } catch (const SchemaError& e) {
    EXPECT_NE(std::string(e.what()).find("deeper than 256"), std::string::npos) << e.what();
  }
}

TEST(Validator, FormatIsAnAnnotationUnlessAsserted) {
  const std::string schema = R"({"format":"date-time"})";
  EXPECT_TRUE(compile(schema).validate(parse(R"("yesterday")")));
  CompileOptions opts;
  opts.assert_format = true;
  const auto strict = compile(schema, opts);
  EXPECT_FALSE(strict.validate(parse(R"("yesterday")")));
  EXPECT_TRUE(strict.validate(parse(R"("2026-11-21T08:00:00Z")")));
  EXPECT_EQ(strict.evaluate(parse(R"("x")")).errors.at(0).error, "is not a valid date-time");
}

TEST(Validator, NumbersCompareExactly) {
  const auto s = compile(R"({"maximum":9007199254740992})");
  EXPECT_FALSE(s.validate(parse("9007199254740993")));
  EXPECT_TRUE(s.validate(parse("9007199254740992")));
  EXPECT_TRUE(compile(R"({"type":"integer"})").validate(parse("1.0")));
  EXPECT_TRUE(compile(R"({"multipleOf":0.01})").validate(parse("0.07")));
  EXPECT_TRUE(compile(R"({"const":1})").validate(parse("1.0")));
}

TEST(Validator, SharedAcrossThreads) {
  const auto s = compile(R"({"type":"object","properties":{"n":{"type":"integer"}}})");
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        ok += s.validate(parse(R"({"n":1})")) && !s.validate(parse(R"({"n":"x"})"));
      }
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(ok.load(), 4000);
}

}  // namespace

namespace {

// Simple patterns run on a fast matcher; it must agree with RE2 on every subject.
TEST(Validator, FastPatternsAgreeWithRe2) {
  const std::vector<std::string> patterns = {"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
                                             "^[a-z][a-z0-9_]*$",
                                             "[0-9]+",
                                             "^a*a*b$",
                                             "ab?c",
                                             "^\\\\d{1,3}(x)?$",
                                             "^.+@.+$",
                                             "^[^/]*$",
                                             "x{2,}y",
                                             "^\\\\w+\\\\.json$",
                                             "^$",
                                             "a.c",
                                             "^[A-Z]{3}$",
                                             "^v?[0-9]+\\\\.[0-9]+",
                                             "[-_.]",
                                             "^[a-c-]+$",
                                             "^[\\\\]x]+$"};
  std::mt19937 rng(7);
  const std::string alphabet = "abcxyAZ0129-_./@ \\]\n";
  int compared = 0;
  for (const auto& p : patterns) {
    const auto schema_text = "{\"pattern\":\"" + p + "\"}";
    const auto fast = compile(schema_text);
    CompileOptions plain;
    plain.fast_patterns = false;
    const auto re2 = compile(schema_text, plain);
    for (int i = 0; i < 400; ++i) {
      std::string s;
      const int len = static_cast<int>(rng() % 14);
      for (int k = 0; k < len; ++k)
        s += alphabet[rng() % alphabet.size()];
      if (i % 7 == 0) s = "2026-11-" + std::to_string(rng() % 40);
      const boost::json::value v(s);
      ASSERT_EQ(fast.validate(v), re2.validate(v)) << "pattern " << p << " subject \"" << s << "\"";
      ++compared;
    }
  }
  EXPECT_EQ(compared, 400 * static_cast<int>(patterns.size()));
}

}  // namespace

namespace {

// Property lookups take different paths for small, ambiguous and large sets of names; each must
// find exactly the right subschema.
TEST(Validator, PropertyLookupsFindTheRightSubschema) {
  // "abcde" and "abcXe" agree on every byte the direct lookup samples.
  const auto ambiguous = compile(R"({"properties":{"abcde":{"type":"integer"},
                                                 "abcXe":{"type":"string"}},
                                    "additionalProperties":false})");
  EXPECT_TRUE(ambiguous.validate(parse(R"({"abcde":1,"abcXe":"s"})")));
  EXPECT_FALSE(ambiguous.validate(parse(R"({"abcde":"s"})")));
  EXPECT_FALSE(ambiguous.validate(parse(R"({"abcXe":1})")));
  EXPECT_FALSE(ambiguous.validate(parse(R"({"abcYe":1})")));
  EXPECT_FALSE(ambiguous.validate(parse(R"({"":1})")));

  std::string many = R"({"additionalProperties":false,"required":["p0","p99"],"properties":{)";
  for (int i = 0; i < 100; ++i) {
    many += (i ? "," : "") + std::string("\"p") + std::to_string(i) +
            "\":{\"const\":" + std::to_string(i) + "}";
  }
  many += "}}";
  const auto large = compile(many);
  EXPECT_TRUE(large.validate(parse(R"({"p0":0,"p99":99,"p42":42})")));
  EXPECT_FALSE(large.validate(parse(R"({"p0":0,"p99":99,"p42":41})")));
  EXPECT_FALSE(large.validate(parse(R"({"p0":0,"p42":42})")));  // p99 is required
  EXPECT_FALSE(large.validate(parse(R"({"p0":0,"p99":99,"p100":1})")));
  const auto r = large.evaluate(parse(R"({"p99":99,"q":1})"));
  ASSERT_EQ(r.errors.size(), 2u);
}

}  // namespace
