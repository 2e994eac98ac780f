// Seed 003 building blocks: signatures (RFC 8037 vectors), mappings, the breaking-change
// classifier and the versioning service over a real SQLite file.

#include "json/parse.hpp"
#include "jsonschema/schema.hpp"
#include "mapping/mapping.hpp"
#include "signing/jws.hpp"
#include "signing/key_store.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/contract_error.hpp"
#include "versioning/classifier.hpp"
#include "versioning/semver.hpp"
#include "versioning/versioning_service.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <filesystem>

namespace {

namespace bj = boost::json;
using namespace schemagate;

bj::value J(std::string_view text) {
  return json::parse(text);
}

std::array<std::uint8_t, 32> rfc8037_seed() {
  const auto d = signing::base64url_decode("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A");
  std::array<std::uint8_t, 32> seed{};
  std::copy(d->begin(), d->end(), seed.begin());
  return seed;
}

TEST(Signing, ReproducesRfc8037Ed25519ExampleByteForByte) {
  const auto key = signing::KeyPair::from_seed(rfc8037_seed());
  // RFC 8037 §A.1 public key and §A.3 thumbprint.
  EXPECT_EQ(signing::base64url_encode(std::string_view(
                reinterpret_cast<const char*>(key.public_key.data()), key.public_key.size())),
            "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo");
  EXPECT_EQ(key.kid, "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
  // §A.4: the JWS of "Example of Ed25519 signing".
  EXPECT_EQ(signing::sign_compact(key, bj::object{{"alg", "EdDSA"}}, "Example of Ed25519 signing"),
            "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-"
            "09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg");
  // §A.5: verification, and a changed payload fails.
  std::string problem;
  const auto parts = signing::parse_jws(
      "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-"
      "09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg",
      std::nullopt, problem);
  ASSERT_TRUE(parts) << problem;
  EXPECT_TRUE(signing::verify_signature(key.public_key, parts->signing_input, parts->signature));
  EXPECT_FALSE(
      signing::verify_signature(key.public_key, parts->signing_input + "x", parts->signature));
}

TEST(Signing, DetachedDocumentSignatureIgnoresMemberOrderAndCatchesChanges) {
  const auto key = signing::KeyPair::from_seed(rfc8037_seed());
  const auto jws = signing::sign_document(key, J(R"({"b":1,"a":[1,2]})"));
  EXPECT_NE(jws.find(".."), std::string::npos) << "the payload part is detached";
  const auto check = [&](std::string_view doc) {
    std::string problem;
    const auto parts = signing::parse_jws(jws, signing::signed_content(J(doc)), problem);
    return parts &&
           signing::verify_signature(key.public_key, parts->signing_input, parts->signature);
  };
  EXPECT_TRUE(check(R"({"a":[1,2],"b":1})"));
  EXPECT_TRUE(check(R"({"a":[1,2],"b":1,"signature":"anything"})"));
  EXPECT_FALSE(check(R"({"a":[1,2],"b":2})"));
  std::string problem;
  EXPECT_FALSE(signing::parse_jws("e30..AAAA", std::string("x"), problem));
  EXPECT_NE(problem.find("EdDSA"), std::string::npos) << problem;
}

class VersioningStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("sg-versioning-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    std::filesystem::remove(path_);
    store_ = store::open_store({path_.string(), 5000}, clock_);
  }
  void TearDown() override {
    store_.reset();
    for (const char* ext : {"", "-wal", "-shm"})
      std::filesystem::remove(path_.string() + ext);
  }
  std::filesystem::path path_;
  util::ManualClock clock_;
  std::unique_ptr<store::Store> store_;
};

TEST_F(VersioningStoreTest, KeysRotateAndOldSignaturesStillVerify) {
  signing::KeyStore keys(*store_, clock_);
  const auto doc = J(R"({"x":1})");
  const auto first = keys.sign(doc);
  const auto old_kid = keys.active().kid;
  keys.rotate();
  EXPECT_NE(keys.active().kid, old_kid);
  EXPECT_TRUE(keys.verify(doc, first).valid);
  EXPECT_EQ(keys.jwks().at("keys").as_array().size(), 2u);
  // Survives a restart: a new KeyStore over the same store signs with the newest key.
  signing::KeyStore again(*store_, clock_);
  EXPECT_EQ(again.active().kid, keys.active().kid);
  // A stranger's key is unknown until the operator trusts it.
  const auto stranger = signing::KeyPair::generate();
  const auto foreign = signing::sign_document(stranger, doc);
  auto v = keys.verify(doc, foreign);
  EXPECT_FALSE(v.valid);
  EXPECT_EQ(v.trust, signing::KeyStore::Trust::unknown);
  keys.trust(signing::public_jwk(stranger.public_key), "partner");
  v = keys.verify(doc, foreign);
  EXPECT_TRUE(v.valid);
  EXPECT_EQ(v.trust, signing::KeyStore::Trust::operator_trusted);
}

mapping::Mapping parse(std::string_view text) {
  auto r = mapping::parse_mapping(J(text));
  if (auto* p = std::get_if<std::vector<mapping::Problem>>(&r)) {
    ADD_FAILURE() << p->front().path << ": " << p->front().message;
    return {};
  }
  return std::get<mapping::Mapping>(r);
}

TEST(Mapping, AppliesEveryOperationIncludingInsideArrays) {
  const auto m = parse(R"({"contract":"c","from":"1.0.0","to":"2.0.0","operations":[
    {"op":"rename","from":"/dest","to":"/destination"},
    {"op":"add","path":"/currency","default":"EUR"},
    {"op":"add","path":"/schema","const":2},
    {"op":"remove","path":"/legacy"},
    {"op":"convert","path":"/class","table":{"eco":"economy","biz":"business"}},
    {"op":"derive","path":"/name","function":"concat","from":["/first","/last"],"separator":" ","remove_sources":true},
    {"op":"derive","path":"/when","function":"date","from":"/date","from_format":"us-date","to_format":"date","remove_sources":true},
    {"op":"derive","path":"/seats","function":"to_number","from":"/seats_text","remove_sources":true},
    {"op":"in","path":"/passengers","steps":[{"op":"rename","from":"/n","to":"/full_name"}]}
  ]})");
  const auto out =
      mapping::apply(m, J(R"({"dest":"Paris","currency":"USD","legacy":true,"class":"eco",
    "first":"Ada","last":"Lovelace","date":"03/07/2027","seats_text":"2","passengers":[{"n":"A"},{"n":"B"}]})"));
  EXPECT_EQ(out, J(R"({"destination":"Paris","currency":"USD","schema":2,"class":"economy",
    "name":"Ada Lovelace","when":"2027-03-07","seats":2,"passengers":[{"full_name":"A"},{"full_name":"B"}]})"));
  try {
    mapping::apply(m, J(R"({"class":"first"})"));
    FAIL() << "an unknown value must not pass silently";
  } catch (const mapping::ApplyError& e) {
    EXPECT_EQ(e.location(), "/class");
    EXPECT_NE(std::string(e.what()).find("\"first\""), std::string::npos) << e.what();
  }
}

