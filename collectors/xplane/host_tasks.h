// Which TF task a profiled host is. A TF2 profile run holds one file per host, named by the
// host: `<host>.xplane.pb` (tf.profiler.experimental.start on that host: its hostname) or
// `<host>_<port>.xplane.pb` (tf.profiler.experimental.client.trace of several addresses: the
// address with ':' written '_'). The file says nothing about jobs, so a host is mapped
//   1. by the cluster spec (`--tf-config FILE|JSON`): the task whose address is host:port, or
//      whose host part is the host when only one task runs there;
//   2. by a Kubeflow TFJob pod name in the host ("<job>-ps-1", "<job>-worker-0", ...);
//   3. else to "localhost:<n>", n counting the unmapped hosts of the load.
// Each mapping says which rule made it (HostTask::source), for the notes a user sees.
// Thread-safety: HostMapper is not thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "collectors/discovery/tf_config.h"

namespace tfdiag {

struct HostTask {
  std::string job = "localhost";
  int index = 0;
  std::string source;  // "TF_CONFIG", "pod name", "none"
};

// The host part of a profile file's name: "10.0.0.5_2222" from
// ".../plugins/profile/run/10.0.0.5_2222.xplane.pb"; "" for other names.
std::string HostOfProfileFile(std::string_view path);

// The cluster of `--tf-config FILE|JSON`: JSON text when it starts with '{', else a file holding
// TF_CONFIG JSON. Errors: kIo (file), kInvalidInput naming the field (ParseTfConfig) or "no
// cluster in it".
StatusOr<ClusterSpec> ClusterFromTfConfigArg(const std::string& arg);

class HostMapper {
 public:
  explicit HostMapper(ClusterSpec cluster = {}) : cluster_(std::move(cluster)) {}
  // The task of `host` (HostOfProfileFile, possibly ""), by the rules above.
  HostTask Map(std::string_view host);

 private:
  ClusterSpec cluster_;
  int unmapped_ = 0;
};

}  // namespace tfdiag
