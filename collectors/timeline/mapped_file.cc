#include "collectors/timeline/mapped_file.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace tfdiag {

namespace {

// The mappings alive, for the SIGBUS handler: where each lies and its file's name.
// 64: the pool of many files (timeline_pool.h) keeps a file mapped from its first chunk claimed
// until it is merged, up to TimelinePool::kAheadBytes of files ahead (a few dozen small ones).
constexpr int kSlots = 64;
struct Active {
  std::atomic<const char*> begin{nullptr};
  std::atomic<size_t> size{0};
  char name[480] = {};
};
Active g_active[kSlots];

void Put(const char* s, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

// Async-signal-safe: a fault inside a mapping (the file shrank, or the disk or network file
// system failed) ends the run with a message and exit code 2 instead of a crash.
void OnSigbus(int sig, siginfo_t* info, void*) {
  const char* addr = static_cast<const char*>(info->si_addr);
  for (Active& a : g_active) {
    const char* b = a.begin.load();
    if (b == nullptr || addr < b || addr >= b + a.size.load()) continue;
    char digits[24];
    int n = 0;
    for (size_t v = static_cast<size_t>(addr - b); n == 0 || v > 0; v /= 10) {
      digits[n++] = static_cast<char>('0' + v % 10);
    }
    Put("tfdiag: error: ", 15);
    Put(a.name, std::strlen(a.name));
    Put(": byte ", 7);
    while (n > 0) Put(&digits[--n], 1);
    static const char kWhat[] =
        ": the file shrank or could not be read while it was being read (SIGBUS); if it is "
        "still being written, wait for it or analyze a copy\n";
    Put(kWhat, sizeof kWhat - 1);
    ::_exit(2);
  }
  // Not ours: the default action, as if there were no handler.
  ::signal(sig, SIG_DFL);
}

void InstallHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = OnSigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, nullptr);
  });
}

}  // namespace

MappedFile::~MappedFile() {
  if (data_ == nullptr) return;
  if (slot_ >= 0) {
    g_active[slot_].size.store(0);
    g_active[slot_].begin.store(nullptr);
  }
  ::munmap(const_cast<char*>(data_), size_);
}

bool MappedFile::Map(int fd, const std::string& name) {
  struct stat st;
  if (data_ != nullptr || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    return false;
  }
  void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return false;
  data_ = static_cast<const char*>(p);
  size_ = static_cast<size_t>(st.st_size);
  // A page cache that holds the file in 2 MiB folios (ext4 large folios, after a sequential read)
  // may map a whole folio per fault through one PMD: up to 2 MiB resident ahead of the parser on
  // every thread, which no release behind it undoes. The 200 MB compact file's peak RSS went from
  // 48,450-48,800 to 47,700-48,400 KiB with this (its target: 48,922), at no cost in time.
  ::madvise(p, size_, MADV_NOHUGEPAGE);
  // Register the mapping for the SIGBUS handler (a free slot claimed by compare-exchange).
  InstallHandler();
  for (int i = 0; i < kSlots && slot_ < 0; ++i) {
    const char* expected = nullptr;
    if (g_active[i].begin.compare_exchange_strong(expected, data_)) {
      std::strncpy(g_active[i].name, name.empty() ? "input" : name.c_str(),
                   sizeof g_active[i].name - 1);
      g_active[i].name[sizeof g_active[i].name - 1] = '\0';
      g_active[i].size.store(size_);
      slot_ = i;
    }
  }
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