TEST(Mapping, InvertsWhatCanBeUndoneAndSaysWhyNotOtherwise) {
  const auto m = parse(R"({"contract":"c","from":"1.0.0","to":"2.0.0","direction":"bidirectional",
    "operations":[{"op":"rename","from":"/dest","to":"/destination"},
    {"op":"convert","path":"/class","table":{"eco":"economy"}},
    {"op":"derive","path":"/name","function":"concat","from":["/first","/last"],"separator":" ","remove_sources":true},
    {"op":"add","path":"/currency","const":"EUR"}]})");
  const auto back = std::get<mapping::Mapping>(mapping::invert(m));
  EXPECT_EQ(back.from, "2.0.0");
  const auto src = J(R"({"dest":"Rome","class":"eco","first":"Ada","last":"Lovelace"})");
  EXPECT_EQ(mapping::apply(back, mapping::apply(m, src)), src);

  auto lossy = mapping::parse_mapping(J(R"({"contract":"c","from":"1.0.0","to":"2.0.0",
    "direction":"bidirectional","operations":[{"op":"remove","path":"/legacy"}]})"));
  ASSERT_TRUE(std::holds_alternative<std::vector<mapping::Problem>>(lossy));
  const auto& p = std::get<std::vector<mapping::Problem>>(lossy).front();
  EXPECT_EQ(p.path, "/direction");
  EXPECT_NE(p.message.find("restore"), std::string::npos) << p.message;

  auto bad = mapping::parse_mapping(J(R"({"contract":"c","from":"1","to":"2","operations":[
    {"op":"rename","from":"/a"},{"op":"frobnicate"},{"op":"add","path":"/x","const":1,"colour":2}]})"));
  ASSERT_TRUE(std::holds_alternative<std::vector<mapping::Problem>>(bad));
  const auto& problems = std::get<std::vector<mapping::Problem>>(bad);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0].path, "/operations/0");
  EXPECT_EQ(problems[1].path, "/operations/1/op");
  EXPECT_EQ(problems[2].path, "/operations/2/colour");
}

