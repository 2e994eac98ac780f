// `schemagate jcs FILE` against the RFC 8785 reference vectors, byte for byte.

#include "support/process.hpp"

#include "util/files.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

TEST(JcsCli, ReproducesEveryReferenceVectorExactly) {
  const fs::path root = fs::path(SCHEMAGATE_SHARED_DIR) / "testdata/jcs/testdata";
  ASSERT_TRUE(fs::exists(root / "input")) << root;
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(root / "input")) {
    const auto name = entry.path().filename();
    const auto r =
        schemagate::testing::run_command({SCHEMAGATE_BINARY, "jcs", entry.path().string()});
    EXPECT_EQ(r.status, 0) << name << ": " << r.err;
    EXPECT_EQ(r.out, schemagate::util::read_file(root / "output" / name)) << name;
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

TEST(JcsCli, ReportsWhereTheInputIsBroken) {
  const auto file = fs::temp_directory_path() / "schemagate-jcs-broken.json";
  std::ofstream(file) << "{\"a\": [1, 2,]}";
  const auto r = schemagate::testing::run_command({SCHEMAGATE_BINARY, "jcs", file.string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("line 1, column 13"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
