#include "json/jcs.hpp"
#include "json/parse.hpp"

#include "util/files.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace fs = std::filesystem;
using schemagate::json::canonicalize;
using schemagate::json::format_number;

namespace {

TEST(Jcs, ReproducesTheReferenceVectors) {
  const fs::path root = fs::path(SCHEMAGATE_SHARED_DIR) / "testdata/jcs/testdata";
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(root / "input")) {
    const auto name = entry.path().filename();
    const auto expected = schemagate::util::read_file(root / "output" / name);
    EXPECT_EQ(canonicalize(schemagate::json::parse(schemagate::util::read_file(entry.path()))),
              expected)
        << name;
    // outhex holds the same bytes as hex pairs: check we agree with it too.
    std::istringstream hex(
        schemagate::util::read_file(root / "outhex" / fs::path(name).replace_extension(".txt")));
    std::string bytes;
    for (std::string pair; hex >> pair;)
      bytes += static_cast<char>(std::stoi(pair, nullptr, 16));
    EXPECT_EQ(bytes, expected) << name;
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

TEST(Jcs, SortsKeysByUtf16CodeUnits) {
  // U+1F600 (surrogates D83D DE00) sorts before U+FB01 in UTF-16, after it in UTF-8.
  const auto v = schemagate::json::parse(R"({"\ufb01":1,"\ud83d\ude00":2,"a":3})");
  EXPECT_EQ(canonicalize(v), "{\"a\":3,\"\xf0\x9f\x98\x80\":2,\"\xef\xac\x81\":1}");
}

TEST(Jcs, EscapesOnlyWhatJsonStringifyEscapes) {
  const auto v = schemagate::json::parse(R"(["\u0000\u001f\b\t\n\f\r\"\\/\u007f\u2028"])");
  EXPECT_EQ(canonicalize(v), "[\"\\u0000\\u001f\\b\\t\\n\\f\\r\\\"\\\\/\x7f\xe2\x80\xa8\"]");
}

TEST(Jcs, FormatsNumbersAsEcmascript) {
  EXPECT_EQ(format_number(0.0), "0");
  EXPECT_EQ(format_number(-0.0), "0");
  EXPECT_EQ(format_number(1.0), "1");
  EXPECT_EQ(format_number(-1.5), "-1.5");
  EXPECT_EQ(format_number(1e21), "1e+21");
  EXPECT_EQ(format_number(1e20), "100000000000000000000");
  EXPECT_EQ(format_number(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(format_number(1e-6), "0.000001");
  EXPECT_EQ(format_number(1e-7), "1e-7");
  EXPECT_EQ(format_number(1.5e-7), "1.5e-7");
  EXPECT_EQ(format_number(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(format_number(5e-324), "5e-324");
  EXPECT_EQ(format_number(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(format_number(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(format_number(333333333.33333329), "333333333.3333333");
  EXPECT_THROW(format_number(std::nan("")), schemagate::json::CanonicalizationError);
  EXPECT_THROW(format_number(INFINITY), schemagate::json::CanonicalizationError);
}

// A million doubles formatted by Node itself, compared digit for digit.
TEST(Jcs, NumberFormattingMatchesNodeOnAMillionDoubles) {
  const std::string cmd = std::string("node ") + SCHEMAGATE_SOURCE_DIR +
                          "/tests/json/number_oracle.mjs 1000000 20261121";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char line[128];
  std::size_t compared = 0, mismatches = 0;
  while (std::fgets(line, sizeof line, pipe)) {
    std::string_view text(line);
    if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    const auto space = text.find(' ');
    ASSERT_NE(space, std::string_view::npos) << text;
    const auto bits = std::stoull(std::string(text.substr(0, space)), nullptr, 16);
    const double x = std::bit_cast<double>(static_cast<std::uint64_t>(bits));
    const auto expected = text.substr(space + 1);
    const auto got = format_number(x);
    if (got != expected && ++mismatches <= 10) {
      ADD_FAILURE() << "bits " << text.substr(0, space) << ": node " << expected << ", we " << got;
    }
    ++compared;
  }
  ASSERT_EQ(::pclose(pipe), 0) << "node failed";
  EXPECT_EQ(compared, 1000000u);
  EXPECT_EQ(mismatches, 0u);
}

}  // namespace