TEST(Mapping, ShortestPathAcrossTheVersionGraph) {
  const std::vector<mapping::Edge> edges{{"1.0.0", "1.1.0", 0, false},
                                         {"1.1.0", "2.0.0", 1, false},
                                         {"1.0.0", "2.0.0", 2, false},
                                         {"2.0.0", "3.0.0", 3, false}};
  const auto path = mapping::shortest_path(edges, "1.0.0", "3.0.0");
  ASSERT_TRUE(path);
  ASSERT_EQ(path->size(), 2u);
  EXPECT_EQ((*path)[0].mapping, 2u);
  EXPECT_EQ((*path)[1].mapping, 3u);
  EXPECT_FALSE(mapping::shortest_path(edges, "3.0.0", "1.0.0"));
}

versioning::Report classify(std::string_view a, std::string_view b, versioning::Direction d,
                            versioning::Policy p = versioning::Policy::strict) {
  versioning::Report r;
  versioning::classify(J(a), J(b), d, p, r);
  return r;
}

std::vector<std::string> kinds(const versioning::Report& r) {
  std::vector<std::string> out;
  for (const auto& c : r.changes)
    out.push_back(c.kind + (c.breaking ? "!" : ""));
  return out;
}

TEST(Classifier, NamesEachChangeWithTheDirectionThatMatters) {
  using versioning::Direction;
  const auto base =
      R"({"type":"object","properties":{"a":{"type":"string","enum":["x","y"]},"n":{"type":"integer","maximum":10}},"required":["a"]})";
  // Inputs: narrowing breaks, widening does not.
  EXPECT_EQ(
      kinds(classify(
          base,
          R"({"type":"object","properties":{"a":{"type":"string","enum":["x"]},"n":{"type":"integer","maximum":10}},"required":["a"]})",
          Direction::input)),
      std::vector<std::string>{"enum_narrowed!"});
  EXPECT_EQ(
      kinds(classify(
          base,
          R"({"type":"object","properties":{"a":{"type":"string","enum":["x","y","z"]},"n":{"type":"number","maximum":20}},"required":["a"]})",
          Direction::input)),
      (std::vector<std::string>{"enum_extended", "type_widened", "constraint_relaxed"}));
  // Outputs: the same widening breaks clients under STRICT, not under LENIENT.
  EXPECT_TRUE(
      classify(
          base,
          R"({"type":"object","properties":{"a":{"type":"string","enum":["x","y","z"]},"n":{"type":"integer","maximum":10}},"required":["a"]})",
          Direction::output)
          .breaking());
  EXPECT_FALSE(
      classify(
          base,
          R"({"type":"object","properties":{"a":{"type":"string","enum":["x","y","z"]},"n":{"type":"integer","maximum":10}},"required":["a"]})",
          Direction::output, versioning::Policy::lenient)
          .breaking());
  // Properties: optional additions are additive (§3.4); required ones and removals break.
  const auto added = classify(
      base,
      R"({"type":"object","properties":{"a":{"type":"string","enum":["x","y"]},"n":{"type":"integer","maximum":10},"o":{"type":"string"},"r":{"type":"string"}},"required":["a","r"]})",
      Direction::input);
  EXPECT_EQ(kinds(added),
            (std::vector<std::string>{"property_added_optional", "property_added_required!"}));
  EXPECT_EQ(added.required_bump(), "major");
  EXPECT_EQ(
      kinds(classify(
          base,
          R"({"type":"object","properties":{"a":{"type":"string","enum":["x","y"]}},"required":["a"],"additionalProperties":false})",
          Direction::input)),
      (std::vector<std::string>{"property_removed!", "additional_properties_closed!"}));
  // Descriptions only: a patch.
  const auto doc = classify(R"({"type":"string","description":"a"})",
                            R"({"type":"string","description":"b"})", Direction::input);
  EXPECT_EQ(kinds(doc), std::vector<std::string>{"description_changed"});
  EXPECT_EQ(doc.required_bump(), "patch");
}

