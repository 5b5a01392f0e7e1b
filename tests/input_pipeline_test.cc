// The tf.data pipeline of TF2 profiles (Capture::input_iterators, analyzers/input_pipeline.h):
// both decoders of a capture (the XSpace reader and the trace JSON reader) read the same stages
// from the real Keras profiles of ../shared/traces, the same set XProf's own input_pipeline.pb
// lists beside them (read here as bytes, not through tfdiag), and input-bound's fix says what the
// pipeline lacks: a prefetch moved last and a parallel map (ds.prefetch(1).map(f)), a prefetch
// added (a parallel map alone), or nothing more to prefetch (a generator behind a prefetch).
#include "analyzers/input_pipeline.h"

#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "collectors/xplane/tf2_iterators.h"
#include "core/capture_builder.h"
#include "rules/rule_set.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

constexpr char kKeras[] =
    "mholmeslinder_3baf8a2_scalars3_20201221-164239/train/plugins/profile/2020_12_21_16_42_56/"
    "cfb73342568d";
constexpr char kParallelMap[] =
    "mholmeslinder_9a8988e_scalars8_logdir/train/plugins/profile/2020_12_22_03_42_42/"
    "d1792a5a2842";

std::set<std::string> Paths(const Capture& c) {
  std::set<std::string> out;
  for (const InputIteratorRow& r : c.input_iterators) out.insert(std::string(c.Str(r.path)));
  return out;
}

// The "Iterator::..." strings of a protobuf file, scanned as bytes (XProf's input_pipeline.pb
// lists each iterator of its input-op details by name).
std::set<std::string> IteratorNamesInFile(const std::string& path) {
  const std::string b = ReadFile(path);
  std::set<std::string> out;
  for (size_t at = b.find("Iterator::"); at != std::string::npos;
       at = b.find("Iterator::", at + 1)) {
    size_t end = at;
    while (end < b.size() && (std::isalnum(static_cast<unsigned char>(b[end])) || b[end] == ':' ||
                              b[end] == '_' || b[end] == '[' || b[end] == ']')) {
      ++end;
    }
    out.insert(b.substr(at, end - at));
  }
  return out;
}

uint32_t OnlyTask(const Capture& c) {
  EXPECT_EQ(c.tasks.size(), 1u);
  return 0;
}

TEST(InputPipeline, BothDecodersReadTheStagesXprofLists) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  const std::string base = SharedTrace(kKeras);
  const Capture x = LoadOrDie({base + ".xplane.pb"});
  const Capture j = LoadOrDie({base + ".trace.json.gz"});
  const std::set<std::string> xprof = IteratorNamesInFile(base + ".input_pipeline.pb");
  ASSERT_FALSE(xprof.empty()) << "XProf's input_pipeline.pb lists no iterator";
  EXPECT_EQ(Paths(x), xprof);
  EXPECT_EQ(Paths(j), xprof);
  // Paired by path text (rows are ordered by interned id, which each decoder assigns its way).
  const auto by_path = [](const Capture& c) {
    std::map<std::string, std::pair<int64_t, TimeNs>> m;
    for (const InputIteratorRow& r : c.input_iterators) {
      m[std::string(c.Str(r.path))] = {r.count, r.total_ns};
    }
    return m;
  };
  const auto xm = by_path(x), jm = by_path(j);
  ASSERT_EQ(xm.size(), jm.size());
  for (const auto& [path, v] : xm) {
    ASSERT_EQ(jm.count(path), 1u) << path;
    EXPECT_EQ(v.first, jm.at(path).first) << path;
    // The JSON's microseconds with three decimals against the XSpace's picoseconds; the stages
    // are nested (Model 2339235 us > ... > Prefetch 2339029 us), so a wrong pairing is off by
    // far more.
    EXPECT_NEAR(double(v.second), double(jm.at(path).second), 2) << path;
  }
}

TEST(InputPipeline, ReadsTheChainOfAPrefetchFollowedByASequentialMap) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  const Capture c = LoadOrDie({SharedTrace(kKeras) + ".xplane.pb"});
  const InputPipeline p = InputPipelineOfTask(c, OnlyTask(c));
  EXPECT_EQ(p.chain, (std::vector<std::string>{"Map", "Prefetch"}));
  EXPECT_TRUE(p.prefetch);
  EXPECT_FALSE(p.prefetch_last);
  EXPECT_EQ(p.after_prefetch, std::vector<std::string>{"Map"});
  EXPECT_EQ(p.sequential, std::vector<std::string>{"Map"});
  EXPECT_EQ(p.get_next, 4) << "one GetNext of each of the four traced iterators";
}

