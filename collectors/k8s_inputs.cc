#include "collectors/k8s_inputs.h"

#include <fstream>
#include <string_view>

#include "collectors/k8s/k8s_reader.h"
#include "collectors/xplane/log_dir.h"
#include "core/bundle.h"

namespace tfdiag {

StatusOr<SplitInputs> SplitK8sInputs(const std::vector<std::string>& paths,
                                     const std::vector<std::string>& names) {
  SplitInputs out;
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    const std::string& name = i < names.size() ? names[i] : path;
    char head[256] = {0};
    std::ifstream probe(path, std::ios::binary);
    probe.read(head, sizeof head);
    if (!IsDirectory(path) &&
        !LooksLikeBundle(std::string_view(head, static_cast<size_t>(probe.gcount()))) &&
        IsK8sFile(path)) {
      TFDIAG_RETURN_IF_ERROR(ReadK8sFile(path, &out.k8s, name));
      out.have_k8s = true;
    } else {
      out.traces.push_back(path);
      out.names.push_back(name);
    }
  }
  return out;
}

}  // namespace tfdiag
