#include "core/populate.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace tfdiag {

void PopulateForWrite(void* begin, void* end) {
  static const uintptr_t kPage = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t b = (reinterpret_cast<uintptr_t>(begin) + kPage - 1) / kPage * kPage;
  const uintptr_t e = reinterpret_cast<uintptr_t>(end) / kPage * kPage;
  if (e <= b || e - b < kPopulateMinBytes) return;
  // Errors (EINVAL before Linux 5.14, ENOMEM, EFAULT) leave the pages to fault in on first touch.
  ::madvise(reinterpret_cast<void*>(b), e - b, MADV_POPULATE_WRITE);
}

}  // namespace tfdiag