TEST(Classifier, FollowsRefsIntoDefinitions) {
  const auto r = classify(
      R"({"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"object","properties":{"age":{"type":"integer","minimum":0}}}}})",
      R"({"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"object","properties":{"age":{"type":"integer","minimum":18}}}}})",
      versioning::Direction::input);
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].kind, "constraint_tightened");
  EXPECT_EQ(r.changes[0].instance_path, "/p/age");
  EXPECT_TRUE(r.changes[0].breaking);
}

TEST(Classifier, BreakingChangesNeedANewMajorVersion) {
  const auto r =
      classify(R"({"type":"string"})", R"({"type":"integer"})", versioning::Direction::input);
  EXPECT_NE(versioning::bump_problem("1.2.0", "1.3.0", r), "");
  EXPECT_EQ(versioning::bump_problem("1.2.0", "2.0.0", r), "");
  EXPECT_EQ(versioning::bump_problem("1.2.0", "2.0.0-rc.1", r), "");
  EXPECT_EQ(versioning::bump_problem("0.2.0", "0.3.0", r), "");
  EXPECT_NE(versioning::bump_problem("0.2.0", "0.2.1", r), "");
}

TEST_F(VersioningStoreTest, DeprecationNeedsNinetyDaysAndNeverMovesEarlier) {
  signing::KeyStore keys(*store_, clock_);
  versioning::VersioningService service(*store_, clock_, keys);
  auto plan = service.plan_publish("c", versioning::VersioningService::Kind::template_family,
                                   "1.0.0", J(R"({"type":"object"})"), nullptr);
  store_->commit(plan.writes);
  const auto day = std::chrono::hours(24);
  const auto date = [&](int days) { return util::format_rfc3339(clock_.now() + days * day); };
  try {
    service.deprecate("c", "1.0.0", date(89));
    FAIL();
  } catch (const util::ContractError& e) {
    EXPECT_EQ(e.status(), 400);
  }
  service.deprecate("c", "1.0.0", date(120));
  try {
    service.deprecate("c", "1.0.0", date(100));
    FAIL();
  } catch (const util::ContractError& e) {
    EXPECT_EQ(e.status(), 409);
  }
  service.deprecate("c", "1.0.0", date(150));  // later is fine
  auto n = service.negotiate("c", std::string("1.0.0"), false, false);
  EXPECT_NE(n.deprecation_warning.find("deprecated"), std::string::npos);
  clock_.advance(151 * day);
  try {
    service.negotiate("c", std::string("1.0.0"), false, false);
    FAIL() << "a withdrawn version leaves accepts";
  } catch (const util::ContractError& e) {
    EXPECT_EQ(e.code(), "UnsupportedSchemaVersion");
  }
}

