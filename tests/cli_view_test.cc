// `tfdiag view` (issue 8): the CLI execs tfdiag-view (beside tfdiag, then on PATH) with the
// arguments passed through, and says how to build it when it is missing.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

TEST(CliView, ScreenshotThroughTheCliIsWritten) {
  std::string why = ViewerSkipReason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  std::string png = dir.File("cli.png");
  RunResult r = RunUnderXvfb(std::string(TFDIAG_BINARY) + " view --size 1280x800 --screenshot '" +
                             png + "' --layout '" + png + ".layout' '" + HotPsSample(dir) + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Image img = DecodePng(png);
  ASSERT_EQ(img.w, 1280);
  ASSERT_EQ(img.h, 800);
  EXPECT_EQ(r.out, "wrote " + png + " (1280x800)\n") << "stdout says only what was written";
  std::map<std::string, Rect> panels = PanelRects(ReadFile(png + ".layout"));
  ASSERT_EQ(panels.count("ps_load"), 1u) << r.out;
  EXPECT_GT(CountColour(img, panels["ps_load"], kHotR, kHotG, kHotB), 2000) << "hot PS bar";
}

TEST(CliView, ArgumentsReachTheViewer) {
  std::string why = ViewerSkipReason();
  if (!why.empty()) GTEST_SKIP() << why;
  // The viewer's own usage error, so the arguments were passed through to it.
  const std::string sample = std::string(TFDIAG_SOURCE_DIR) + "/samples/hot-ps.tf1.json.gz";
  RunResult r = RunTfdiag("view --size 10x10 '" + sample + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tfdiag-view: error: --size 10x10"), std::string::npos) << r.err;
  r = RunTfdiag("view '" + sample + "' missing.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;

  r = RunTfdiag("view --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tfdiag view FILE..."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--screenshot"), std::string::npos) << "the viewer's options: " << r.out;
  EXPECT_NE(r.out.find("wheel"), std::string::npos) << "mouse and keys: " << r.out;
}

TEST(CliView, MissingViewerSaysHowToBuildIt) {
  // tfdiag alone in a directory, with a PATH that has no tfdiag-view either.
  TempDir dir;
  const std::string bin = dir.File("tfdiag"), empty = dir.File("empty");
  ASSERT_EQ(
      std::system(("cp '" + std::string(TFDIAG_BINARY) + "' '" + bin + "' && mkdir '" + empty + "'")
                      .c_str()),
      0);
  const std::string env = "env PATH='" + empty + "' '" + bin + "' ";
  const std::string out = dir.File("out"), err = dir.File("err");
  int rc = std::system((env + "view x.json >'" + out + "' 2>'" + err + "'").c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  std::string e = ReadFile(err);
  EXPECT_NE(e.find("tfdiag-view was not found"), std::string::npos) << e;
  EXPECT_NE(e.find("make build"), std::string::npos) << e;
  EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 1) << e;

  // --help still explains the command, and how to get the viewer.
  rc = std::system((env + "view --help >'" + out + "' 2>'" + err + "'").c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 0);
  EXPECT_NE(ReadFile(out).find("make build"), std::string::npos) << ReadFile(out);
}

}  // namespace
}  // namespace tfdiag::test
