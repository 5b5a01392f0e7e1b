// The scaling outlook's confidence where its replay of the capture is busier than the capture
// (issue 44 item 3: honest confidence). Independent suite report12 20020 (spent; 4 PS of one
// thread, 10 asynchronous workers; bench/twins/indep): the replay model's held waits are fitted
// to the out-of-order replay, whose median step matches the capture's while its throughput at
// the captured count is 26% above the measured one; scaled from it, ps:1's CPU saturates early
// and the outlook was -14% and -26% off indepsim at 2x and 4x with confidence high. It is now
// low, saying why. About a minute.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <string>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(OutlookConfidence, AReplayBusierThanTheCaptureIsLow) {
  if (!HavePython3()) {
    GTEST_SKIP() << "python3 is not installed: the independent simulator needs it";
  }
  TempDir dir;
  const RunResult r =
      RunShell(std::string("python3 ") + SourceDir() + "/bench/outlook/outlook_sweep.py " +
               BuiltTfdiag() + " --jobs indep:20020 --work " + dir.path() + " --cache " +
               dir.path() + " --json " + dir.File("out.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  rapidjson::Document d;
  d.Parse(ReadFile(dir.File("out.json")).c_str());
  ASSERT_TRUE(d.IsObject() && d.HasMember("rows") && d["rows"].Size() == 1u) << r.out;
  const rapidjson::Value& row = d["rows"][0];
  ASSERT_STREQ(row["withheld"].GetString(), "") << r.out;
  EXPECT_STREQ(row["confidence"].GetString(), "low") << r.out;
  // The capture (kept under --cache) analysed again: the reason is said.
  std::string capture;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    const std::string f = e.path().filename().string();
    if (f.rfind("capture.", 0) == 0 && f.find(".tmp.") == std::string::npos) capture = e.path();
  }
  ASSERT_NE(capture, "") << "no capture kept in " << dir.path();
  const RunResult a = RunShell(std::string(BuiltTfdiag()) + " analyze " + capture);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("more steps/s than measured"), std::string::npos) << a.out;
}

}  // namespace
}  // namespace tfdiag::test
