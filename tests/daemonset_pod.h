// The agent container of deploy/daemonset.yaml as a container runtime would be asked to run it:
// image, command and args with Kubernetes' $(VAR) expansion, env with the downward API's
// values supplied by the test, hostPath volume mounts, hostPID/hostNetwork, privileged,
// readOnlyRootFilesystem, added capabilities, the liveness probe's path. Read by
// tests/image_test.cc, which then does by hand what the runtime would.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tfdiag::test {

// A hostPath volume of the container at its mountPath.
struct VolumeMount {
  std::string host_path, mount_path;
  bool read_only = false;
};

// The agent container of deploy/daemonset.yaml, as a container runtime would be asked to run it.
struct AgentPod {
  std::string image;
  std::vector<std::string> argv;  // command + args, $(VAR) references expanded
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<VolumeMount> mounts;
  bool host_pid = false, host_network = false, privileged = false, read_only_root = false;
  std::vector<std::string> cap_add;  // securityContext.capabilities.add (with drop: [ALL])
  std::string liveness_path;
};

// Reads the DaemonSet's first container; `fields` stands in for the downward API (fieldPath ->
// value). Errors name what the test cannot stand in for (a fieldRef without a test value, a
// volume that is not a hostPath).
StatusOr<AgentPod> ReadDaemonSet(const std::string& file,
                                 const std::map<std::string, std::string>& fields);

}  // namespace tfdiag::test