TEST_F(VersioningStoreTest, MappingsComposeAlongTheVersionGraphAndDecideWhatIsAccepted) {
  signing::KeyStore keys(*store_, clock_);
  versioning::VersioningService service(*store_, clock_, keys);
  using Kind = versioning::VersioningService::Kind;
  const auto publish = [&](const std::string& v, std::string_view in, std::string_view out) {
    auto plan = service.plan_publish("a:op", Kind::operation, v, J(in), J(out));
    store_->commit(plan.writes);
    service.forget("a:op");
  };
  publish("1.0.0", R"({"type":"object","required":["a"]})", R"({"type":"object"})");
  publish("2.0.0", R"({"type":"object","required":["b"]})", R"({"type":"object"})");
  publish("3.0.0", R"({"type":"object","required":["c"]})", R"({"type":"object"})");
  EXPECT_EQ(*service.current("a:op"), "3.0.0");
  service.put_mapping(
      "a:op", "1.0.0", "2.0.0",
      J(R"({"direction":"bidirectional","operations":[{"op":"rename","from":"/a","to":"/b"}]})"));
  service.put_mapping("a:op", "2.0.0", "3.0.0",
                      J(R"({"operations":[{"op":"rename","from":"/b","to":"/c"}]})"));
  // Two hops forward; back only where a mapping is invertible and bidirectional.
  const auto forward = service.route("a:op", "1.0.0", "3.0.0");
  ASSERT_TRUE(forward);
  EXPECT_EQ(mapping::apply(*forward, J(R"({"a":1})")), J(R"({"c":1})"));
  EXPECT_TRUE(service.route("a:op", "2.0.0", "1.0.0"));
  EXPECT_FALSE(service.route("a:op", "3.0.0", "1.0.0"));
  // The agent speaks 3.0.0 and has an output: older versions need a way back for replies.
  auto profile = service.profile("a:op");
  EXPECT_EQ(profile.at("accepts"), J(R"(["3.0.0"])"));
  try {
    service.negotiate("a:op", std::string("1.0.0"), false, false);
    FAIL() << "1.0.0 cannot be answered in its own version";
  } catch (const util::ContractError& e) {
    EXPECT_EQ(e.code(), "UnsupportedSchemaVersion");
  }
  // With permission to upgrade, the request is translated and answered in 3.0.0.
  const auto n = service.negotiate("a:op", std::string("1.0.0"), true, false);
  EXPECT_EQ(n.served, "3.0.0");
  EXPECT_EQ(n.response_version, "3.0.0");
  ASSERT_TRUE(n.inbound);
  EXPECT_EQ(mapping::apply(*n.inbound, J(R"({"a":"x"})")), J(R"({"c":"x"})"));
  // A way back makes 1.0.0 and 2.0.0 accepted.
  service.put_mapping("a:op", "3.0.0", "2.0.0",
                      J(R"({"operations":[{"op":"rename","from":"/c","to":"/b"}]})"));
  profile = service.profile("a:op");
  EXPECT_EQ(profile.at("accepts"), J(R"(["1.0.0","2.0.0","3.0.0"])"));
  // Going back to an older number is refused for an operation.
  try {
    service.plan_publish("a:op", Kind::operation, "2.5.0", J("{}"), J("{}"));
    FAIL();
  } catch (const util::ContractError& e) {
    EXPECT_EQ(e.status(), 409);
  }
}

}  // namespace

// Found by fuzz_semver: numeric pre-release identifiers of any length compare as numbers
// (they were converted to 64 bits: 25 digits threw out_of_range, a 500 on publish).
TEST(SemVer, NumericPrereleaseIdentifiersOfAnyLengthCompareAsNumbers) {
  using versioning::SemVer;
  const auto big = SemVer::parse("1.0.0-1888888888888888888888888");
  const auto bigger = SemVer::parse("1.0.0-9888888888888888888888888");
  const auto longer = SemVer::parse("1.0.0-18888888888888888888888888");
  ASSERT_TRUE(big && bigger && longer);
  EXPECT_LT(*big, *bigger);
  EXPECT_LT(*bigger, *longer);
  EXPECT_LT(*SemVer::parse("1.0.0-2"), *SemVer::parse("1.0.0-10"));
  EXPECT_LT(*SemVer::parse("1.0.0-10"), *SemVer::parse("1.0.0-alpha"));
  EXPECT_EQ(*big <=> *SemVer::parse("1.0.0-1888888888888888888888888"),
            std::strong_ordering::equal);
}