TEST(InputPipeline, InputBoundSaysToMovePrefetchLastAndParallelizeTheMap) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  const AnalysisResult r = Analyze(LoadOrDie({SharedTrace(kKeras) + ".trace.json.gz"}), *rules);
  const Finding* f = nullptr;
  for (const Finding& x : r.findings) f = x.rule_id == "input-bound" ? &x : f;
  ASSERT_NE(f, nullptr) << "XProf counts 62% of this step as input";
  EXPECT_NE(f->fix.find("Map <- Prefetch"), std::string::npos) << f->fix;
  EXPECT_NE(f->fix.find("move .prefetch(tf.data.AUTOTUNE) to the end"), std::string::npos)
      << f->fix;
  EXPECT_NE(f->fix.find("Map runs one element at a time"), std::string::npos) << f->fix;
  EXPECT_EQ(f->fix.find("It has no prefetch"), std::string::npos) << f->fix;
}

TEST(InputPipeline, AParallelMapWithoutPrefetchIsToldToAddOne) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  const Capture c = LoadOrDie({SharedTrace(kParallelMap) + ".xplane.pb"});
  EXPECT_EQ(Paths(c), IteratorNamesInFile(SharedTrace(kParallelMap) + ".input_pipeline.pb"));
  const InputPipeline p = InputPipelineOfTask(c, OnlyTask(c));
  EXPECT_EQ(p.chain, std::vector<std::string>{"ParallelMapV2"});
  EXPECT_FALSE(p.prefetch);
  EXPECT_TRUE(p.sequential.empty()) << "ParallelMapV2 has num_parallel_calls";
  const std::string advice = InputPipelineAdvice(p);
  EXPECT_NE(advice.find("It has no prefetch"), std::string::npos) << advice;
  EXPECT_EQ(advice.find("one element at a time"), std::string::npos) << advice;
}

// Row-built: a generator behind a prefetch the step reads (the tfprof GPU capture's pipeline),
// FlatMap's index cut, option wrappers left out; no iterator rows, no advice.
TEST(InputPipeline, APrefetchAlreadyLastIsNotAdvisedAgain) {
  CaptureBuilder b;
  const uint32_t task = b.AddTask("worker", 0, 0);
  for (const char* path :
       {"Iterator::Model", "Iterator::Model::MaxIntraOpParallelism",
        "Iterator::Model::MaxIntraOpParallelism::Prefetch",
        "Iterator::Model::MaxIntraOpParallelism::Prefetch::FlatMap",
        "Iterator::Model::MaxIntraOpParallelism::Prefetch::FlatMap[0]::Generator"}) {
    b.AddInputIterator({task, b.Intern(path), 1000, 3, 300});
  }
  const Capture c = b.Finish();
  const InputPipeline p = InputPipelineOfTask(c, 0);
  EXPECT_EQ(p.chain, (std::vector<std::string>{"Prefetch", "FlatMap", "Generator"}));
  EXPECT_TRUE(p.prefetch_last);
  EXPECT_TRUE(p.after_prefetch.empty());
  EXPECT_EQ(p.get_next, 15);
  const std::string advice = InputPipelineAdvice(p);
  EXPECT_NE(advice.find("already ends with a prefetch"), std::string::npos) << advice;

  CaptureBuilder none;
  none.AddTask("worker", 0, 0);
  const Capture e = none.Finish();
  EXPECT_TRUE(InputPipelineOfTask(e, 0).chain.empty());
  EXPECT_EQ(InputPipelineAdvice(InputPipelineOfTask(e, 0)), "");
}

// A hostile file cannot grow the rows: past kMaxStages distinct stages per task, events drop.
TEST(InputPipeline, StagesPerTaskAreBounded) {
  CaptureBuilder b;
  Tf2InputIterators it;
  for (size_t i = 0; i < Tf2InputIterators::kMaxStages; ++i) {
    EXPECT_TRUE(it.Add(7, b.Intern("Iterator::Map" + std::to_string(i)), 0, 1));
  }
  EXPECT_FALSE(it.Add(7, b.Intern("Iterator::Extra"), 0, 1));
  EXPECT_TRUE(it.Add(7, b.Intern("Iterator::Map0"), 5, 1)) << "a stage already kept is summed";
  EXPECT_TRUE(it.Add(8, b.Intern("Iterator::Extra"), 0, 1)) << "another task has its own bound";
}

}  // namespace
}  // namespace tfdiag::test
