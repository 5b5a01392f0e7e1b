#include "tests/fixtures.h"

#include <fmt/format.h>

#include "core/capture_builder.h"

namespace tfdiag::test {

std::string TfJobYaml(const std::string& name, const std::vector<ReplicaSpec>& replicas,
                      const std::string& kind) {
  std::string y = fmt::format(
      "apiVersion: kubeflow.org/v1\nkind: {}\nmetadata:\n  name: {}\nspec:\n  tfReplicaSpecs:\n",
      kind, name);
  for (const ReplicaSpec& r : replicas) {
    y += fmt::format(
        "    {}:\n      replicas: {}\n      template:\n        spec:\n          containers:\n"
        "          - name: tensorflow\n{}",
        r.type, r.replicas, r.container);
  }
  return y;
}

SampledProcess Sampled(const std::string& job, int index, int pid) {
  SampledProcess p;
  p.job = job, p.index = index, p.pid = pid;
  return p;
}

Capture SampledCapture(const std::vector<SampledProcess>& processes, int samples,
                       const std::string& host, int interval_s) {
  const int64_t interval_ns = 1'000'000'000LL * interval_s;
  CaptureBuilder b;
  b.meta().host = host;
  b.meta().interval_ms = 1000 * interval_s;
  b.meta().window_start = interval_ns;
  b.meta().window_end = interval_ns * samples;
  for (const SampledProcess& sp : processes) {
    ProcessRow p;
    p.task = b.AddTask(sp.job, 0, sp.index);
    p.pid = sp.pid;
    if (!sp.node.empty()) p.node = b.Intern(sp.node);
    if (!sp.pod.empty()) p.pod = b.Intern(sp.pod);
    if (sp.cpu_limit > 0) {
      p.cpu_limit = sp.cpu_limit;
      p.quota_us = static_cast<int64_t>(sp.cpu_limit * 100000);
      p.period_us = 100000;
    }
    p.cpuset_cpus = sp.host_cpus;
    p.host_cpus = sp.host_cpus;
    const uint32_t proc = b.AddProcess(p);
    for (int i = 0; i < samples; ++i) {
      ProcessSampleRow s;
      s.ts = interval_ns * (i + 1);
      s.process = proc;
      s.threads = sp.threads;
      s.runnable = sp.runnable;
      s.cpu_ns = static_cast<int64_t>(sp.cpus_used * static_cast<double>(interval_ns)) * i;
      s.nr_periods = 10 * i;
      s.nr_throttled = sp.throttled_per_sample * i;
      b.AddProcessSample(s);
    }
  }
  return b.Finish();
}

}  // namespace tfdiag::test
