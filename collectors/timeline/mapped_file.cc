#include "collectors/timeline/mapped_file.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tfdiag {

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
}

bool MappedFile::Map(int fd) {
  struct stat st;
  if (data_ != nullptr || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    return false;
  }
  void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return false;
  data_ = static_cast<const char*>(p);
  size_ = static_cast<size_t>(st.st_size);
  return true;
}

void MappedFile::Release(size_t begin, size_t end) const {
  static const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  if (end > size_) end = size_;
  const size_t first = begin / kPage * kPage;
  const size_t last = end / kPage * kPage;
  if (data_ == nullptr || first >= last) return;
  ::madvise(const_cast<char*>(data_) + first, last - first, MADV_DONTNEED);
}

}  // namespace tfdiag
