#include "core/op_kinds.h"

namespace tfdiag {

bool IsInputProducerOpType(std::string_view t) {
  size_t n = t.size();
  while (n > 0 && t[n - 1] >= '0' && t[n - 1] <= '9') --n;
  if (n < t.size()) {  // "...DatasetV2"
    if (n == 0 || t[n - 1] != 'V') return false;
    --n;
  }
  const std::string_view base = t.substr(0, n);
  return base.size() > 7 && base.substr(base.size() - 7) == "Dataset";
}

}  // namespace tfdiag
