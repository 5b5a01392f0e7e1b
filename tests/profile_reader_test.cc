// The profilers' protobuf readers (collectors/xplane, collectors/runmetadata) against an
// independent reading of the real files in ../shared/traces (tests/wire_reader.h), plus log
// directories and bad input.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include "collectors/load_inputs.h"
#include "collectors/runmetadata/run_metadata_reader.h"
#include "collectors/xplane/log_dir.h"
#include "collectors/xplane/profile_format.h"
#include "collectors/xplane/xplane_reader.h"
#include "core/capture_builder.h"
#include "samples/simulator.h"
#include "tests/test_util.h"
#include "tests/viewer_util.h"
#include "tests/wire_reader.h"

namespace tfdiag::test {
namespace {

#define REQUIRE_SHARED() \
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository"

const char* kXPlane = "tfprof_d6853e0_GPU-multi-worker_34.83.195.179_6003.xplane.pb";
const char* kTrace = "tfe_b3b9f35_local.trace";

// What the wire walk finds in an XSpace.
struct PlaneFacts {
  std::string name;
  int64_t events = 0;
  std::map<std::string, int64_t> line_events;  // by line name
  std::map<int64_t, std::string> metadata;     // event metadata id -> name
  std::vector<int64_t> event_metadata_ids;     // of every event, in order
};

std::vector<PlaneFacts> WalkXSpace(std::string_view file) {
  std::vector<PlaneFacts> planes;
  EXPECT_TRUE(WalkFields(file, [&](uint32_t f, int wt, uint64_t, std::string_view plane) {
    if (f != 1 || wt != 2) return;
    PlaneFacts p;
    WalkFields(plane, [&](uint32_t pf, int, uint64_t, std::string_view v) {
      if (pf == 2) p.name = std::string(v);
      if (pf == 3) {  // XLine
        std::string line_name;
        int64_t n = 0;
        WalkFields(v, [&](uint32_t lf, int, uint64_t, std::string_view lv) {
          if (lf == 2) line_name = std::string(lv);
          if (lf == 4) {
            ++n;
            int64_t md = 0;
            WalkFields(lv, [&](uint32_t ef, int ewt, uint64_t x, std::string_view) {
              if (ef == 1 && ewt == 0) md = static_cast<int64_t>(x);
            });
            p.event_metadata_ids.push_back(md);
          }
        });
        p.line_events[line_name] += n;
        p.events += n;
      }
      if (pf == 4) {  // map entry {key = 1, value = 2: XEventMetadata {name = 2}}
        int64_t key = 0;
        std::string name;
        MetadataEntry(v, &key, &name);
        p.metadata[key] = name;
      }
    });
    planes.push_back(std::move(p));
  }));
  return planes;
}

// TSL's tf_op_utils.cc naming of a TF op event, as a regular expression of the test's own.
const std::regex kTfOp(R"(^[A-Za-z0-9._][A-Za-z0-9_./>-]*:[A-Z_][A-Za-z0-9_]*$)");

TEST(XPlaneReader, RealFileMatchesAnIndependentWireReading) {
  REQUIRE_SHARED();
  const std::string path = SharedTrace(kXPlane);
  const std::string bytes = ReadFile(path);
  const std::vector<PlaneFacts> planes = WalkXSpace(bytes);
  ASSERT_EQ(planes.size(), 9u);
  ASSERT_EQ(planes[0].name, "/host:CPU");

  // Expected: host-plane TF ops and their types; GPU planes' stream-line events.
  std::multiset<std::string> want_types;
  int64_t want_host_ops = 0, total_events = 0, want_stream_events = 0;
  for (const PlaneFacts& p : planes) total_events += p.events;
  for (int64_t md : planes[0].event_metadata_ids) {
    const std::string& name = planes[0].metadata.at(md);
    if (std::regex_match(name, kTfOp)) {
      ++want_host_ops;
      want_types.insert(name.substr(name.find(':') + 1));
    } else if (name == "RecvTensor" || name == "SendTensor") {
      ++want_host_ops;
      want_types.insert(name);
    }
  }
  for (size_t i = 1; i < planes.size(); ++i) {
    for (const auto& [line, n] : planes[i].line_events) {
      if (line.rfind("Stream #", 0) == 0) want_stream_events += n;
    }
  }
  EXPECT_GT(want_host_ops, 1000);

  CaptureBuilder b;
  ASSERT_TRUE(ReadXSpace(path, &b).ok());
  Capture c = b.Finish();
  ASSERT_EQ(c.stats.files.size(), 1u);
  EXPECT_EQ(c.stats.files[0].events, total_events);
  EXPECT_EQ(c.stats.files[0].format, "xplane");
  int64_t host_ops = 0, stream_ops = 0;
  std::multiset<std::string> types;
  for (uint32_t d = 0; d < c.devices.size(); ++d) {
    const bool host = c.Str(c.devices[d].type) == "CPU";
    const int64_t n = c.device_ops[d].second - c.device_ops[d].first;
    (host ? host_ops : stream_ops) += n;
    if (!host) {
      EXPECT_GT(n, 0) << c.Str(c.devices[d].name);
      EXPECT_EQ(c.Str(c.devices[d].sub).rfind("stream:", 0), 0u) << c.Str(c.devices[d].name);
      continue;
    }
    for (uint32_t i = c.device_ops[d].first; i < c.device_ops[d].second; ++i) {
      types.insert(std::string(c.Str(c.OpType(c.ops[i]))));
    }
  }
  EXPECT_EQ(host_ops, want_host_ops);
  EXPECT_EQ(types, want_types);
  EXPECT_EQ(stream_ops, want_stream_events);
  // One host without a cluster spec or pod name: localhost:0, with its 8 GPUs' streams.
  ASSERT_EQ(c.tasks.size(), 1u);
  EXPECT_EQ(c.TaskLabelOf(0), "localhost:0");
  EXPECT_EQ(c.stats.TotalSkipped(), 0);
  // Steps from the group_id stats: one training step, the group the GPUs' Steps line names; the
  // tf.data function runs are no steps (tf2_events_test.cc checks its span).
  EXPECT_EQ(c.steps.size(), 1u);
}

TEST(XPlaneReader, HostIsMappedByTfConfigAndSaysSo) {
  REQUIRE_SHARED();
  TempDir dir;
  const std::string run = dir.path() + "/plugins/profile/2020_01_01_00_00_00";
  ASSERT_EQ(RunShell("mkdir -p " + run + " && ln -s '" + SharedTrace(kXPlane) + "' " + run + "/" +
                     "34.83.195.179_6003.xplane.pb")
                .exit_code,
            0);
  LoadOptions lo;
  std::vector<std::string> notes;
  lo.notes = &notes;
  lo.cluster.jobs["worker"] = {"34.83.195.178:6003", "34.83.195.179:6003"};
  StatusOr<Capture> c = LoadInputs({dir.path()}, lo);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->tasks.size(), 1u);
  EXPECT_EQ(c->TaskLabelOf(0), "worker:1");
  std::string all;
  for (const std::string& n : notes) all += n + "\n";
  EXPECT_NE(all.find("read as worker:1 (TF_CONFIG address 34.83.195.179:6003)"), std::string::npos)
      << all;
  EXPECT_NE(all.find("2020_01_01_00_00_00"), std::string::npos) << all;
}

TEST(ProfilerTraceReader, RealFileMatchesAnIndependentWireReading) {
  REQUIRE_SHARED();
  const std::string path = SharedTrace(kTrace);
  const std::string bytes = ReadFile(path);
  int64_t events = 0, ops = 0;
  std::multiset<std::string> want_types;
  ASSERT_TRUE(WalkFields(bytes, [&](uint32_t f, int, uint64_t, std::string_view ev) {
    if (f != 4) return;
    ++events;
    std::string name, label;
    WalkFields(ev, [&](uint32_t ef, int, uint64_t, std::string_view v) {
      if (ef == 3) name = std::string(v);
      if (ef == 11) {  // args entry {key = 1, value = 2}
        std::string k, val;
        WalkFields(v, [&](uint32_t af, int, uint64_t, std::string_view av) {
          (af == 1 ? k : val) = std::string(av);
        });
        if (k == "label") label = val;
      }
    });
    if (label.find("device=") != std::string::npos) {
      ++ops;
      want_types.insert(name);
    }
  }));
  EXPECT_EQ(events, 507);
  EXPECT_GT(ops, 50);
  CaptureBuilder b;
  Status s = ReadProfilerTrace(path, &b);
  ASSERT_TRUE(s.ok()) << s.message();
  Capture c = b.Finish();
  EXPECT_EQ(c.stats.files[0].events, events);
  EXPECT_EQ(static_cast<int64_t>(c.ops.size()), ops);
  std::multiset<std::string> types;
  for (const OpRow& op : c.ops.Rows()) types.insert(std::string(c.Str(c.OpType(op))));
  EXPECT_EQ(types, want_types);
  // The labels name two CPU devices of localhost.
  std::set<std::string> devs;
  for (const DeviceRow& d : c.devices) devs.insert(std::string(c.Str(d.name)));
  EXPECT_EQ(devs, (std::set<std::string>{"/job:localhost/replica:0/task:0/device:CPU:0",
                                         "/job:localhost/replica:0/task:0/device:CPU:3"}));
}

TEST(ProfileFormat, SniffsByContentNotName) {
  REQUIRE_SHARED();
  EXPECT_EQ(SniffProfile(ReadFile(SharedTrace(kXPlane)).substr(0, 256)), ProfileFormat::kXSpace);
  EXPECT_EQ(SniffProfile(ReadFile(SharedTrace(kTrace)).substr(0, 256)),
            ProfileFormat::kProfilerTrace);
  EXPECT_EQ(SniffProfile(ReadFile(SharedTrace("tfe_e0cd14f_timeline_client.json")).substr(0, 256)),
            ProfileFormat::kNone);
  EXPECT_EQ(SniffProfile("step_stats {\n  dev_stats {"), ProfileFormat::kRunMetadataText);
  EXPECT_EQ(SniffProfile("# comment\ndev_stats {"), ProfileFormat::kStepStatsText);
}

// Runs `tfdiag analyze` on `args`; expects exit 2 and one error line holding every `want`.
void ExpectRejected(const std::string& args, const std::vector<std::string>& want) {
  RunResult r = RunTfdiag("analyze " + args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  std::string error;
  for (size_t at = 0; at < r.err.size();) {
    size_t nl = r.err.find('\n', at);
    std::string line = r.err.substr(at, nl - at);
    if (line.rfind("note:", 0) != 0 && !line.empty()) error += line + "\n";
    at = nl == std::string::npos ? r.err.size() : nl + 1;
  }
  EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 1) << error;
  for (const std::string& w : want)
    EXPECT_NE(error.find(w), std::string::npos) << w << "\n" << error;
}

TEST(ProfileBadInput, TruncatedCorruptAndForeignFilesFailWithFileAndOffset) {
  REQUIRE_SHARED();
  TempDir dir;
  const std::string bytes = ReadFile(SharedTrace(kXPlane));
  // Cut inside the host plane: its length runs past the end.
  WriteFile(dir.File("cut.xplane.pb"), bytes.substr(0, bytes.size() / 2));
  ExpectRejected(dir.File("cut.xplane.pb"), {"cut.xplane.pb: byte 0:", "truncated"});
  // The second plane's bytes overwritten: a parse error at that plane's payload offset.
  std::string corrupt = bytes;
  std::vector<size_t> payloads;  // where each plane's bytes start
  WalkFields(bytes, [&](uint32_t f, int, uint64_t, std::string_view v) {
    if (f == 1) payloads.push_back(static_cast<size_t>(v.data() - bytes.data()));
  });
  ASSERT_GE(payloads.size(), 2u);
  const size_t second = payloads[1];
  ASSERT_GT(second, 1u);
  for (size_t i = second; i < second + 16; ++i) corrupt[i] = '\xff';
  WriteFile(dir.File("bad.xplane.pb"), corrupt);
  // The error points at the first corrupt byte: the second plane's payload.
  ExpectRejected(dir.File("bad.xplane.pb"),
                 {"bad.xplane.pb: byte " + std::to_string(second) + ": expected"});
  // A Trace cut short.
  const std::string trace = ReadFile(SharedTrace(kTrace));
  WriteFile(dir.File("cut.trace"), trace.substr(0, trace.size() - 7));
  ExpectRejected(dir.File("cut.trace"), {"cut.trace: byte ", "truncated"});
  // A RunMetadata in text that breaks off.
  WriteFile(dir.File("md.pbtxt"), "step_stats {\n  dev_stats {\n    device: \"/job:ps/task:0\"\n");
  ExpectRejected(dir.File("md.pbtxt"), {"md.pbtxt: line ", "RunMetadata"});
}

TEST(ProfileLogDir, LatestRunByDefaultRunByNameAndErrors) {
  REQUIRE_SHARED();
  TempDir dir;
  const std::string prof = dir.path() + "/logs/train/plugins/profile";
  ASSERT_EQ(
      RunShell("mkdir -p " + prof + "/2019-10-07_12-49-01 " + prof + "/2019-10-08_09-00-00 " +
               prof + "/empty && ln -s '" + SharedTrace(kTrace) + "' " + prof +
               "/2019-10-07_12-49-01/local.trace && ln -s '" + SharedTrace(kXPlane) + "' " + prof +
               "/2019-10-08_09-00-00/worker-0.xplane.pb && mkdir -p " + dir.path() + "/nothing")
          .exit_code,
      0);
  // The latest run is the one whose name says the latest time (issue 38): a directory named
  // otherwise ("empty") sorts before timed runs. Named, the run without host files is an error
  // listing the runs.
  StatusOr<ProfileRun> latest = FindProfileRun(dir.path() + "/logs", "");
  ASSERT_TRUE(latest.ok()) << latest.status().message();
  EXPECT_EQ(latest->name, "2019-10-08_09-00-00");
  StatusOr<ProfileRun> empty = FindProfileRun(dir.path() + "/logs", "empty");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty: no host files"), std::string::npos);
  EXPECT_NE(empty.status().message().find("2019-10-08_09-00-00"), std::string::npos);
  StatusOr<ProfileRun> named = FindProfileRun(dir.path() + "/logs", "2019-10-08_09-00-00");
  ASSERT_TRUE(named.ok());
  ASSERT_EQ(named->files.size(), 1u);
  // End to end: the named run is read as one job, its host mapped by the pod name.
  RunResult r = RunTfdiag("analyze -f json --run 2019-10-08_09-00-00 '" + dir.path() + "/logs'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"worker:0\""), std::string::npos);
  EXPECT_NE(r.err.find("read as worker:0 (pod name)"), std::string::npos) << r.err;
  ExpectRejected("--run empty '" + dir.path() + "/logs'",
                 {"empty: no host files", "2019-10-07_12-49-01"});
  ExpectRejected("--run nope '" + dir.path() + "/logs'", {"no run named 'nope'"});
  ExpectRejected("'" + dir.path() + "/nothing'", {"nothing: no profile runs"});
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

TEST(ProfileLogDir, ViewerOpensALogDirectoryAndAgreesWithAnalyze) {
  if (!ViewerSkipReason().empty()) GTEST_SKIP() << ViewerSkipReason();
  TempDir dir;
  sim::ScenarioParams p;
  p.scenario = "hot-ps";
  p.steps = 3;
  p.format = sim::TraceFormat::kXPlane;
  ASSERT_TRUE(sim::WriteScenario(p, dir.File("logs")).ok());
  RunResult a = RunTfdiag("analyze -f json '" + dir.File("logs") + "'");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const std::string dump = dir.File("view.json");
  RunResult v = RunView("--dump-view '" + dump + "' '" + dir.File("logs") + "'");
  ASSERT_EQ(v.exit_code, 0) << v.err;
  const std::string view = ReadFile(dump);
  // The ops the viewer loaded are the ops analyze counted over all tasks.
  const size_t at = view.find("\"ops\":");
  ASSERT_NE(at, std::string::npos) << view.substr(0, 200);
  const long long view_ops = std::atoll(view.c_str() + at + 6);
  long long analyze_ops = 0;
  for (size_t k = a.out.find("\"ops\":"); k != std::string::npos;
       k = a.out.find("\"ops\":", k + 1)) {
    const size_t row = a.out.rfind("\"task\":", k);
    if (row != std::string::npos && k - row < 200) analyze_ops += std::atoll(a.out.c_str() + k + 6);
  }
  EXPECT_GT(view_ops, 0);
  EXPECT_EQ(view_ops, analyze_ops);
  EXPECT_NE(a.out.find("\"hot-ps\""), std::string::npos);
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

// Every reader on every prefix and on byte-flipped copies of small simulated files: a status of
// ok or kInvalidInput, never a crash; what is read is consistent. (The fuzz target,
// fuzz/fuzz_profile.cc, does this on arbitrary bytes under sanitizers.)
TEST(ProfileBadInput, ReadersSurviveTruncationAndFlippedBytes) {
  TempDir dir;
  sim::ScenarioParams p;
  p.scenario = "balanced";
  p.steps = 1;
  p.ps = 1;
  p.workers = 1;
  p.format = sim::TraceFormat::kXPlane;
  ASSERT_TRUE(sim::WriteScenario(p, dir.File("s.xplane.pb")).ok());
  p.format = sim::TraceFormat::kRunMetadata;
  ASSERT_TRUE(sim::WriteScenario(p, dir.File("s.pb")).ok());
  uint64_t rng = 12345;
  auto next = [&rng]() { return rng = rng * 6364136223846793005ULL + 1442695040888963407ULL; };
  int ok = 0, invalid = 0;
  for (const char* name : {"s.xplane.pb", "s.pb"}) {
    const std::string bytes = ReadFile(dir.File(name));
    std::vector<std::string> inputs;
    for (size_t n = 0; n < bytes.size(); n += 1 + bytes.size() / 150) {
      inputs.push_back(bytes.substr(0, n));
    }
    for (int k = 0; k < 150; ++k) {
      std::string b = bytes;
      for (int j = 0; j < 3; ++j) b[next() % b.size()] = static_cast<char>(next() >> 56);
      inputs.push_back(b);
    }
    for (const std::string& in : inputs) {
      WriteFile(dir.File("in"), in);
      for (int reader = 0; reader < 3; ++reader) {
        CaptureBuilder b;
        Status s = reader == 0   ? ReadXSpace(dir.File("in"), &b)
                   : reader == 1 ? ReadProfilerTrace(dir.File("in"), &b)
                                 : ReadRunMetadata(dir.File("in"), ProfileFormat::kRunMetadata, &b);
        if (!s.ok()) {
          ASSERT_EQ(s.code(), StatusCode::kInvalidInput) << s.message();
          ASSERT_NE(s.message().find("byte "), std::string::npos) << s.message();
          ++invalid;
          continue;
        }
        ++ok;
        Capture c = b.Finish();
        for (const OpRow& op : c.ops.Rows()) ASSERT_LT(op.device, c.devices.size());
        for (const StepRow& st : c.steps) ASSERT_LE(st.start, st.end);
      }
    }
  }
  EXPECT_GT(invalid, 100);
  EXPECT_GT(ok, 10);
}

}  // namespace
}  // namespace tfdiag::test
