// libcurl is loaded only by `--prometheus` (collectors/prometheus/curl_api.h): a tfdiag process
// analyzing a file never maps it nor the ~20 libraries it brings. The Prometheus queries
// themselves (libcurl loaded) are tested against a real server in cluster_prometheus_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(CurlLoad, AnalyzeOfAFileDoesNotMapLibcurl) {
  TempDir tmp;
  // tfdiag blocks opening the FIFO (openat, syscall 257 on x86-64) after the dynamic loader has
  // mapped every library it links; its maps are read then, and the sample is written to let it
  // finish.
  const std::string script =
      "cd " + tmp.path() + " && mkfifo in.json && (" + TFDIAG_BINARY +
      " analyze --no-progress in.json > report.txt 2>&1 & p=$!; "
      "for i in $(seq 200); do "
      "  [ \"$(cut -d' ' -f1 /proc/$p/syscall 2>/dev/null)\" = 257 ] && break;"
      "  sleep 0.05; done; "
      "cp /proc/$p/maps maps.txt; gzip -dc " +
      std::string(TFDIAG_SOURCE_DIR) + "/samples/hot-ps.tf1.json.gz > in.json; wait $p)";
  RunResult r = RunShell(script);
  ASSERT_EQ(r.exit_code, 0) << r.err << ReadFile(tmp.File("report.txt"));
  const std::string maps = ReadFile(tmp.File("maps.txt"));
  // The control: the libraries linked at start are there.
  ASSERT_NE(maps.find("/libprotobuf"), std::string::npos) << maps;
  EXPECT_EQ(maps.find("/libcurl"), std::string::npos) << maps;
  EXPECT_EQ(maps.find("/libssl"), std::string::npos) << maps;
  // And the analysis ran on what came through the FIFO.
  EXPECT_NE(ReadFile(tmp.File("report.txt")).find("hot-ps"), std::string::npos);
}

}  // namespace
}  // namespace tfdiag::test
