// Inputs several tests build the same way (issue 39: the set-up repeated across
// input_judgement_test, report_wording_test and k8s_policy_test): a TFJob manifest of a few
// replica types, and a bundle of sampled processes as `tfdiag attach` or a cluster bundle writes
// one.
#pragma once

#include <string>
#include <vector>

#include "core/capture.h"

namespace tfdiag::test {

// One replica type of a TFJob: its container is "- name: tensorflow" followed by `container`,
// lines of YAML at the container's indentation (12 spaces), each ending in '\n'.
struct ReplicaSpec {
  std::string type;  // "PS", "Worker"
  int replicas = 1;
  std::string container;
};

// A TFJob manifest (apiVersion kubeflow.org/v1) named `name`, block style, its metadata on two
// lines: "kind:" is line 2, the first replica type's container starts on line 12. `kind` other
// than "TFJob" writes a misspelt kind.
std::string TfJobYaml(const std::string& name, const std::vector<ReplicaSpec>& replicas,
                      const std::string& kind = "TFJob");

// A process sampled `samples` times, `interval_s` apart (SampledCapture), from one interval in.
struct SampledProcess {
  std::string job;  // "ps", "worker"
  int index = 0;
  int pid = 0;
  std::string node;      // "" unknown (a bundle of one host)
  std::string pod;       // the pod it ran in (its /etc/hostname), "" unknown
  double cpu_limit = 0;  // CPUs of CFS quota (quota over a 100 ms period); 0 none
  int host_cpus = 8;
  int threads = 4;
  int runnable = 1;
  double cpus_used = 1;          // CPUs used (CPU time per second)
  int throttled_per_sample = 0;  // throttled periods added per sample, of 10
};

// A SampledProcess of task `job`:`index` with `pid`, the other fields as above.
SampledProcess Sampled(const std::string& job, int index, int pid);

// A Capture of those processes (one task each, in order), sampled every `interval_s` seconds;
// meta.host `host`.
Capture SampledCapture(const std::vector<SampledProcess>& processes, int samples,
                       const std::string& host = "node-1", int interval_s = 1);

}  // namespace tfdiag::test
